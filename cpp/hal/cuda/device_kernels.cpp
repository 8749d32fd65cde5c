#include "hal/cuda/device_kernels.hpp"

namespace zehal::cuda {

namespace {

// PTX ISA 7.0 for sm_50 and later: the driver JIT-compiles it for the device at hand.
// Stores are volatile so that each reaches memory exactly once, in program order; the
// membar.sys orders the payload before the flag for a host that polls the flag.
constexpr char kPtx[] = R"(
.version 7.0
.target sm_50
.address_size 64

.visible .entry zehal_timestamp(.param .u64 ticks)
{
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [ticks];
    mov.u64 %rd2, %globaltimer;
    st.volatile.global.u64 [%rd1], %rd2;
    ret;
}

.visible .entry zehal_timestamp_signal(.param .u64 ticks, .param .u64 flag, .param .u32 value)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [ticks];
    ld.param.u64 %rd2, [flag];
    ld.param.u32 %r1, [value];
    mov.u64 %rd3, %globaltimer;
    st.volatile.global.u64 [%rd1], %rd3;
    membar.sys;
    st.volatile.global.u32 [%rd2], %r1;
    ret;
}

.visible .entry zehal_export_probe(.param .u64 src, .param .u32 nbytes, .param .u64 slot)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [src];
    ld.param.u32 %r1, [nbytes];
    ld.param.u64 %rd2, [slot];
    mov.u32 %r2, 0;
    mov.u32 %r3, 0;
LOOP:
    setp.ge.u32 %p1, %r3, %r1;
    @%p1 bra DONE;
    cvt.u64.u32 %rd3, %r3;
    add.u64 %rd4, %rd1, %rd3;
    ld.volatile.global.u8 %r4, [%rd4];
    shl.b32 %r5, %r3, 3;
    shl.b32 %r6, %r4, %r5;
    or.b32 %r2, %r2, %r6;
    add.u32 %r3, %r3, 1;
    bra LOOP;
DONE:
    mov.u64 %rd5, %globaltimer;
    st.volatile.global.u64 [%rd2], %rd5;
    st.volatile.global.u32 [%rd2+8], %r2;
    membar.sys;
    mov.u32 %r7, 1;
    st.volatile.global.u32 [%rd2+12], %r7;
    ret;
}
)";

CUresult launch(const DriverApi& api, CUfunction f, CUstream stream, void** params) {
    return api.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr);
}

}  // namespace

CUresult DeviceKernels::load(const DriverApi& api) {
    if (CUresult r = api.cuModuleLoadData(&module_, kPtx); r != CUDA_SUCCESS) {
        module_ = nullptr;
        return r;
    }
    CUresult r = api.cuModuleGetFunction(&timestamp_, module_, "zehal_timestamp");
    if (r == CUDA_SUCCESS) r = api.cuModuleGetFunction(&timestamp_signal_, module_, "zehal_timestamp_signal");
    if (r == CUDA_SUCCESS) r = api.cuModuleGetFunction(&export_probe_, module_, "zehal_export_probe");
    if (r != CUDA_SUCCESS) unload(api);
    return r;
}

void DeviceKernels::unload(const DriverApi& api) {
    if (module_) api.cuModuleUnload(module_);
    module_ = nullptr;
    timestamp_ = timestamp_signal_ = export_probe_ = nullptr;
}

CUresult DeviceKernels::timestamp(const DriverApi& api, CUstream stream, uint64_t* ticks) const {
    void* params[] = {&ticks};
    return launch(api, timestamp_, stream, params);
}

CUresult DeviceKernels::timestamp_signal(const DriverApi& api, CUstream stream, uint64_t* ticks, uint32_t* flag,
                                         uint32_t value) const {
    void* params[] = {&ticks, &flag, &value};
    return launch(api, timestamp_signal_, stream, params);
}

CUresult DeviceKernels::export_probe(const DriverApi& api, CUstream stream, const void* src, uint32_t nbytes,
                                     ExportProbeSlot* slot) const {
    void* params[] = {&src, &nbytes, &slot};
    return launch(api, export_probe_, stream, params);
}

}  // namespace zehal::cuda
