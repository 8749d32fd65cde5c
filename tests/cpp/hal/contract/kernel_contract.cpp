// The kernel contract (cpp/hal/module.hpp, Queue::append_launch, contract §12): modules from
// the SPIR-V kernels of tests/kernels, kernels by name, argument and group size rules, and
// launches as commands in queue order with events and timestamps. A device that builds no
// modules here (zehal built without the compiler) skips with the reason.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <thread>

#include "contract_fixture.hpp"

namespace zehal::test::contract {
namespace {

constexpr uint32_t kCount = 1024;  // elements of the launches' buffers

// Sets pointer argument `i` of `k`.
ze_result_t set_pointer(hal::Kernel& k, uint32_t i, const void* p) { return k.set_argument(i, sizeof p, &p); }

#define ZEHAL_SKIP_WITHOUT_MODULES()                             \
    do {                                                         \
        if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_; \
    } while (0)

TEST_P(KernelContract, ModulesListTheirKernelsAndRefuseUnknownNames) {
    auto m = module("buffers");
    ZEHAL_SKIP_WITHOUT_MODULES();
    ASSERT_TRUE(m);
    const std::vector<std::string> names = m->kernel_names();
    EXPECT_NE(std::find(names.begin(), names.end(), "copy_uint"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "add_int_constant"), names.end());
    EXPECT_FALSE(m->native_binary().empty());
    hal::KernelRef k;
    EXPECT_EQ(m->create_kernel("no_such_kernel", &k), ZE_RESULT_ERROR_INVALID_KERNEL_NAME);
    ASSERT_EQ(m->create_kernel("add_int_constant", &k), ZE_RESULT_SUCCESS);
    EXPECT_EQ(k->properties().name, "add_int_constant");
    EXPECT_EQ(k->properties().args.size(), 3u);
    EXPECT_EQ(k->group_size(), (std::array<uint32_t, 3>{1, 1, 1}));
}

TEST_P(KernelContract, BadBinariesAreRefusedWithAReason) {
    hal::ModuleRef m;
    std::string log;
    EXPECT_EQ(device_->create_module(hal::ModuleFormat::spirv, {}, "", &m, &log), ZE_RESULT_ERROR_INVALID_SIZE);
    const std::vector<uint8_t> junk = random_bytes(256, 7);
    const ze_result_t r = device_->create_module(hal::ModuleFormat::spirv, junk, "", &m, &log);
    if (r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << log;
    EXPECT_EQ(r, ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
    EXPECT_FALSE(log.empty());
    EXPECT_FALSE(m);
    // A truncated module is refused the same way.
    std::vector<uint8_t> cut = spirv_of("buffers");
    cut.resize(cut.size() / 2);
    log.clear();
    EXPECT_EQ(device_->create_module(hal::ModuleFormat::spirv, cut, "", &m, &log),
              ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
    EXPECT_FALSE(log.empty());
}

TEST_P(KernelContract, ArgumentIndexAndSizeAreChecked) {
    auto m = module("buffers");
    ZEHAL_SKIP_WITHOUT_MODULES();
    auto k = kernel(m, "add_int_constant");  // (global int*, global int*, int)
    ASSERT_TRUE(k);
    const int value = 3;
    const uint64_t wide = 3;
    EXPECT_EQ(k->set_argument(3, sizeof value, &value), ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX);
    // Sizes are checked where the backend knows the signature; a level_zero kernel's sizes are
    // its driver's to check (docs/level_zero.md), and drivers take a wider value's low bytes.
    if (k->properties().args[2].size != 0) {
        EXPECT_EQ(k->set_argument(2, sizeof wide, &wide), ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
        EXPECT_EQ(k->set_argument(0, 4, &value), ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
    }
    EXPECT_EQ(k->set_argument(2, sizeof value, &value), ZE_RESULT_SUCCESS);
    EXPECT_EQ(set_pointer(*k, 0, nullptr), ZE_RESULT_SUCCESS);
}

TEST_P(KernelContract, GroupSizesAreHeldToTheDeviceAndTheKernel) {
    auto m = module("attributes");
    ZEHAL_SKIP_WITHOUT_MODULES();
    auto k = kernel(m, "empty");
    auto reqd = kernel(m, "reqd_size");
    ASSERT_TRUE(k && reqd);
    const hal::DeviceProperties& p = device_->properties();
    ASSERT_GT(p.max_group_size, 0u);
    EXPECT_EQ(k->set_group_size(0, 1, 1), ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
    EXPECT_EQ(k->set_group_size(p.max_group_dims[0] + 1, 1, 1), ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
    EXPECT_EQ(k->set_group_size(p.max_group_size, 2, 1), ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
    EXPECT_EQ(k->set_group_size(4, 2, 1), ZE_RESULT_SUCCESS);
    EXPECT_EQ(k->group_size(), (std::array<uint32_t, 3>{4, 2, 1}));

    EXPECT_EQ(reqd->properties().required_group_size, (std::array<uint32_t, 3>{8, 4, 1}));
    EXPECT_EQ(reqd->group_size(), (std::array<uint32_t, 3>{8, 4, 1}));
    EXPECT_EQ(reqd->set_group_size(4, 4, 1), ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
    EXPECT_EQ(reqd->set_group_size(8, 4, 1), ZE_RESULT_SUCCESS);

    std::array<uint32_t, 3> s{};
    EXPECT_EQ(k->suggest_group_size({0, 1, 1}, &s), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(k->suggest_group_size({96, 10, 1}, &s), ZE_RESULT_SUCCESS);
    EXPECT_EQ(96 % s[0], 0u);
    EXPECT_EQ(10 % s[1], 0u);
    EXPECT_EQ(s[2], 1u);
    EXPECT_LE(uint64_t{s[0]} * s[1] * s[2], p.max_group_size);
}

TEST_P(KernelContract, LaunchesNeedEveryArgumentAndAGroupCount) {
    auto m = module("buffers");
    ZEHAL_SKIP_WITHOUT_MODULES();
    auto k = kernel(m, "fill_uint");  // (global uint*, uint)
    ASSERT_TRUE(k);
    Allocation dst(device_, hal::MemoryKind::device, kCount * 4);
    auto q = queue(hal::kComputeOrdinal);
    ASSERT_EQ(set_pointer(*k, 0, dst.ptr()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->append_launch(*k, {kCount, 1, 1}, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    const uint32_t value = 5;
    ASSERT_EQ(k->set_argument(1, sizeof value, &value), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->append_launch(*k, {0, 1, 1}, nullptr, {}), ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
    EXPECT_EQ(q->append_launch(*k, {kCount, 1, 1}, nullptr, {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

TEST_P(KernelContract, PointerArgumentsAreOperands) {
    auto m = module("buffers");
    ZEHAL_SKIP_WITHOUT_MODULES();
    auto k = kernel(m, "fill_range_ulong");  // (global ulong*, uint count, ulong value)
    ASSERT_TRUE(k);
    auto q = queue(hal::kComputeOrdinal);
    const uint32_t none = 0;
    const uint64_t value = 1;
    ASSERT_EQ(k->set_argument(1, sizeof none, &none), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_argument(2, sizeof value, &value), ZE_RESULT_SUCCESS);
    // Null is a valid pointer argument (the kernel writes nothing through it here).
    ASSERT_EQ(set_pointer(*k, 0, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->append_launch(*k, {1, 1, 1}, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    // Memory of another device is memory this device's kernels may use only where the
    // device accesses its peer's memory (contract §2.2; two sim devices do).
    hal::DeviceRef other = other_device();
    ASSERT_TRUE(other);
    void* foreign = nullptr;
    ASSERT_EQ(other->allocate(hal::MemoryKind::device, 4096, 0, 0, 0, &foreign), ZE_RESULT_SUCCESS);
    ASSERT_EQ(set_pointer(*k, 0, foreign), ZE_RESULT_SUCCESS);
    // (A level_zero device's driver, a process image of its own, cannot know this process's
    // sim memory: to it, it is system memory, the caller's to keep valid.)
    const ze_result_t launched = q->append_launch(*k, {1, 1, 1}, nullptr, {});
    if (device_->backend_name() != "level_zero") {
        EXPECT_EQ(launched, device_->can_access_peer(*other) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(other->free(foreign), ZE_RESULT_SUCCESS);
    // (A freed pointer is system memory, the caller's error, as for copies: not tested here.
    // What the launch itself uses is held: sim_kernel_test frees it under a queued launch.)
}

// Indirect launches read their group counts (and kernel count) in queue order, when they
// run: a copy into the counts queued before the launch decides how many groups run. CUDA
// cannot read them in stream order: UNSUPPORTED_FEATURE there.
TEST_P(KernelContract, IndirectLaunchesReadTheirCountsInQueueOrder) {
    auto m = module("buffers");
    ZEHAL_SKIP_WITHOUT_MODULES();
    auto a = kernel(m, "fill_uint"), b = kernel(m, "fill_uint");
    ASSERT_TRUE(a && b);
    Allocation host(device_, hal::MemoryKind::host, 2 * kCount * 4);
    Allocation dst(device_, hal::MemoryKind::device, 2 * kCount * 4), counts(device_, hal::MemoryKind::device, 64);
    const uint32_t one = 1, two = 2;
    ASSERT_EQ(set_pointer(*a, 0, dst.ptr()), ZE_RESULT_SUCCESS);
    ASSERT_EQ(a->set_argument(1, sizeof one, &one), ZE_RESULT_SUCCESS);
    ASSERT_EQ(set_pointer(*b, 0, dst.as<uint32_t>() + kCount), ZE_RESULT_SUCCESS);
    ASSERT_EQ(b->set_argument(1, sizeof two, &two), ZE_RESULT_SUCCESS);
    ASSERT_EQ(a->set_group_size(16, 1, 1), ZE_RESULT_SUCCESS);
    ASSERT_EQ(b->set_group_size(16, 1, 1), ZE_RESULT_SUCCESS);
    // Group counts 3 and 5, then the kernel count 2, staged in host memory.
    const uint32_t staged[7] = {3, 1, 1, 5, 1, 1, 2};
    std::memset(host.ptr(), 0, 2 * kCount * 4);
    std::memcpy(host.ptr(), staged, sizeof staged);
    auto q = queue(hal::kComputeOrdinal);
    ASSERT_EQ(q->append_copy(dst.ptr(), host.ptr(), 2 * kCount * 4, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(counts.ptr(), host.ptr(), sizeof staged, nullptr, {}), ZE_RESULT_SUCCESS);
    const hal::KernelRef kernels[] = {a, b};
    const auto* groups = counts.as<hal::GroupCount>();
    const auto* count = counts.as<uint32_t>() + 6;
    const ze_result_t launched = q->append_launch_indirect(kernels, groups, count, nullptr, {});
    // Refused where the backend cannot read the counts in queue order (CUDA), and on a
    // level_zero device whose driver refuses them (zehal's own driver over a CUDA device).
    if (!device_->properties().indirect_launches ||
        (launched == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE && std::string(GetParam().name) == "level_zero")) {
        EXPECT_EQ(launched, ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        return;
    }
    ASSERT_EQ(launched, ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(host.ptr(), dst.ptr(), 2 * kCount * 4, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    const uint32_t* out = host.as<uint32_t>();
    for (uint32_t i = 0; i < kCount; ++i) {
        ASSERT_EQ(out[i], i < 3 * 16 ? one : 0u) << i;
        ASSERT_EQ(out[kCount + i], i < 5 * 16 ? two : 0u) << i;
    }
}

TEST_P(KernelContract, LaunchesRunInQueueOrderWithCopiesAndTimestamps) {
    auto m = module("buffers");
    ZEHAL_SKIP_WITHOUT_MODULES();
    auto k = kernel(m, "add_int_constant");
    ASSERT_TRUE(k);
    const bool mapped = device_->properties().timestamp_flags & hal::kTimestampSynchronized;
    EventSet ev(device_, 3,
                hal::kPoolHostVisible | (mapped ? hal::kPoolKernelMappedTimestamp : hal::kPoolKernelTimestamp));
    Allocation host(device_, hal::MemoryKind::host, kCount * 4);
    Allocation in(device_, hal::MemoryKind::device, kCount * 4), out(device_, hal::MemoryKind::device, kCount * 4);
    for (uint32_t i = 0; i < kCount; ++i) host.as<int>()[i] = static_cast<int>(i);
    const int add = 100;
    ASSERT_EQ(set_pointer(*k, 0, in.ptr()), ZE_RESULT_SUCCESS);
    ASSERT_EQ(set_pointer(*k, 1, out.ptr()), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_argument(2, sizeof add, &add), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_group_size(64, 1, 1), ZE_RESULT_SUCCESS);
    auto q = queue(hal::kComputeOrdinal);
    // Copy in, launch, copy out: each starts after the one before it.
    ASSERT_EQ(q->append_copy(in.ptr(), host.ptr(), kCount * 4, ev.events[0], {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_launch(*k, {kCount / 64, 1, 1}, ev.events[1], {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(host.ptr(), out.ptr(), kCount * 4, ev.events[2], {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev.events[2]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(host.as<int>()[i], static_cast<int>(i) + add) << i;

    hal::KernelTimestampResult ts[3]{};
    for (int i = 0; i < 3; ++i) {
        uint32_t count = 1;
        ASSERT_EQ(mapped ? ev.events[i]->query_synchronized_timestamps(&count, &ts[i])
                         : ev.events[i]->query_kernel_timestamps(&count, &ts[i]),
                  ZE_RESULT_SUCCESS);
    }
    EXPECT_LE(ts[1].global_start, ts[1].global_end);
    if (mapped) {  // host ns: no wrap between the commands
        EXPECT_LE(ts[0].global_end, ts[1].global_start);
        EXPECT_LE(ts[1].global_end, ts[2].global_start);
    }
}

TEST_P(KernelContract, ALaunchKeepsTheArgumentsItWasAppendedWith) {
    auto m = module("buffers");
    ZEHAL_SKIP_WITHOUT_MODULES();
    auto k = kernel(m, "fill_uint");
    ASSERT_TRUE(k);
    EventSet ev(device_, 1);
    Allocation dst(device_, hal::MemoryKind::host, kCount * 4);
    auto q = queue(hal::kComputeOrdinal);
    const uint32_t first = 7, second = 9;
    ASSERT_EQ(set_pointer(*k, 0, dst.ptr()), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_argument(1, sizeof first, &first), ZE_RESULT_SUCCESS);
    // Held back by an event until the argument has changed.
    const hal::EventRef waits[] = {ev.events[0]};
    ASSERT_EQ(q->append_launch(*k, {kCount, 1, 1}, nullptr, waits), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_argument(1, sizeof second, &second), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev.events[0]->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(dst.as<uint32_t>()[i], first) << i;
}

// The global offset is kernel state a launch captures at its append, as the group size:
// get_global_offset returns it and get_global_id includes it (work_items.cl writes both,
// 16 values per work-item).
TEST_P(KernelContract, ALaunchRunsWithTheGlobalOffsetItWasAppendedWith) {
    auto m = module("work_items");
    ZEHAL_SKIP_WITHOUT_MODULES();
    auto k = kernel(m, "work_item_ids");
    ASSERT_TRUE(k);
    constexpr uint32_t kItems = 16;  // groups of 2x2x2, two of them along x
    Allocation out(device_, hal::MemoryKind::host, kItems * 16 * 8);
    EventSet ev(device_, 1);
    ASSERT_EQ(set_pointer(*k, 0, out.ptr()), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_group_size(2, 2, 2), ZE_RESULT_SUCCESS);
    EXPECT_EQ(k->global_offset(), (std::array<uint32_t, 3>{0, 0, 0}));
    ASSERT_EQ(k->set_global_offset(5, 6, 7), ZE_RESULT_SUCCESS);
    EXPECT_EQ(k->global_offset(), (std::array<uint32_t, 3>{5, 6, 7}));
    auto q = queue(hal::kComputeOrdinal);
    // Held back by an event until the offset has changed.
    const hal::EventRef waits[] = {ev.events[0]};
    ASSERT_EQ(q->append_launch(*k, {2, 1, 1}, nullptr, waits), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_global_offset(0, 0, 0), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev.events[0]->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    const uint64_t* v = out.as<uint64_t>();
    for (uint32_t z = 0; z < 2; ++z)
        for (uint32_t y = 0; y < 2; ++y)
            for (uint32_t x = 0; x < 4; ++x) {
                const uint64_t* item = v + ((z * 2 + y) * 4 + x) * 16;
                ASSERT_EQ(item[0], x + 5) << x << "," << y << "," << z;
                ASSERT_EQ(item[1], y + 6) << x << "," << y << "," << z;
                ASSERT_EQ(item[2], z + 7) << x << "," << y << "," << z;
                ASSERT_EQ(item[12], 5u * 10000 + 6u * 100 + 7u);
                ASSERT_EQ(item[15], x + 5);
            }
}

TEST_P(KernelContract, LaunchesFromSeveralThreads) {
    auto m = module("buffers");
    ZEHAL_SKIP_WITHOUT_MODULES();
    constexpr int kThreads = 4;
    constexpr int kRounds = 20;
    auto q = queue(hal::kComputeOrdinal);
    std::vector<std::unique_ptr<Allocation>> dst;
    for (int t = 0; t < kThreads; ++t)
        dst.push_back(std::make_unique<Allocation>(device_, hal::MemoryKind::host, kCount * 4));
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            hal::KernelRef k;
            if (m->create_kernel("fill_uint", &k) != ZE_RESULT_SUCCESS) {
                failures.fetch_add(1);
                return;
            }
            for (int r = 0; r < kRounds; ++r) {
                const uint32_t value = static_cast<uint32_t>(t * 1000 + r);
                const void* p = dst[t]->ptr();
                if (k->set_argument(0, sizeof p, &p) != ZE_RESULT_SUCCESS ||
                    k->set_argument(1, sizeof value, &value) != ZE_RESULT_SUCCESS ||
                    q->append_launch(*k, {kCount, 1, 1}, nullptr, {}) != ZE_RESULT_SUCCESS)
                    failures.fetch_add(1);
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    // Each thread's launches ran in its order: its last value is what stays.
    for (int t = 0; t < kThreads; ++t)
        for (uint32_t i = 0; i < kCount; ++i)
            ASSERT_EQ(dst[t]->as<uint32_t>()[i], static_cast<uint32_t>(t * 1000 + kRounds - 1)) << t << " " << i;
}

TEST_P(KernelContract, ALostDeviceRefusesModulesAndLaunches) {
    if (!GetParam().can_lose) GTEST_SKIP() << "no fault injection in this backend";
    auto m = module("buffers");
    ZEHAL_SKIP_WITHOUT_MODULES();
    auto k = kernel(m, "fill_uint");
    ASSERT_TRUE(k);
    auto q = queue(hal::kComputeOrdinal);
    ASSERT_EQ(device_->lose(), ZE_RESULT_SUCCESS);
    const std::vector<uint8_t> spirv = spirv_of("buffers");
    hal::ModuleRef again;
    hal::KernelRef k2;
    std::string log;
    EXPECT_EQ(device_->create_module(hal::ModuleFormat::spirv, spirv, "", &again, &log), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(m->create_kernel("fill_uint", &k2), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(q->append_launch(*k, {1, 1, 1}, nullptr, {}), ZE_RESULT_ERROR_DEVICE_LOST);
}

}  // namespace

}  // namespace zehal::test::contract
