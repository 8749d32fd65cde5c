// zehal's public C++ API: devices.
#pragma once

#include <zehal/device.h>
#include <zehal/error.hpp>
#include <zehal/events.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zehal {

// What probing one backend found.
struct Backend {
    std::string name;       // "level_zero", "cuda" or "sim"
    bool available;         // usable here
    uint32_t device_count;  // its devices; 0 when not available
    std::string reason;     // why it is not available; empty when it is
};

// Every known backend, available or not, in registry order (level_zero, cuda, sim).
inline std::vector<Backend> backends() {
    uint32_t n = 0;
    detail::check(zehal_backend_get(&n, nullptr), "zehal::backends");
    std::vector<zehal_backend_properties_t> c(n);
    if (n) detail::check(zehal_backend_get(&n, c.data()), "zehal::backends");
    std::vector<Backend> out;
    out.reserve(n);
    for (uint32_t i = 0; i < n; ++i)
        out.push_back(Backend{c[i].name, c[i].available != 0, c[i].device_count, c[i].reason});
    return out;
}

// The default backend's name: ZEHAL_BACKEND when set, else the first available one with a
// device.
inline std::string default_backend() {
    char name[ZEHAL_MAX_BACKEND_NAME] = {};
    detail::check(zehal_backend_get_default(name), "zehal::default_backend");
    return name;
}

// A device of some backend. Devices live until the process exits: a Device is a cheap,
// copyable reference.
class Device {
public:
    // Device `index` of `backend` ("sim", "cuda", "level_zero"; empty: the default backend).
    static Device get(const std::string& backend = {}, uint32_t index = 0) {
        zehal_device_t d = nullptr;
        detail::check(zehal_device_get(backend.empty() ? nullptr : backend.c_str(), index, &d), "zehal::Device::get");
        return Device(d);
    }
    // Every device of `backend` (empty: the default backend).
    static std::vector<Device> all(const std::string& backend = {}) {
        uint32_t n = 0;
        const char* b = backend.empty() ? nullptr : backend.c_str();
        detail::check(zehal_device_count(b, &n), "zehal::Device::all");
        std::vector<Device> out;
        for (uint32_t i = 0; i < n; ++i) out.push_back(get(backend, i));
        return out;
    }
    // The first device of the default backend.
    static Device default_device() { return get(); }

    // What the device is: name, backend, memory, clock and engines.
    zehal_device_properties_t properties() const {
        zehal_device_properties_t p{};
        detail::check(zehal_device_get_properties(handle_, &p), "zehal::Device::properties");
        return p;
    }
    // (host ns of CLOCK_MONOTONIC_RAW, device ticks), sampled together.
    std::pair<uint64_t, uint64_t> global_timestamps() const {
        uint64_t host = 0, ticks = 0;
        detail::check(zehal_device_get_global_timestamps(handle_, &host, &ticks), "zehal::Device::global_timestamps");
        return {host, ticks};
    }
    // True when this device touches `peer`'s device memory directly (copies between devices
    // of one backend run either way).
    bool can_access_peer(const Device& peer) const {
        uint8_t value = 0;
        detail::check(zehal_device_can_access_peer(handle_, peer.handle_, &value), "zehal::Device::can_access_peer");
        return value != 0;
    }
    // How this device reaches `peer`'s memory.
    zehal_peer_properties_t peer_properties(const Device& peer) const {
        zehal_peer_properties_t p{};
        detail::check(zehal_device_get_peer_properties(handle_, peer.handle_, &p), "zehal::Device::peer_properties");
        return p;
    }
    // The C handle, for the C API.
    zehal_device_t handle() const noexcept { return handle_; }

    // The same device.
    friend bool operator==(const Device& a, const Device& b) noexcept { return a.handle_ == b.handle_; }
    friend bool operator!=(const Device& a, const Device& b) noexcept { return !(a == b); }

private:
    explicit Device(zehal_device_t handle) : handle_(handle) {}
    zehal_device_t handle_;
};

}  // namespace zehal
