#include "contract_fixture.hpp"

#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string_view>

namespace zehal::test::contract {

Allocation::Allocation(const hal::DeviceRef& device, hal::MemoryKind kind, size_t size, size_t alignment)
    : device_(device) {
    EXPECT_EQ(device_->allocate(kind, size, alignment, 0, 0, &ptr_), ZE_RESULT_SUCCESS);
}

Allocation::~Allocation() {
    if (!ptr_) return;
    const ze_result_t r = device_->free(ptr_);
    EXPECT_TRUE(r == ZE_RESULT_SUCCESS || r == ZE_RESULT_ERROR_DEVICE_LOST) << r;
}

EventSet::EventSet(const hal::DeviceRef& device, uint32_t count, uint32_t flags) {
    EXPECT_EQ(device->create_event_pool(count, flags, &pool), ZE_RESULT_SUCCESS);
    for (uint32_t i = 0; pool && i < count; ++i) {
        hal::EventRef e;
        EXPECT_EQ(pool->event(i, &e), ZE_RESULT_SUCCESS);
        events.push_back(e);
    }
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
    std::mt19937 gen(seed);
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(gen());
    return v;
}

void HalContract::SetUp() {
    const BackendProvider& p = GetParam();
    std::string why;
    if (p.device(&device_, &why)) return;
    if (p.required && p.required()) FAIL() << why;
    GTEST_SKIP() << why;
}

std::shared_ptr<hal::Queue> HalContract::queue() {
    return queue(device_->properties().copy_engines > 0 ? hal::kCopyOrdinal : hal::kComputeOrdinal);
}

std::shared_ptr<hal::Queue> HalContract::queue(uint32_t ordinal) {
    std::shared_ptr<hal::Queue> q;
    EXPECT_EQ(device_->create_queue(ordinal, 0, &q), ZE_RESULT_SUCCESS);
    return q;
}

hal::DeviceRef HalContract::other_device() {
    hal::DeviceRef other;
    std::string why;
    if (!GetParam().other_device(&other, &why)) ADD_FAILURE() << "no other device: " << why;
    return other;
}

void HalContract::copy_and_wait(hal::Queue& q, void* dst, const void* src, size_t size) {
    ASSERT_EQ(q.append_copy(dst, src, size, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q.host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

std::vector<uint8_t> HalContract::read_back(hal::Queue& q, const void* src, size_t size) {
    Allocation host(device_, hal::MemoryKind::host, size);
    std::vector<uint8_t> out(size);
    if (!host.ptr()) return out;
    copy_and_wait(q, host.ptr(), src, size);
    std::memcpy(out.data(), host.ptr(), size);
    return out;
}

// Where the build put tests/kernels' SPIR-V ("" when it had no clang-15 and llvm-spirv-15).
#ifndef ZEHAL_SPIRV_KERNEL_DIR
#define ZEHAL_SPIRV_KERNEL_DIR ""
#endif

std::vector<uint8_t> spirv_of(const char* name) {
    if (std::string_view(ZEHAL_SPIRV_KERNEL_DIR).empty()) return {};
    std::ifstream in(std::string(ZEHAL_SPIRV_KERNEL_DIR) + "/" + name + ".spv", std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

hal::ModuleRef KernelContract::module(const char* name) {
    if (std::string_view(ZEHAL_SPIRV_KERNEL_DIR).empty()) {
        skip_reason_ = "the build made no SPIR-V kernels (no clang-15 and llvm-spirv-15)";
        return nullptr;
    }
    const std::vector<uint8_t> spirv = spirv_of(name);
    EXPECT_FALSE(spirv.empty()) << name << ".spv was not built";
    hal::ModuleRef m;
    std::string log;
    const ze_result_t r = device_->create_module(hal::ModuleFormat::spirv, spirv, "", &m, &log);
    if (r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)
        skip_reason_ = log.empty() ? "the device builds no modules" : log;
    else
        EXPECT_EQ(r, ZE_RESULT_SUCCESS) << log;
    return m;
}

hal::KernelRef KernelContract::kernel(const hal::ModuleRef& m, const char* name) {
    hal::KernelRef k;
    if (m) {
        EXPECT_EQ(m->create_kernel(name, &k), ZE_RESULT_SUCCESS) << name;
    }
    return k;
}

}  // namespace zehal::test::contract
