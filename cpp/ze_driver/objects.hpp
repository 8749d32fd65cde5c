// The objects behind the driver's Level Zero handles, and how a handle finds its object.
// Each object wraps HAL, AML or metrics objects; semantics live in those layers.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "spec_ext.h"
#include "common/handle_table.hpp"
#include "hal/device.hpp"
#include "metrics/decoder.hpp"
#include "metrics/tracer.hpp"

namespace zehal::ze_driver {

// The API version the driver implements and reports: that of its newest extension, the
// metric tracer (1.10).
inline constexpr auto kApiVersion = static_cast<ze_api_version_t>(ZE_MAKE_VERSION(1, 10));

// One device of a backend the driver exposes.
struct DeviceObject {
    hal::DeviceRef device;
    uint32_t index;  // in the driver's device list
};

// The one driver: every device of the sim and cuda backends, probed at zeInit.
struct DriverObject {
    std::vector<std::unique_ptr<DeviceObject>> devices;
};

// A context: allocations and objects are made through it; it owns none of them.
struct ContextObject {};

// An event pool: the HAL pool of one device, made for one device or several.
struct EventPoolObject {
    std::shared_ptr<hal::EventPool> pool;
    DeviceObject* device;                 // the device whose HAL pool it is
    std::vector<DeviceObject*> made_for;  // the devices it was created for (every device when none was named)
    ze_context_handle_t context;          // the context it was created in
    ze_event_pool_flags_t flags;          // as created
    bool opened = false;                  // opened from an IPC handle: closed by zeEventPoolCloseIpcHandle
};

// An event of a pool; keeps the pool alive.
struct EventObject {
    hal::EventRef event;
    DeviceObject* device;
    std::vector<DeviceObject*> made_for;  // its pool's
    ze_event_pool_handle_t pool;          // the pool it was created from
    ze_event_scope_flags_t signal_scope;  // as created (hints: every signal is visible to all)
    ze_event_scope_flags_t wait_scope;
};

// A command queue: one engine of the device (ordinal, index), and how it executes.
struct QueueObject {
    std::shared_ptr<hal::Queue> queue;
    DeviceObject* device;
    bool synchronous;  // ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS: execution waits for completion
};

// A fence of a queue: an event of a private host-visible pool, signalled behind the
// command lists of an execution.
struct FenceObject {
    std::shared_ptr<QueueObject> queue;
    hal::EventRef event;
};

// Metric tracer and decoder handles.
struct TracerObject {
    std::shared_ptr<metrics::Tracer> tracer;
};
struct DecoderObject {
    std::shared_ptr<metrics::Decoder> decoder;
};

class CommandListObject;

// Probes the backends (never level_zero) and builds the driver once; the result of the
// first call is every call's. zeInit's work.
ze_result_t initialize();
// The driver; null before a successful initialize().
DriverObject* driver();
// The driver behind `handle`: UNINITIALIZED before zeInit, INVALID_NULL_HANDLE for null or
// any other value.
ze_result_t driver_of(ze_driver_handle_t handle, DriverObject** out);
// The device behind `handle`; INVALID_NULL_HANDLE for null or a value that is no device.
ze_result_t device_of(ze_device_handle_t handle, DeviceObject** out);
// The handle of a device.
inline ze_device_handle_t handle_of(DeviceObject* d) { return reinterpret_cast<ze_device_handle_t>(d); }
// The device holding `ptr` (device or shared memory, or host memory of the device's
// backend), with what is known of it; null when no device knows the pointer.
DeviceObject* owner_of(const void* ptr, hal::PointerInfo* info);

// Live handles of each kind of object the application creates and destroys. The tables
// share one numbering, so a handle of one kind is no handle of another: every lookup answers
// INVALID_NULL_HANDLE for a value that is not a live handle of its own kind (null,
// destroyed, another kind's, never given out), as the specification's handle-lifetime
// validation layer does.
HandleTable<ContextObject>& contexts();
HandleTable<EventPoolObject>& event_pools();
HandleTable<EventObject>& events();
HandleTable<QueueObject>& queues();
HandleTable<CommandListObject>& command_lists();
HandleTable<FenceObject>& fences();
HandleTable<TracerObject>& tracers();
HandleTable<DecoderObject>& decoders();

// A handle value for a table entry.
template <typename Handle>
Handle to_handle(uintptr_t id) {
    return reinterpret_cast<Handle>(id);
}

// The event of an optional event handle: null handle → null event; any value that is no
// live event → INVALID_NULL_HANDLE.
ze_result_t optional_event(ze_event_handle_t handle, hal::EventRef* out);
// The notification event `handle` (null: none) of a streamer or tracer of `device`: the
// event, and whether its pool was made for that device (metrics::Notification).
// INVALID_NULL_HANDLE for a value that is no event.
ze_result_t notification_event(ze_event_handle_t handle, const DeviceObject* device, metrics::Notification* out);
// The events of a wait list: INVALID_SIZE for a count with a null list, each handle as above.
ze_result_t wait_list(uint32_t count, ze_event_handle_t* handles, std::vector<hal::EventRef>* out);

}  // namespace zehal::ze_driver
