// Kernels on the CUDA backend beyond the contract suite: native PTX modules (their .entry
// signatures, the JIT's log on a bad one, their program-scope variables), launches with
// kernel timestamps, and events marked on a stream zehal did not create. The PTX reading
// tests run without a GPU.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>

#include "support/backend_devices.hpp"
#include "hal/cuda/cuda_device.hpp"
#include "hal/cuda/cuda_module.hpp"

namespace zehal::test {
namespace {

constexpr uint32_t kMapped = hal::kPoolHostVisible | hal::kPoolKernelMappedTimestamp;
constexpr uint32_t kCount = 4096;

// dst[global id] = value, for PTX-capable drivers of any GPU of sm_70 and later.
constexpr char kFillPtx[] = R"(
.version 7.0
.target sm_70
.address_size 64

// A comment with .entry in it is not a kernel.
.visible .entry fill_u32(
    .param .u64 dst,
    .param .u32 value
)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [dst];
    ld.param.u32 %r1, [value];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r1;
    ret;
}

.visible .entry nothing()
{
    ret;
}
)";

std::span<const uint8_t> bytes_of(const char* text) {
    return {reinterpret_cast<const uint8_t*>(text), std::strlen(text)};
}

TEST(CudaPtx, EntriesAndTheirParameterSizesAreRead) {
    std::vector<cuda::PtxEntry> entries;
    ASSERT_TRUE(cuda::parse_ptx_entries(kFillPtx, &entries));
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].name, "fill_u32");
    EXPECT_EQ(entries[0].param_sizes, (std::vector<uint32_t>{8, 4}));
    EXPECT_EQ(entries[1].name, "nothing");
    EXPECT_TRUE(entries[1].param_sizes.empty());

    ASSERT_TRUE(cuda::parse_ptx_entries(".entry k(.param .align 8 .b8 s[24], .param .f32 x) {}", &entries));
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].param_sizes, (std::vector<uint32_t>{24, 4}));
    EXPECT_FALSE(cuda::parse_ptx_entries(".entry k(.param .u64 p", &entries));
}

TEST(CudaPtx, LocalArgumentsAreLaidOutInOrderOnSixteenBytes) {
    const size_t sizes[] = {0, 10, 0, 32, 4};
    const cuda::LocalLayout layout = cuda::layout_locals(sizes);
    EXPECT_EQ(layout.offsets, (std::vector<uint64_t>{0, 0, 0, 16, 48}));
    EXPECT_EQ(layout.total, 52u);
}

// The fill_u32 kernel of kFillPtx, built as a native module of `dev` (kept in *m).
void native_fill_kernel(const hal::DeviceRef& dev, hal::ModuleRef* m, hal::KernelRef* k) {
    std::string log;
    ASSERT_EQ(dev->create_module(hal::ModuleFormat::native, bytes_of(kFillPtx), "", m, &log), ZE_RESULT_SUCCESS) << log;
    ASSERT_EQ((*m)->create_kernel("fill_u32", k), ZE_RESULT_SUCCESS);
}

TEST(CudaKernels, NativePtxModulesListTheirKernelsAndLaunch) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    EXPECT_TRUE(dev->properties().module_formats & (1u << static_cast<uint32_t>(hal::ModuleFormat::native)));
    hal::ModuleRef m;
    std::string log;
    ASSERT_EQ(dev->create_module(hal::ModuleFormat::native, bytes_of(kFillPtx), "", &m, &log), ZE_RESULT_SUCCESS)
        << log;
    EXPECT_EQ(m->kernel_names(), (std::vector<std::string>{"fill_u32", "nothing"}));
    hal::KernelRef k;
    EXPECT_EQ(m->create_kernel("missing", &k), ZE_RESULT_ERROR_INVALID_KERNEL_NAME);
    ASSERT_EQ(m->create_kernel("fill_u32", &k), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->properties().args.size(), 2u);

    Memory out(dev, hal::MemoryKind::device, kCount * 4), host(dev, hal::MemoryKind::host, kCount * 4);
    const void* p = out.ptr;
    const uint32_t value = 0xC0FFEEu;
    ASSERT_EQ(k->set_argument(0, sizeof p, &p), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_argument(1, sizeof value, &value), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_group_size(256, 1, 1), ZE_RESULT_SUCCESS);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kComputeOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    Events ev(dev, 1, kMapped);
    const uint64_t before = host_now_ns();
    ASSERT_EQ(q->append_launch(*k, {kCount / 256, 1, 1}, ev.events[0], {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(host.ptr, out.ptr, kCount * 4, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    const uint64_t after = host_now_ns();
    for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(static_cast<uint32_t*>(host.ptr)[i], value) << i;
    hal::KernelTimestampResult ts{};
    uint32_t count = 1;
    ASSERT_EQ(ev.events[0]->query_synchronized_timestamps(&count, &ts), ZE_RESULT_SUCCESS);
    EXPECT_LE(before, ts.global_start);
    EXPECT_LE(ts.global_start, ts.global_end);
    EXPECT_LE(ts.global_end, after);
}

// Native code takes no global offset (only SPIR-V kernels get the offset parameters):
// zero is taken, any other offset is UNSUPPORTED_FEATURE and leaves the kernel's as it was.
TEST(CudaKernels, NativeKernelsTakeNoGlobalOffset) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    hal::ModuleRef m;
    hal::KernelRef k;
    ASSERT_NO_FATAL_FAILURE(native_fill_kernel(dev, &m, &k));
    EXPECT_EQ(k->set_global_offset(0, 0, 0), ZE_RESULT_SUCCESS);
    EXPECT_EQ(k->set_global_offset(1, 0, 0), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(k->global_offset(), (std::array<uint32_t, 3>{0, 0, 0}));
}

// A counter each launch of bump reads into out[0] and bumps, and a table.
constexpr char kGlobalsPtx[] = R"(
.version 7.0
.target sm_70
.address_size 64

.visible .global .align 4 .u32 counter = 5;
.visible .global .align 4 .b8 table[8] = {1, 0, 0, 0, 2, 0, 0, 0};

.visible .entry bump(
    .param .u64 out
)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    ld.global.u32 %r1, [counter];
    st.global.u32 [%rd2], %r1;
    add.s32 %r2, %r1, 1;
    st.global.u32 [counter], %r2;
    ret;
}
)";

// A module's program-scope variables (cuModuleGetGlobal) are device memory the queue's
// copies and the module's kernels share; a name the module lacks is INVALID_GLOBAL_NAME.
TEST(CudaKernels, GlobalPointersAreTheModulesVariables) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    hal::ModuleRef m;
    std::string log;
    ASSERT_EQ(dev->create_module(hal::ModuleFormat::native, bytes_of(kGlobalsPtx), "", &m, &log), ZE_RESULT_SUCCESS)
        << log;
    size_t size = 0;
    void* counter = nullptr;
    ASSERT_EQ(m->global_pointer("counter", &size, &counter), ZE_RESULT_SUCCESS);
    EXPECT_EQ(size, 4u);
    ASSERT_NE(counter, nullptr);
    ASSERT_EQ(m->global_pointer("table", &size, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(size, 8u);
    EXPECT_EQ(m->global_pointer("missing", &size, &counter), ZE_RESULT_ERROR_INVALID_GLOBAL_NAME);
    EXPECT_EQ(m->global_pointer("bump", &size, &counter), ZE_RESULT_ERROR_INVALID_GLOBAL_NAME);
    ASSERT_EQ(m->global_pointer("counter", nullptr, &counter), ZE_RESULT_SUCCESS);

    hal::KernelRef k;
    ASSERT_EQ(m->create_kernel("bump", &k), ZE_RESULT_SUCCESS);
    Memory out(dev, hal::MemoryKind::device, 64), host(dev, hal::MemoryKind::host, 64);
    auto* words = static_cast<uint32_t*>(host.ptr);
    const void* p = out.ptr;
    ASSERT_EQ(k->set_argument(0, sizeof p, &p), ZE_RESULT_SUCCESS);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kComputeOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_launch(*k, {1, 1, 1}, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(&words[0], out.ptr, 4, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(&words[1], counter, 4, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(words[0], 5u);
    EXPECT_EQ(words[1], 6u);
    words[2] = 40;
    ASSERT_EQ(q->append_copy(counter, &words[2], 4, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_launch(*k, {1, 1, 1}, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(&words[0], out.ptr, 4, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(words[0], 40u);
}

// A stream cannot read a launch's group counts from device memory in stream order: an
// indirect launch is UNSUPPORTED_FEATURE once its arguments pass the queue's checks, and
// queues nothing.
TEST(CudaKernels, IndirectLaunchesAreUnsupported) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    hal::ModuleRef m;
    hal::KernelRef k;
    ASSERT_NO_FATAL_FAILURE(native_fill_kernel(dev, &m, &k));
    Memory out(dev, hal::MemoryKind::device, kCount * 4), counts(dev, hal::MemoryKind::device, 64);
    const void* p = out.ptr;
    const uint32_t value = 1;
    ASSERT_EQ(k->set_argument(0, sizeof p, &p), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_argument(1, sizeof value, &value), ZE_RESULT_SUCCESS);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kComputeOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    const hal::KernelRef kernels[] = {k};
    EXPECT_EQ(q->append_launch_indirect(kernels, nullptr, nullptr, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_launch_indirect(kernels, static_cast<const hal::GroupCount*>(counts.ptr), nullptr, nullptr, {}),
              ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

TEST(CudaKernels, ABadNativeModuleIsABuildFailureWithTheJitLog) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    hal::ModuleRef m;
    std::string log;
    const char* broken = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k() { bogus.op; }\n";
    EXPECT_EQ(dev->create_module(hal::ModuleFormat::native, bytes_of(broken), "", &m, &log),
              ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
    EXPECT_FALSE(log.empty());
    log.clear();
    EXPECT_EQ(dev->create_module(hal::ModuleFormat::native, bytes_of("not a module at all"), "", &m, &log),
              ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
    EXPECT_FALSE(log.empty());
}

TEST(CudaKernels, EventMarksOnAForeignStreamBracketItsWork) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    auto& cuda_dev = static_cast<cuda::CudaDevice&>(*dev);
    ASSERT_EQ(cuda_dev.ready(), ZE_RESULT_SUCCESS);
    const cuda::DriverApi& api = cuda_dev.api();
    cuda::ContextScope scope(api, cuda_dev.context());
    CUstream stream = nullptr;  // the user's, as CuPy or PyTorch would make it
    ASSERT_EQ(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    Memory buf(dev, hal::MemoryKind::device, 64 << 20);
    Events ev(dev, 2, kMapped);
    const auto s = reinterpret_cast<uintptr_t>(stream);
    const uint64_t before = host_now_ns();
    ASSERT_EQ(dev->record_on_stream(s, ev.events[0], hal::StreamMark::start), ZE_RESULT_SUCCESS);
    ASSERT_EQ(api.cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(buf.ptr), 1, 64 << 20, stream), CUDA_SUCCESS);
    ASSERT_EQ(dev->record_on_stream(s, ev.events[0], hal::StreamMark::end), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev.events[0]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    ASSERT_EQ(api.cuStreamSynchronize(stream), CUDA_SUCCESS);
    const uint64_t after = host_now_ns();
    hal::KernelTimestampResult ts{};
    uint32_t count = 1;
    ASSERT_EQ(ev.events[0]->query_synchronized_timestamps(&count, &ts), ZE_RESULT_SUCCESS);
    EXPECT_LE(before, ts.global_start);
    EXPECT_LT(ts.global_start, ts.global_end);  // 64 MiB take more than a ns
    EXPECT_LE(ts.global_end, after);
    api.cuStreamDestroy(stream);
}

}  // namespace
}  // namespace zehal::test
