// Kernels on the sim device beyond the contract suite: __local arguments, the kernel's trace
// records, a free under a queued launch, indirect launches, and a kernel that faults (it
// loses the device, the process lives on). Skips with the reason where zehal was built without the compiler.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "hal/sim/sim_trace.hpp"
#include "hal/trace_record.hpp"
#include "support/sim_fixture.hpp"

namespace zehal::test {
namespace {

#ifndef ZEHAL_SPIRV_KERNEL_DIR
#define ZEHAL_SPIRV_KERNEL_DIR ""
#endif

// Kernel `name` of tests/kernels/<file>.spv on `d`; null with *why when the device builds
// no modules here.
hal::KernelRef kernel_of(const hal::DeviceRef& d, const char* file, const char* name, std::string* why) {
    if (std::string(ZEHAL_SPIRV_KERNEL_DIR).empty()) {
        *why = "the build made no SPIR-V kernels";
        return nullptr;
    }
    std::ifstream in(std::string(ZEHAL_SPIRV_KERNEL_DIR) + "/" + file + ".spv", std::ios::binary);
    const std::vector<uint8_t> spirv{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    hal::ModuleRef m;
    const ze_result_t r = d->create_module(hal::ModuleFormat::spirv, spirv, "", &m, why);
    if (r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) return nullptr;
    EXPECT_EQ(r, ZE_RESULT_SUCCESS) << *why;
    hal::KernelRef k;
    if (m) {
        EXPECT_EQ(m->create_kernel(name, &k), ZE_RESULT_SUCCESS);
    }
    return k;
}

#define ZEHAL_KERNEL_OR_SKIP(k, d, file, name)                      \
    std::string why_;                                               \
    hal::KernelRef k = kernel_of(d, file, name, &why_);             \
    if (!k && !::testing::Test::HasFailure()) GTEST_SKIP() << why_; \
    ASSERT_TRUE(k)

ze_result_t set_pointer(hal::Kernel& k, uint32_t i, const void* p) { return k.set_argument(i, sizeof p, &p); }

TEST(SimKernels, LocalArgumentsGiveEachGroupItsOwnMemory) {
    auto d = sim_device();
    ZEHAL_KERNEL_OR_SKIP(k, d, "local_reduce", "reduce_sum");
    constexpr uint32_t kGroup = 64, kGroups = 16;
    Memory in(d, hal::MemoryKind::shared, kGroup * kGroups * 4), out(d, hal::MemoryKind::shared, kGroups * 4);
    for (uint32_t i = 0; i < kGroup * kGroups; ++i) in.get<uint32_t>()[i] = i;
    ASSERT_EQ(set_pointer(*k, 0, in.ptr()), ZE_RESULT_SUCCESS);
    ASSERT_EQ(set_pointer(*k, 1, out.ptr()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(k->set_argument(2, kGroup * 4, &kGroup), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // local: no bytes
    EXPECT_EQ(k->set_argument(2, 0, nullptr), ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
    ASSERT_EQ(k->set_argument(2, kGroup * 4, nullptr), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_group_size(kGroup, 1, 1), ZE_RESULT_SUCCESS);
    auto q = queue(d, hal::kComputeOrdinal);
    ASSERT_EQ(q->append_launch(*k, {kGroups, 1, 1}, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    for (uint32_t g = 0; g < kGroups; ++g) {
        const uint32_t first = g * kGroup, last = first + kGroup - 1;
        EXPECT_EQ(out.get<uint32_t>()[g], (first + last) * kGroup / 2) << g;
    }
}

TEST(SimKernels, ALaunchIsTracedAsAKernelCommand) {
    auto d = sim_device();
    ZEHAL_KERNEL_OR_SKIP(k, d, "attributes", "empty");
    uint32_t engine = 0;
    const auto& groups = d->metric_groups();
    while (engine < groups.size() && groups[engine].name != "EngineEvents") ++engine;
    ASSERT_LT(engine, groups.size());
    hal::TraceSource* trace = d->trace_source();
    ASSERT_NE(trace, nullptr);
    const uint32_t started[] = {engine};
    ASSERT_EQ(trace->start(started), ZE_RESULT_SUCCESS);
    auto q = queue(d, hal::kComputeOrdinal);
    ASSERT_EQ(q->append_launch(*k, {4, 1, 1}, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    std::vector<hal::TraceRecord> recs(64);
    uint64_t lost = 0;
    const size_t n = trace->drain(recs.data(), recs.size() * sizeof(hal::TraceRecord), &lost) /
                     sizeof(hal::TraceRecord);
    ASSERT_EQ(trace->stop(), ZE_RESULT_SUCCESS);
    // CommandType is the 7th metric of the engine group (hal::engine_events_group).
    const uint32_t type_metric = groups[engine].first_metric_id + 6;
    bool kernel = false;
    for (size_t i = 0; i < n; ++i) kernel = kernel || (recs[i].metric == type_metric && recs[i].value == 3);
    EXPECT_TRUE(kernel) << n << " records, none of a kernel";
}

TEST(SimKernels, AKernelWritingIntoExportedMemoryIsAnExportWrite) {
    auto d = sim_device();
    ZEHAL_KERNEL_OR_SKIP(k, d, "buffers", "fill_uint");
    const uint32_t group = sim::SimTrace::export_group();
    int fd = -1;
    size_t size = 0;
    ASSERT_EQ(d->export_dma_buf(group, &fd, &size), ZE_RESULT_SUCCESS);
    void* imported = nullptr;
    ASSERT_EQ(d->import_dma_buf(fd, size, &imported), ZE_RESULT_SUCCESS);
    const uint32_t started[] = {group};
    ASSERT_EQ(d->trace_source()->start(started), ZE_RESULT_SUCCESS);
    const uint32_t value = 0xFEED;
    ASSERT_EQ(set_pointer(*k, 0, imported), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_argument(1, sizeof value, &value), ZE_RESULT_SUCCESS);
    auto q = queue(d, hal::kComputeOrdinal);
    ASSERT_EQ(q->append_launch(*k, {16, 1, 1}, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    std::vector<hal::TraceRecord> recs(64);
    uint64_t lost = 0;
    const size_t n = d->trace_source()->drain(recs.data(), recs.size() * sizeof(hal::TraceRecord), &lost) /
                     sizeof(hal::TraceRecord);
    ASSERT_EQ(d->trace_source()->stop(), ZE_RESULT_SUCCESS);
    bool seen = false;
    for (size_t i = 0; i < n; ++i) seen = seen || (recs[i].kind == hal::kRecordExportWrite && recs[i].value == value);
    EXPECT_TRUE(seen) << n << " records, no export write of the kernel";
    EXPECT_EQ(d->free(imported), ZE_RESULT_SUCCESS);
}

TEST(SimKernels, FreeingMemoryOfAQueuedLaunchWaitsForIt) {
    auto d = sim_device();
    ZEHAL_KERNEL_OR_SKIP(k, d, "buffers", "fill_uint");
    auto q = queue(d, hal::kComputeOrdinal);
    auto events = pool(d, 2);
    const hal::EventRef gate = event(events, 0), done = event(events, 1);
    void* dst = nullptr;
    ASSERT_EQ(d->allocate(hal::MemoryKind::shared, 4096 * 4, 0, 0, 0, &dst), ZE_RESULT_SUCCESS);
    const uint32_t value = 42;
    ASSERT_EQ(set_pointer(*k, 0, dst), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_argument(1, sizeof value, &value), ZE_RESULT_SUCCESS);
    const hal::EventRef waits[] = {gate};
    ASSERT_EQ(q->append_launch(*k, {4096, 1, 1}, done, waits), ZE_RESULT_SUCCESS);
    // The free takes the memory out of reach at once, then waits for the launch, which waits
    // for the gate.
    ze_result_t freed = ZE_RESULT_ERROR_UNKNOWN;
    std::thread freer([&] { freed = d->free(dst); });
    hal::PointerInfo info;
    while (d->pointer_info(dst, &info) == ZE_RESULT_SUCCESS) std::this_thread::yield();
    EXPECT_EQ(done->query(), ZE_RESULT_NOT_READY);  // the memory is still the launch's
    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    freer.join();
    EXPECT_EQ(freed, ZE_RESULT_SUCCESS);
    EXPECT_EQ(done->query(), ZE_RESULT_SUCCESS);  // the launch ran before the memory went
}

// Whether each of `n` uint32_t at `p` is `value` for the first `count` and 0 after.
::testing::AssertionResult filled(const uint32_t* p, size_t n, size_t count, uint32_t value) {
    for (size_t i = 0; i < n; ++i)
        if (p[i] != (i < count ? value : 0u))
            return ::testing::AssertionFailure() << "[" << i << "] = " << p[i] << ", " << count << " filled";
    return ::testing::AssertionSuccess();
}

// The group counts are read when the launch runs: a copy queued before it (held back by
// an event until both are queued) decides how many groups run; a count of zero runs none.
TEST(SimKernels, AnIndirectLaunchReadsItsGroupCountsWhenItRuns) {
    auto d = sim_device();
    ZEHAL_KERNEL_OR_SKIP(k, d, "buffers", "fill_uint");
    constexpr uint32_t kGroup = 4, kItems = 256;
    Memory dst(d, hal::MemoryKind::shared, kItems * 4), counts(d, hal::MemoryKind::device, 2 * 12);
    Memory staged(d, hal::MemoryKind::host, 2 * 12);
    const uint32_t initial[6] = {1, 1, 1, 1, 1, 1}, later[6] = {6, 2, 1, 0, 3, 1};
    std::memcpy(counts.ptr(), initial, sizeof initial);
    std::memcpy(staged.ptr(), later, sizeof later);
    std::memset(dst.ptr(), 0, kItems * 4);
    const uint32_t value = 7;
    ASSERT_EQ(set_pointer(*k, 0, dst.ptr()), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_argument(1, sizeof value, &value), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_group_size(kGroup, 1, 1), ZE_RESULT_SUCCESS);
    auto q = queue(d, hal::kComputeOrdinal);
    auto events = pool(d, 3, hal::kPoolHostVisible | hal::kPoolKernelTimestamp);
    const hal::EventRef gate = event(events, 0), first = event(events, 1), second = event(events, 2);
    const hal::EventRef waits[] = {gate};
    const hal::KernelRef kernels[] = {k};
    const auto* groups = counts.get<hal::GroupCount>();
    ASSERT_EQ(q->append_copy(counts.ptr(), staged.ptr(), sizeof later, nullptr, waits), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_launch_indirect(kernels, groups, nullptr, first, {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(first->query(), ZE_RESULT_NOT_READY);
    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    // 6 x 2 groups of 4: get_global_id(0) covers 24 items (fill_uint writes dimension 0).
    EXPECT_TRUE(filled(dst.get<uint32_t>(), kItems, 6 * kGroup, value));
    std::memset(dst.ptr(), 0, kItems * 4);
    ASSERT_EQ(q->append_launch_indirect(kernels, groups + 1, nullptr, second, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(second->query(), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(filled(dst.get<uint32_t>(), kItems, 0, value));
}

// Several kernels in one command: the first *count of them run, each over its own counts.
TEST(SimKernels, AnIndirectLaunchOfSeveralKernelsRunsTheFirstCount) {
    auto d = sim_device();
    ZEHAL_KERNEL_OR_SKIP(a, d, "buffers", "fill_uint");
    std::string why;
    hal::KernelRef b = kernel_of(d, "buffers", "fill_uint", &why);
    ASSERT_TRUE(b) << why;
    constexpr uint32_t kItems = 64;
    Memory dst_a(d, hal::MemoryKind::shared, kItems * 4), dst_b(d, hal::MemoryKind::shared, kItems * 4);
    Memory args(d, hal::MemoryKind::shared, 2 * 12 + 4);
    const uint32_t one = 1, two = 2;
    ASSERT_EQ(set_pointer(*a, 0, dst_a.ptr()), ZE_RESULT_SUCCESS);
    ASSERT_EQ(a->set_argument(1, sizeof one, &one), ZE_RESULT_SUCCESS);
    ASSERT_EQ(set_pointer(*b, 0, dst_b.ptr()), ZE_RESULT_SUCCESS);
    ASSERT_EQ(b->set_argument(1, sizeof two, &two), ZE_RESULT_SUCCESS);
    auto* groups = args.get<hal::GroupCount>();
    groups[0] = {5, 1, 1};
    groups[1] = {9, 1, 1};
    auto* count = reinterpret_cast<uint32_t*>(args.get() + 2 * 12);
    const hal::KernelRef kernels[] = {a, b};
    auto q = queue(d, hal::kComputeOrdinal);
    for (uint32_t n : {1u, 2u, 7u}) {
        std::memset(dst_a.ptr(), 0, kItems * 4);
        std::memset(dst_b.ptr(), 0, kItems * 4);
        *count = n;
        ASSERT_EQ(q->append_launch_indirect(kernels, groups, count, nullptr, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        EXPECT_TRUE(filled(dst_a.get<uint32_t>(), kItems, 5, one)) << n;
        EXPECT_TRUE(filled(dst_b.get<uint32_t>(), kItems, n >= 2 ? 9 : 0, two)) << n;
    }
}

TEST(SimKernels, AnIndirectLaunchChecksItsArguments) {
    auto d = sim_device();
    ZEHAL_KERNEL_OR_SKIP(k, d, "buffers", "fill_uint");
    Memory args(d, hal::MemoryKind::shared, 64);
    const auto* groups = args.get<hal::GroupCount>();
    const auto* count = reinterpret_cast<const uint32_t*>(args.get() + 24);
    const hal::KernelRef one[] = {k}, two[] = {k, k}, none[] = {nullptr};
    auto q = queue(d, hal::kComputeOrdinal);
    EXPECT_EQ(q->append_launch_indirect({}, groups, count, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_launch_indirect(none, groups, nullptr, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(q->append_launch_indirect(one, nullptr, nullptr, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_launch_indirect(two, groups, nullptr, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    const auto* misaligned = reinterpret_cast<const hal::GroupCount*>(args.get() + 2);
    EXPECT_EQ(q->append_launch_indirect(one, misaligned, nullptr, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // Arguments unset.
    EXPECT_EQ(q->append_launch_indirect(one, groups, nullptr, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    const uint32_t value = 1;
    ASSERT_EQ(set_pointer(*k, 0, args.ptr()), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_argument(1, sizeof value, &value), ZE_RESULT_SUCCESS);
    // The counts past the end of their allocation.
    EXPECT_EQ(q->append_launch_indirect(two, groups + 5, count, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

TEST(SimKernels, TheDeviceSaysWhatItBuildsAndHasNoNativeStreams) {
    auto d = sim_device();
    const hal::DeviceProperties& p = d->properties();
    std::string why;
    const bool builds = kernel_of(d, "attributes", "empty", &why) != nullptr;
    EXPECT_EQ(p.module_formats != 0, builds) << why;
    if (!builds) {
        EXPECT_NE(p.limits.find("no kernels"), std::string::npos) << p.limits;
    }
    auto events = pool(d, 1, hal::kPoolHostVisible | hal::kPoolKernelTimestamp);
    EXPECT_EQ(d->record_on_stream(0, event(events), hal::StreamMark::start), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

TEST(SimKernels, AFaultingKernelLosesTheDeviceNotTheProcess) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            alarm(60);
            auto d = sim_device();
            std::string why;
            hal::KernelRef k = kernel_of(d, "faults", "store_at", &why);
            if (!k) std::_Exit(0);        // no modules here: nothing to fault
            const uint64_t address = 16;  // never mapped
            const uint32_t value = 1;
            auto q = queue(d, hal::kComputeOrdinal);
            auto events = pool(d, 1);
            const hal::EventRef done = event(events);
            bool ok = k->set_argument(0, sizeof address, &address) == ZE_RESULT_SUCCESS &&
                      k->set_argument(1, sizeof value, &value) == ZE_RESULT_SUCCESS &&
                      q->append_launch(*k, {1, 1, 1}, done, {}) == ZE_RESULT_SUCCESS;
            ok = ok && done->host_synchronize(kHangGuardNs) == ZE_RESULT_ERROR_DEVICE_LOST;
            ok = ok && q->append_launch(*k, {1, 1, 1}, nullptr, {}) == ZE_RESULT_ERROR_DEVICE_LOST;
            std::_Exit(ok && !::testing::Test::HasFailure() ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "");
}

TEST(SimKernels, AKernelThatFaultsWhileTheDeviceGoesAwayLosesItQuietly) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            alarm(60);
            sim::SimConfig config;
            config.compute_engines = 2;
            config.bandwidth_bytes_per_s = 200u << 20;  // the busy copy takes 160 ms
            auto d = sim_device(config);
            std::string why;
            hal::KernelRef k = kernel_of(d, "faults", "store_at", &why);
            if (!k) std::_Exit(0);
            const uint64_t address = 16;
            const uint32_t value = 1;
            constexpr size_t kBusy = 32u << 20;
            void* src = nullptr;
            void* dst = nullptr;
            bool ok = d->allocate(hal::MemoryKind::host, kBusy, 0, 0, 0, &src) == ZE_RESULT_SUCCESS &&
                      d->allocate(hal::MemoryKind::device, kBusy, 0, 0, 0, &dst) == ZE_RESULT_SUCCESS &&
                      k->set_argument(0, sizeof address, &address) == ZE_RESULT_SUCCESS &&
                      k->set_argument(1, sizeof value, &value) == ZE_RESULT_SUCCESS;
            {
                // On the second compute engine: the first is stopped before it when the
                // device goes.
                auto q = queue(d, hal::kComputeOrdinal, 1);
                ok = ok && q->append_copy(dst, src, kBusy, nullptr, {}) == ZE_RESULT_SUCCESS &&
                     q->append_launch(*k, {1, 1, 1}, nullptr, {}) == ZE_RESULT_SUCCESS;
            }
            k.reset();
            // The last reference: the engines run what is queued (the kernel faults) as they stop.
            d.reset();
            std::_Exit(ok && !::testing::Test::HasFailure() ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace zehal::test
