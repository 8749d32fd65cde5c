// One Level Zero device as a hal::Device: every call maps onto the loader's functions.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "hal/device.hpp"
#include "hal/level_zero/level_zero_metrics.hpp"
#include "hal/level_zero/ze_context.hpp"
#include "hal/host_memory.hpp"
#include "hal/pointer_registry.hpp"

namespace zehal::level_zero {

// Memory is USM of the driver's context (zeMemAlloc*), entered in a registry of the
// device's allocations (host memory in the backend's), which pointer_info and the queues'
// operand checks read. Queues are immediate command lists, events those of event pools of
// the context. Every method is thread-safe.
class ZeDevice final : public hal::Device {
public:
    ZeDevice(std::shared_ptr<DriverContext> driver, ze_device_handle_t device);
    ~ZeDevice() override;

    // Reads the properties; false with *why when the device cannot serve zehal.
    bool describe(std::string* why);

    const hal::DeviceProperties& properties() const override { return props_; }
    std::string_view backend_name() const override { return "level_zero"; }
    // True once a call returned DEVICE_LOST.
    bool lost() const noexcept override { return lost_.load(std::memory_order_acquire); }
    const std::vector<hal::MetricGroupInfo>& metric_groups() const override { return groups_.infos; }
    hal::TraceSource* trace_source() override { return nullptr; }
    // zeDeviceCanAccessPeer, passed through (devices of one driver).
    bool can_access_peer(const hal::Device& other) const override;
    // Devices of one driver share its context, where USM of one is an operand of the other's lists.
    bool copies_peer_memory(const hal::Device& other) const override;
    bool owns_event(const hal::Event& event) const noexcept override;

    // --- for the backend's queues and events ---
    const ZeApi& api() const noexcept { return driver_->api; }
    const DriverContext& driver() const noexcept { return *driver_; }
    ze_device_handle_t handle() const noexcept { return device_; }
    // The driver's ordinal of hal engine group `ordinal` (compute or copy).
    uint32_t ze_ordinal(uint32_t ordinal) const noexcept {
        return ordinal == hal::kCopyOrdinal ? copy_group_ : compute_group_;
    }
    // `r`, marking the device lost when it is DEVICE_LOST.
    ze_result_t check(ze_result_t r) noexcept;
    // A cache that places operands of this device's copies (hal::find_operand: memory of
    // this device, host memory of the backend, or host memory of another backend), for one
    // queue; the device must outlive it.
    hal::OperandCache operand_cache() const noexcept;

private:
    // hal::Device's hooks (hal/device.hpp): the arguments are checked.
    ze_result_t do_allocate(hal::MemoryKind kind, size_t size, size_t alignment, uint32_t flags, uint32_t ordinal,
                            void** out) override;
    ze_result_t do_free(void* ptr) override;
    ze_result_t do_pointer_info(const void* ptr, hal::PointerInfo* out) const override;
    ze_result_t do_check_operand(const void* ptr, size_t size) const override;
    ze_result_t do_create_queue(uint32_t ordinal, uint32_t index, std::shared_ptr<hal::Queue>* out) override;
    ze_result_t do_create_event_pool(uint32_t count, uint32_t flags, std::shared_ptr<hal::EventPool>* out) override;
    ze_result_t do_create_module(hal::ModuleFormat format, std::span<const uint8_t> binary,
                                 std::string_view build_flags, std::shared_ptr<hal::Module>* out,
                                 std::string* log) override;
    ze_result_t do_global_timestamps(uint64_t* host_ns, uint64_t* device_ticks) override;
    ze_result_t do_export_dma_buf(uint32_t group, int* fd, size_t* size) override;
    ze_result_t do_import_dma_buf(int fd, size_t size, void** out) override;
    // zeDeviceGetP2PProperties, passed through (devices of one driver).
    ze_result_t do_peer_properties(const hal::Device& other, hal::PeerProperties* out) const override;

    // Engine groups, memory and import capability into props_; false with *why.
    bool describe_engines(std::string* why);
    // Metric groups into groups_ (none when the driver has no metrics) and whether their
    // export memory can be had.
    void describe_metrics();

    const std::shared_ptr<DriverContext> driver_;
    const ze_device_handle_t device_;
    hal::DeviceProperties props_;
    MetricGroups groups_;
    uint32_t compute_group_ = 0;
    uint32_t copy_group_ = 0;
    bool dma_buf_import_ = false;

    std::atomic<bool> lost_{false};
    hal::PointerRegistry memory_;                      // device, shared and imported allocations
    hal::DeviceMemoryListing listing_{memory_, this};  // memory_ listed while the device lives
};

}  // namespace zehal::level_zero
