#include "hal/sim/sim_config.hpp"

#include <cerrno>
#include <cstdlib>
#include <string>

#include "hal/trace_record.hpp"

namespace zehal::sim {

namespace {

// ZEHAL_SIM_<name> as an unsigned integer (decimal, or 0x hex); nothing when unset or
// malformed (empty, signed, trailing characters, out of range).
std::optional<uint64_t> env_u64(const char* name) {
    const std::string var = std::string("ZEHAL_SIM_") + name;
    const char* text = std::getenv(var.c_str());
    if (!text || !*text || *text == '-' || *text == '+' || *text == ' ') return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text, &end, 0);
    if (errno != 0 || end == text || *end != '\0') return std::nullopt;
    return static_cast<uint64_t>(v);
}

template <typename T>
void override_from_env(const char* name, T* field) {
    if (auto v = env_u64(name); v && *v <= static_cast<uint64_t>(static_cast<T>(~T{0}))) *field = static_cast<T>(*v);
}

}  // namespace

SimConfig SimConfig::from_env() {
    SimConfig c;
    override_from_env("COMPUTE_ENGINES", &c.compute_engines);
    override_from_env("COPY_ENGINES", &c.copy_engines);
    override_from_env("MEMORY_BYTES", &c.memory_bytes);
    override_from_env("TIMER_HZ", &c.timer_hz);
    override_from_env("KERNEL_TIMESTAMP_VALID_BITS", &c.kernel_timestamp_valid_bits);
    override_from_env("TIMESTAMP_VALID_BITS", &c.timestamp_valid_bits);
    override_from_env("START_TICKS", &c.start_ticks);
    override_from_env("SUBDEVICES", &c.subdevices);
    override_from_env("TRACE_BUFFER_BYTES", &c.trace_buffer_bytes);
    override_from_env("BANDWIDTH_BYTES_PER_S", &c.bandwidth_bytes_per_s);
    if (auto v = env_u64("FAIL_ALLOCATION_AFTER")) c.fail_allocation_after = *v;
    override_from_env("ASYNC_RECORDS_PER_S", &c.async_records_per_s);
    override_from_env("ASYNC_BURST_RECORDS", &c.async_burst_records);
    return c;
}

std::string SimConfig::problem() const {
    auto range = [](const char* field, uint64_t value, uint64_t lo, uint64_t hi) -> std::string {
        if (value >= lo && value <= hi) return {};
        return std::string(field) + " = " + std::to_string(value) + " (must be " + std::to_string(lo) + ".." +
               std::to_string(hi) + ")";
    };
    for (std::string p : {range("compute_engines", compute_engines, 1, kMaxEngines),
                          range("copy_engines", copy_engines, 0, kMaxEngines),
                          range("memory_bytes", memory_bytes, 1, ~0ull), range("timer_hz", timer_hz, 1, kMaxTimerHz),
                          range("kernel_timestamp_valid_bits", kernel_timestamp_valid_bits, 1, 64),
                          range("timestamp_valid_bits", timestamp_valid_bits, 1, 64),
                          range("subdevices", subdevices, 0, kMaxSubdevices),
                          range("trace_buffer_bytes", trace_buffer_bytes, sizeof(hal::TraceRecord), kMaxTraceBufferBytes),
                          range("async_burst_records", async_burst_records, 0, kMaxAsyncBurstRecords)})
        if (!p.empty()) return p;
    return {};
}

ze_result_t SimConfig::validate() const {
    return problem().empty() ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

}  // namespace zehal::sim
