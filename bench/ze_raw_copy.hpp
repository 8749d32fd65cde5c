// The raw Level Zero side of the Level Zero benchmarks: on one device, a context of its own,
// an immediate command list on one engine group, host and device memory, and a host-visible
// event; a copy is the append that signals the event, the wait on it and its reset.
#pragma once

#include <cstdint>
#include <cstring>

#include <level_zero/ze_api.h>

#include "paired_rounds.hpp"

namespace zehal::bench {

class ZeRawCopy {
public:
    // `bytes` of host and of device memory on `device`; copies on the group `ze_ordinal`.
    ZeRawCopy(ze_driver_handle_t driver, ze_device_handle_t device, uint32_t ze_ordinal, size_t bytes) {
        ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
        ZEHAL_BENCH_ZE_CHECK(zeContextCreate(driver, &cd, &ctx_));
        ze_command_queue_desc_t qd{
            ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, ze_ordinal, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ZEHAL_BENCH_ZE_CHECK(zeCommandListCreateImmediate(ctx_, device, &qd, &list_));
        ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
        ZEHAL_BENCH_ZE_CHECK(zeMemAllocHost(ctx_, &hd, bytes, 64, &host_));
        ZEHAL_BENCH_ZE_CHECK(zeMemAllocDevice(ctx_, &dd, bytes, 64, device, &device_));
        std::memset(host_, 1, bytes);
        ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
        ZEHAL_BENCH_ZE_CHECK(zeEventPoolCreate(ctx_, &pd, 1, &device, &pool_));
        ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                           ZE_EVENT_SCOPE_FLAG_HOST};
        ZEHAL_BENCH_ZE_CHECK(zeEventCreate(pool_, &ed, &done_));
    }
    ~ZeRawCopy() {
        ZEHAL_BENCH_ZE_CHECK(zeEventDestroy(done_));
        ZEHAL_BENCH_ZE_CHECK(zeEventPoolDestroy(pool_));
        ZEHAL_BENCH_ZE_CHECK(zeMemFree(ctx_, host_));
        ZEHAL_BENCH_ZE_CHECK(zeMemFree(ctx_, device_));
        ZEHAL_BENCH_ZE_CHECK(zeCommandListDestroy(list_));
        ZEHAL_BENCH_ZE_CHECK(zeContextDestroy(ctx_));
    }
    ZeRawCopy(const ZeRawCopy&) = delete;
    ZeRawCopy& operator=(const ZeRawCopy&) = delete;

    // Copies `bytes` host -> device and waits for it.
    void copy(size_t bytes) {
        ZEHAL_BENCH_ZE_CHECK(zeCommandListAppendMemoryCopy(list_, device_, host_, bytes, done_, 0, nullptr));
        ZEHAL_BENCH_ZE_CHECK(zeEventHostSynchronize(done_, UINT64_MAX));
        ZEHAL_BENCH_ZE_CHECK(zeEventHostReset(done_));
    }

private:
    ze_context_handle_t ctx_ = nullptr;
    ze_command_list_handle_t list_ = nullptr;
    void* host_ = nullptr;
    void* device_ = nullptr;
    ze_event_pool_handle_t pool_ = nullptr;
    ze_event_handle_t done_ = nullptr;
};

}  // namespace zehal::bench
