// Cost of kernel and synchronized timestamp queries and of global_timestamps, beside a
// host clock read (what timing on the host alone costs).
#include <vector>

#include "benchmarks.hpp"
#include "common/clock.hpp"

namespace zehal::bench {

namespace {

// Average µs of `calls` calls of `f`; false when a call failed.
template <typename F>
bool time_us(size_t calls, F&& f, double* us) {
    const uint64_t t0 = host_now_ns();
    for (size_t i = 0; i < calls; ++i)
        if (!f()) return false;
    *us = static_cast<double>(host_now_ns() - t0) / 1e3 / static_cast<double>(calls);
    return true;
}

Row row(const char* name, double value, double baseline) {
    Row r;
    r.suite = "timestamps";
    r.name = name;
    r.value = value;
    r.unit = "us";
    r.baseline = baseline;
    r.baseline_name = "clock_gettime";
    r.ratio = value > 0 ? baseline / value : 0;
    return r;
}

}  // namespace

std::vector<Row> timestamp_query(const hal::DeviceRef& device, const Options& options) {
    std::vector<Row> rows;
    if (!device || !(device->properties().timestamp_flags & hal::kTimestampKernel)) return rows;
    const size_t calls = options.quick ? 2'000 : 200'000;

    // The host clock alone, the baseline of every row.
    volatile uint64_t sink = 0;
    double clock_us = 0;
    time_us(
        calls, [&] { return (sink = sink + host_now_ns()), true; }, &clock_us);

    double global_us = 0;
    uint64_t host = 0;
    uint64_t ticks = 0;
    if (time_us(
            calls, [&] { return device->global_timestamps(&host, &ticks) == ZE_RESULT_SUCCESS; }, &global_us))
        rows.push_back(row("global_timestamps", global_us, clock_us));

    // One signalled timestamp event: a barrier on a queue of the device.
    const bool synchronized = device->properties().timestamp_flags & hal::kTimestampSynchronized;
    std::shared_ptr<hal::EventPool> pool;
    hal::EventRef event;
    std::shared_ptr<hal::Queue> queue;
    const uint32_t flags = hal::kPoolHostVisible |
                           (synchronized ? hal::kPoolKernelMappedTimestamp : hal::kPoolKernelTimestamp);
    if (device->create_event_pool(1, flags, &pool) != ZE_RESULT_SUCCESS ||
        pool->event(0, &event) != ZE_RESULT_SUCCESS ||
        device->create_queue(hal::kComputeOrdinal, 0, &queue) != ZE_RESULT_SUCCESS ||
        queue->append_barrier(event, {}) != ZE_RESULT_SUCCESS ||
        event->host_synchronize(kWaitForever) != ZE_RESULT_SUCCESS)
        return rows;

    std::vector<hal::KernelTimestampResult> out(device->properties().subdevices + 1);
    double kernel_us = 0;
    if (time_us(
            calls,
            [&] {
                uint32_t n = static_cast<uint32_t>(out.size());
                return event->query_kernel_timestamps(&n, out.data()) == ZE_RESULT_SUCCESS;
            },
            &kernel_us))
        rows.push_back(row("kernel timestamp query", kernel_us, clock_us));
    double sync_us = 0;
    if (synchronized && time_us(
                            calls,
                            [&] {
                                uint32_t n = static_cast<uint32_t>(out.size());
                                return event->query_synchronized_timestamps(&n, out.data()) == ZE_RESULT_SUCCESS;
                            },
                            &sync_us))
        rows.push_back(row("synchronized timestamp query", sync_us, clock_us));
    return rows;
}

}  // namespace zehal::bench
