// The public C++ API over libzehal.so: devices, areas, DMA, events, tracer and decoder, and
// the C functions added for it, on their success paths and on bad input.
#include <gtest/gtest.h>

#include <zehal/zehal.hpp>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

TEST(CppApi, DevicesAndProperties) {
    const std::vector<zehal::Device> devices = zehal::Device::all("sim");
    ASSERT_FALSE(devices.empty());
    const zehal::Device d = zehal::Device::get("sim", 0);
    EXPECT_EQ(d, devices.front());
    const zehal_device_properties_t p = d.properties();
    EXPECT_STREQ(p.backend, "sim");
    EXPECT_GT(p.timer_hz, 0u);
    EXPECT_GT(std::strlen(p.name), 0u);
    const auto [host, ticks] = d.global_timestamps();
    EXPECT_GT(host, 0u);
    (void)ticks;
    EXPECT_EQ(std::string(zehal_version()).empty(), false);
}

TEST(CppApi, BadDevicesThrowWithTheCode) {
    try {
        zehal::Device::get("no such backend");
        FAIL();
    } catch (const zehal::Error& e) {
        EXPECT_EQ(e.code(), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    EXPECT_THROW(zehal::Device::get("sim", 1000), zehal::Error);
    uint32_t n = 0;
    EXPECT_EQ(zehal_device_count("sim", nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zehal_device_count("nope", &n), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    zehal_device_properties_t p{};
    EXPECT_EQ(zehal_device_get_properties(nullptr, &p), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_device_get_properties(zehal::Device::get("sim").handle(), nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST(CppApi, CopyRoundTripWithTimestamps) {
    const zehal::Device d = zehal::Device::get("sim");
    constexpr size_t kBytes = 64u << 10;
    zehal::Buffer src = zehal::Area::host().map(kBytes);
    zehal::Buffer mid = zehal::Area::device(d).map(kBytes);
    zehal::Buffer back = zehal::Area::host(4096).map(kBytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(back.data()) % 4096, 0u);
    std::memset(src.data(), 0x3C, kBytes);
    zehal::Dma dma(d);
    const zehal::EventPool pool(d, 1, zehal::Timestamps::mapped);
    const zehal::Event e = pool.event(0);
    zehal::Request r = dma.copy(mid, src, &e);
    r.wait();
    EXPECT_TRUE(r.done());
    EXPECT_TRUE(e.query());
    EXPECT_EQ(e.kernel_timestamps().size(), 1u);
    const auto ns = e.synchronized_timestamps();
    ASSERT_EQ(ns.size(), 1u);
    EXPECT_LE(ns[0].global.kernel_start, ns[0].global.kernel_end);
    dma.copy(back, mid).wait();
    EXPECT_EQ(static_cast<unsigned char*>(back.data())[kBytes - 1], 0x3C);
    dma.copy_detached(back.data(), src.data(), 64);
    dma.barrier();
}

TEST(CppApi, BadCopiesThrow) {
    const zehal::Device d = zehal::Device::get("sim");
    zehal::Buffer small = zehal::Area::host().map(64);
    zehal::Buffer big = zehal::Area::host().map(128);
    zehal::Dma dma(d);
    EXPECT_THROW(dma.copy(small, big), zehal::Error);
    EXPECT_THROW(dma.copy(small.data(), small.data(), 64), zehal::Error);  // overlapping
    EXPECT_THROW(dma.copy(nullptr, big.data(), 64), zehal::Error);
    EXPECT_THROW(dma.copy(small.data(), big.data(), 0), zehal::Error);
    EXPECT_THROW(zehal::Area::host(48), zehal::Error);
    EXPECT_THROW(zehal::Area::host().map(0), zehal::Error);
    EXPECT_THROW(zehal::Dma(d, 7, 0), zehal::Error);
    EXPECT_THROW(zehal::EventPool(d, 0), zehal::Error);
    // The C function under the C++ copy: a NULL or foreign engine, a destroyed event.
    EXPECT_EQ(aml_dma_ze_copy_signal(nullptr, nullptr, small.data(), big.data(), 64, nullptr), -AML_EINVAL);
    aml_dma fake{};
    EXPECT_EQ(aml_dma_ze_copy_signal(&fake, nullptr, small.data(), big.data(), 64, nullptr), -AML_EINVAL);
}

TEST(CppApi, ThreadsShareOneEngine) {
    const zehal::Device d = zehal::Device::get("sim");
    zehal::Dma dma(d);
    zehal::Area host = zehal::Area::host();
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            zehal::Buffer a = host.map(4096), b = host.map(4096);
            for (int i = 0; i < 100; ++i) dma.copy(b, a).wait();
        });
    for (auto& t : threads) t.join();
}

TEST(CppApi, TracerAndDecoder) {
    const zehal::Device d = zehal::Device::get("sim");
    std::vector<zehal::MetricGroup> tracer_groups;
    for (const zehal::MetricGroup& g : zehal::MetricGroup::of(d))
        if (g.tracer_based()) {
            tracer_groups.push_back(g);
            break;
        }
    ASSERT_EQ(tracer_groups.size(), 1u);
    EXPECT_THROW(zehal::Tracer(d, tracer_groups), zehal::Error);  // not activated yet
    zehal::MetricGroup::activate(d, tracer_groups);
    {
        zehal::Tracer tracer(d, tracer_groups);
        zehal::Decoder decoder(tracer);
        EXPECT_GT(decoder.decodable_metrics(), 0u);
        EXPECT_THROW(zehal::Tracer(d, tracer_groups), zehal::Error);  // one per device
        tracer.enable();
        zehal::Dma dma(d);
        zehal::Buffer a = zehal::Area::host().map(4096), b = zehal::Area::device(d).map(4096);
        for (int i = 0; i < 10; ++i) dma.copy(b, a).wait();
        tracer.disable();
        std::vector<uint8_t> raw;
        for (std::vector<uint8_t> chunk = tracer.read(); !chunk.empty(); chunk = tracer.read())
            raw.insert(raw.end(), chunk.begin(), chunk.end());
        EXPECT_EQ(raw.size() % ZEHAL_METRIC_RECORD_SIZE, 0u);
        EXPECT_GE(decoder.decode(raw).size(), 10u);
    }
    zehal::MetricGroup::activate(d, {});
}

}  // namespace
