// A device that forwards everything to another one, for tests to change what a device offers
// the metrics layer (its trace or counter source) and keep the rest.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/device.hpp"

namespace zehal::metrics::test {

// Forwards every call to the device it wraps; subclasses override what they change.
class WrappedDevice : public hal::Device {
public:
    explicit WrappedDevice(hal::DeviceRef d) : d_(std::move(d)) {}
    const hal::DeviceProperties& properties() const override { return d_->properties(); }
    std::string_view backend_name() const override { return d_->backend_name(); }
    bool lost() const noexcept override { return d_->lost(); }
    const std::vector<hal::MetricGroupInfo>& metric_groups() const override { return d_->metric_groups(); }
    hal::TraceSource* trace_source() override { return d_->trace_source(); }
    hal::CounterSource* counter_source() override { return d_->counter_source(); }
    bool owns_event(const hal::Event& e) const noexcept override { return d_->owns_event(e); }

private:
    ze_result_t do_allocate(hal::MemoryKind k, size_t s, size_t a, uint32_t f, uint32_t o, void** out) override {
        return d_->allocate(k, s, a, f, o, out);
    }
    ze_result_t do_free(void* p) override { return d_->free(p); }
    ze_result_t do_pointer_info(const void* p, hal::PointerInfo* out) const override {
        return d_->pointer_info(p, out);
    }
    ze_result_t do_check_operand(const void* p, size_t size) const override { return d_->check_operand(p, size); }
    ze_result_t do_create_queue(uint32_t o, uint32_t i, std::shared_ptr<hal::Queue>* out) override {
        return d_->create_queue(o, i, out);
    }
    ze_result_t do_create_event_pool(uint32_t c, uint32_t f, std::shared_ptr<hal::EventPool>* out) override {
        return d_->create_event_pool(c, f, out);
    }
    ze_result_t do_create_module(hal::ModuleFormat f, std::span<const uint8_t> b, std::string_view flags,
                                 std::shared_ptr<hal::Module>* out, std::string* log) override {
        return d_->create_module(f, b, flags, out, log);
    }
    ze_result_t do_record_on_stream(uintptr_t s, const hal::EventRef& e, hal::StreamMark m) override {
        return d_->record_on_stream(s, e, m);
    }
    ze_result_t do_global_timestamps(uint64_t* h, uint64_t* t) override { return d_->global_timestamps(h, t); }
    ze_result_t do_export_dma_buf(uint32_t g, int* fd, size_t* size) override {
        return d_->export_dma_buf(g, fd, size);
    }
    ze_result_t do_import_dma_buf(int fd, size_t size, void** out) override {
        return d_->import_dma_buf(fd, size, out);
    }
    ze_result_t do_lose() override { return d_->lose(); }

    hal::DeviceRef d_;
};

}  // namespace zehal::metrics::test
