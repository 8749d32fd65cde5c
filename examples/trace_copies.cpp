// A C++ tool on zehal's public C++ API: the backends found here, then a tracer over the
// default device's first tracer-based metric group while eight copies run, and the decoded
// entries counted per metric. Exit status 0 on success, 2 when the device has no tracer.
#include <zehal/zehal.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

int run() {
    for (const zehal::Backend& b : zehal::backends())
        std::printf("backend %s: %s\n", b.name.c_str(),
                    b.available ? (std::to_string(b.device_count) + " device(s)").c_str() : b.reason.c_str());
    const zehal::Device device = zehal::Device::default_device();
    std::vector<zehal::MetricGroup> groups;
    for (const zehal::MetricGroup& g : zehal::MetricGroup::of(device))
        if (g.tracer_based()) {
            groups.push_back(g);
            break;
        }
    if (groups.empty()) {
        std::printf("trace_copies: %s has no tracer\n", device.properties().name);
        return 2;
    }
    std::printf("group: %s\n", groups[0].properties().name);

    zehal::MetricGroup::activate(device, groups);
    std::vector<uint8_t> raw;
    zehal::Tracer tracer(device, groups);
    zehal::Decoder decoder(tracer);
    tracer.enable();
    {
        zehal::Dma dma(device);
        zehal::Buffer src = zehal::Area::host().map(1 << 20);
        zehal::Buffer dst = zehal::Area::device(device).map(1 << 20);
        for (int i = 0; i < 8; ++i) dma.copy(dst, src).wait();
    }
    tracer.disable();
    for (std::vector<uint8_t> chunk = tracer.read(); !chunk.empty(); chunk = tracer.read())
        raw.insert(raw.end(), chunk.begin(), chunk.end());
    std::printf("raw: %zu bytes, %llu records dropped\n", raw.size(),
                static_cast<unsigned long long>(tracer.dropped()));
    if (raw.empty()) return 1;

    const zehal::Decoded decoded = decoder.decode(raw);
    std::vector<size_t> per_metric(decoded.metrics.size());
    for (const zehal_metric_entry_t& e : decoded.entries) ++per_metric[e.metric_index];
    for (size_t i = 0; i < per_metric.size(); ++i)
        if (per_metric[i]) std::printf("metric %s: %zu entries\n", decoded.metrics[i].properties().name, per_metric[i]);
    zehal::MetricGroup::activate(device, {});
    std::printf("trace_copies: ok\n");
    return 0;
}

}  // namespace

int main() {
    try {
        return run();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "trace_copies: %s\n", e.what());
        return 1;
    }
}
