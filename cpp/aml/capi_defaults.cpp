// C API: aml_init, aml_finalize and the default areas and DMA engine.
#include <atomic>
#include <mutex>

#include "common/api_call_log.hpp"
#include "aml.h"
#include "aml/area/ze.h"
#include "aml/dma/ze.h"
#include "hal/device_handle.hpp"
#include "hal/registry.hpp"

namespace {

// The defaults, created together on first use and released by aml_finalize.
struct Defaults {
    std::mutex mutex;
    // acquire/release: a thread that sees ready also sees the three pointers written
    // before it was set.
    std::atomic<bool> ready{false};
    aml_area* device_area = nullptr;
    aml_area* host_area = nullptr;
    aml_dma* dma = nullptr;
};

// Never destroyed, so the defaults stay usable while the process exits.
Defaults& defaults() {
    static Defaults* d = new Defaults();
    return *d;
}

constexpr size_t kDefaultAlignment = 64;

// Creates the defaults once: the first device of the default backend, alignment 64,
// cached bias; copy engine 0 (compute engine 0 without copy engines). They stay NULL
// when no device exists or a creation fails.
Defaults& ready_defaults() {
    Defaults& d = defaults();
    if (d.ready.load(std::memory_order_acquire)) return d;
    std::lock_guard lock(d.mutex);
    if (d.ready.load(std::memory_order_relaxed)) return d;
    zehal::hal::DeviceRef device;
    if (zehal::hal::default_device(&device) == ZE_RESULT_SUCCESS) {
        zehal_device_t handle = zehal::capi::handle_from_device(device.get());
        aml_area_ze_device_create(&d.device_area, handle, 0, AML_AREA_ZE_ALLOC_FLAG_BIAS_CACHED, kDefaultAlignment,
                                  AML_AREA_ZE_MMAP_DEVICE_FLAGS);
        aml_area_ze_host_create(&d.host_area, AML_AREA_ZE_ALLOC_FLAG_BIAS_CACHED, kDefaultAlignment);
        const uint32_t ordinal = device->properties().copy_engines > 0 ? 1 : 0;
        aml_dma_ze_create(&d.dma, handle, ordinal, 0);
    }
    d.ready.store(true, std::memory_order_release);
    return d;
}

}  // namespace

extern "C" {

struct aml_area** aml_area_ze_device_location(void) {
    return &ready_defaults().device_area;
}

struct aml_area** aml_area_ze_host_location(void) {
    return &ready_defaults().host_area;
}

struct aml_dma** aml_dma_ze_default_location(void) {
    return &ready_defaults().dma;
}

int aml_init(int* /*argc*/, char** /*argv*/[]) {
    ZEHAL_TIMED_API_CALL();
    ready_defaults();
    return AML_SUCCESS;
}

int aml_finalize(void) {
    ZEHAL_TIMED_API_CALL();
    Defaults& d = defaults();
    std::lock_guard lock(d.mutex);
    aml_dma_ze_destroy(&d.dma);
    aml_area_ze_destroy(&d.device_area);
    aml_area_ze_destroy(&d.host_area);
    d.ready.store(false, std::memory_order_release);
    return AML_SUCCESS;
}

}  // extern "C"
