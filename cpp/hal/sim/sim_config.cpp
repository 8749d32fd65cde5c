#include "hal/sim/sim_config.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "hal/trace_record.hpp"

namespace zehal::sim {

namespace {

// Reads ZEHAL_SIM_* variables into a SimConfig, keeping the first malformed one.
class EnvReader {
public:
    explicit EnvReader(SimConfig* config) : config_(config) {}

    // ZEHAL_SIM_<NAME> into *field when set; `field_name` is NAME in lower case.
    template <typename T>
    void read(const char* field_name, T* field) {
        if (auto v = value(field_name, static_cast<uint64_t>(static_cast<T>(~T{0})))) *field = static_cast<T>(*v);
    }
    void read(const char* field_name, std::optional<uint64_t>* field) {
        if (auto v = value(field_name, ~uint64_t{0})) *field = *v;
    }

private:
    // The variable as an unsigned integer (decimal, or 0x hex) of at most `max`; nothing
    // when unset or empty, or when malformed (signed, blank, trailing characters, above
    // `max`), which is then recorded.
    std::optional<uint64_t> value(const char* field_name, uint64_t max) {
        std::string var = std::string("ZEHAL_SIM_") + field_name;
        for (char& ch : var) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        const char* text = std::getenv(var.c_str());
        if (!text || !*text) return std::nullopt;
        if (std::isdigit(static_cast<unsigned char>(*text))) {
            errno = 0;
            char* end = nullptr;
            const unsigned long long v = std::strtoull(text, &end, 0);
            if (errno == 0 && end != text && *end == '\0' && v <= max) return static_cast<uint64_t>(v);
        }
        if (config_->malformed.empty())
            config_->malformed = std::string(field_name) + " = \"" + text + "\" (not an unsigned integer of 0.." +
                                 std::to_string(max) + ", decimal or 0x hexadecimal)";
        return std::nullopt;
    }

    SimConfig* config_;
};

}  // namespace

SimConfig SimConfig::from_env() {
    SimConfig c;
    EnvReader env(&c);
    env.read("compute_engines", &c.compute_engines);
    env.read("copy_engines", &c.copy_engines);
    env.read("memory_bytes", &c.memory_bytes);
    env.read("timer_hz", &c.timer_hz);
    env.read("kernel_timestamp_valid_bits", &c.kernel_timestamp_valid_bits);
    env.read("timestamp_valid_bits", &c.timestamp_valid_bits);
    env.read("start_ticks", &c.start_ticks);
    env.read("subdevices", &c.subdevices);
    env.read("trace_buffer_bytes", &c.trace_buffer_bytes);
    env.read("bandwidth_bytes_per_s", &c.bandwidth_bytes_per_s);
    env.read("link_bandwidth_bytes_per_s", &c.link_bandwidth_bytes_per_s);
    env.read("devices", &c.devices);
    env.read("fail_allocation_after", &c.fail_allocation_after);
    env.read("async_records_per_s", &c.async_records_per_s);
    env.read("async_burst_records", &c.async_burst_records);
    return c;
}

std::string SimConfig::problem() const {
    if (!malformed.empty()) return malformed;
    auto range = [](const char* field, uint64_t value, uint64_t lo, uint64_t hi) -> std::string {
        if (value >= lo && value <= hi) return {};
        return std::string(field) + " = " + std::to_string(value) + " (must be " + std::to_string(lo) + ".." +
               std::to_string(hi) + ")";
    };
    for (std::string p :
         {range("compute_engines", compute_engines, 1, kMaxEngines),
          range("copy_engines", copy_engines, 0, kMaxEngines), range("memory_bytes", memory_bytes, 1, ~0ull),
          range("timer_hz", timer_hz, 1, kMaxTimerHz),
          range("kernel_timestamp_valid_bits", kernel_timestamp_valid_bits, 1, 64),
          range("timestamp_valid_bits", timestamp_valid_bits, 1, 64),
          range("subdevices", subdevices, 0, kMaxSubdevices), range("devices", devices, 1, kMaxDevices),
          range("trace_buffer_bytes", trace_buffer_bytes, sizeof(hal::TraceRecord), kMaxTraceBufferBytes),
          range("async_burst_records", async_burst_records, 0, kMaxAsyncBurstRecords)})
        if (!p.empty()) return p;
    return {};
}

ze_result_t SimConfig::validate() const {
    return problem().empty() ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

}  // namespace zehal::sim
