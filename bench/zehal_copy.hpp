// zehal's side of the Level Zero copy benchmarks: a device through the C++ API, an engine of
// it, and host and device buffers of `bytes`; a copy is the host-to-device copy and its wait.
#pragma once

#include <cstring>
#include <string>

#include "zehal/zehal.hpp"

namespace zehal::bench {

class ZehalCopy {
public:
    // Device 0 of `backend`, on its copy engine group when it has one (ordinal 1), else on
    // compute engine 0.
    ZehalCopy(const std::string& backend, size_t bytes)
        : device_(Device::get(backend, 0)),
          ordinal_(device_.properties().copy_engines > 0 ? 1 : 0),
          dma_(device_, ordinal_, 0),
          host_(Area::host().map(bytes)),
          dev_(Area::device(device_).map(bytes)) {
        std::memset(host_.data(), 1, bytes);
    }
    // Copies `bytes` from the host buffer to the device buffer and waits for it.
    void copy(size_t bytes) { dma_.copy(dev_.data(), host_.data(), bytes).wait(); }
    const Device& device() const { return device_; }
    // zehal's engine group ordinal: 1 (copy) or 0 (compute).
    uint32_t ordinal() const { return ordinal_; }

private:
    Device device_;
    uint32_t ordinal_;
    Dma dma_;
    Buffer host_;
    Buffer dev_;
};

}  // namespace zehal::bench
