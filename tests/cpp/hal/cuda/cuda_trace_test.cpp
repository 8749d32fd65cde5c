// The CUDA trace source: CUPTI activity records as canonical records, and the export group:
// dma-buf export, import as a second mapping, and kind-6 records for writes into it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/backend_devices.hpp"
#include "hal/metric_info.hpp"
#include "hal/trace_record.hpp"

namespace zehal::test {
namespace {

#ifndef ZEHAL_SPIRV_KERNEL_DIR
#define ZEHAL_SPIRV_KERNEL_DIR ""
#endif

uint32_t group_index(const hal::DeviceRef& dev, uint32_t type_flag) {
    const auto& groups = dev->metric_groups();
    for (uint32_t i = 0; i < groups.size(); ++i)
        if ((groups[i].sampling_types & hal::kSamplingTracerBased) && (groups[i].type_flags & type_flag)) return i;
    return ~0u;
}

// Drains `source` until `enough(records)` holds or the hang guard passes.
template <typename Enough>
std::vector<hal::TraceRecord> drain_until(hal::TraceSource& source, Enough&& enough, uint64_t* lost) {
    std::vector<hal::TraceRecord> all;
    const uint64_t deadline = host_now_ns() + 10'000'000'000ull;
    hal::TraceRecord chunk[256];
    while (!enough(all) && host_now_ns() < deadline) {
        const size_t n = source.drain(chunk, sizeof(chunk), lost);
        all.insert(all.end(), chunk, chunk + n / sizeof(hal::TraceRecord));
        if (n == 0) usleep(1000);
    }
    return all;
}

#define ZEHAL_REQUIRE_TRACER(dev) \
    ZEHAL_REQUIRE_CUDA(dev);      \
    if (!(dev)->properties().tracer) GTEST_SKIP() << "no CUPTI: no tracer"

TEST(CudaTrace, StartRules) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_TRACER(dev);
    hal::TraceSource* source = dev->trace_source();
    ASSERT_NE(source, nullptr);
    EXPECT_EQ(source->start({}), ZE_RESULT_ERROR_INVALID_SIZE);
    const uint32_t bad[] = {99};
    EXPECT_EQ(source->start(bad), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_GT(source->capacity(), 0u);
    EXPECT_EQ(source->drain(nullptr, 64, nullptr), 0u);
    EXPECT_EQ(source->stop(), ZE_RESULT_SUCCESS);
}

// A CUDA device's trace source, its per-command group, a copy queue and 1 MiB of host and
// device memory: what the engine-record tests share.
class CudaEngineTrace : public ::testing::Test {
protected:
    void SetUp() override {
        ZEHAL_REQUIRE_TRACER(dev);
        source = dev->trace_source();
        engine = group_index(dev, hal::kGroupOther);
        ASSERT_NE(engine, ~0u);
        g = &dev->metric_groups()[engine];
        ASSERT_EQ(dev->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
        a.emplace(dev, hal::MemoryKind::host, 1 << 20);
        b.emplace(dev, hal::MemoryKind::device, 1 << 20);
    }

    hal::DeviceRef dev;
    hal::TraceSource* source = nullptr;
    uint32_t engine = ~0u;
    const hal::MetricGroupInfo* g = nullptr;
    std::shared_ptr<hal::Queue> q;
    std::optional<Memory> a, b;
};

TEST_F(CudaEngineTrace, CommandsBecomeEngineRecords) {
    const hal::MetricGroupInfo& g = *this->g;

    const uint32_t groups[] = {engine};
    ASSERT_EQ(source->start(groups), ZE_RESULT_SUCCESS);
    uint64_t before_ticks = 0, after_ticks = 0, host = 0;
    ASSERT_EQ(dev->global_timestamps(&host, &before_ticks), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(b->ptr, a->ptr, 1 << 20, nullptr, {}), ZE_RESULT_SUCCESS);
    const uint32_t pattern = 0x01020304;
    ASSERT_EQ(q->append_fill(b->ptr, &pattern, 4, 4096, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    ASSERT_EQ(dev->global_timestamps(&host, &after_ticks), ZE_RESULT_SUCCESS);
    uint64_t lost = 0;
    const size_t per_command = g.metrics.size();
    auto records = drain_until(
        *source, [&](const std::vector<hal::TraceRecord>& r) { return r.size() >= 2 * per_command; }, &lost);
    EXPECT_EQ(source->stop(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(lost, 0u);
    ASSERT_GE(records.size(), 2 * per_command);
    EXPECT_GE(source->produced(), records.size());

    std::map<uint64_t, uint64_t> start_of;  // correlation id -> start ticks
    bool copy_bytes = false, fill_bytes = false;
    for (const hal::TraceRecord& r : records) {
        EXPECT_EQ(r.kind, hal::kRecordSample);
        EXPECT_EQ(r.size, sizeof(hal::TraceRecord));
        EXPECT_EQ(r.subdevice, hal::kRootDevice);
        ASSERT_GE(r.metric, g.first_metric_id);
        ASSERT_LT(r.metric, g.first_metric_id + g.metrics.size());
        const std::string& name = g.metrics[r.metric - g.first_metric_id].name;
        EXPECT_LE(before_ticks, r.ticks) << name;
        EXPECT_LE(r.ticks, after_ticks) << name;
        if (name == "CommandStart") start_of[r.value] = r.ticks;
        if (name == "CommandEnd") {
            ASSERT_TRUE(start_of.count(r.value));
            EXPECT_LE(start_of[r.value], r.ticks);
        }
        if (name == "BytesMoved") {
            copy_bytes |= r.value == (1u << 20);
            fill_bytes |= r.value == 4096;
        }
    }
    EXPECT_TRUE(copy_bytes);
    EXPECT_TRUE(fill_bytes);
}

// CUPTI hands records over late: a restarted run (as when a trace hands the device's tracer
// to the program) gets no record of a command that ran before it started.
TEST_F(CudaEngineTrace, ARestartedRunHoldsOnlyItsOwnCommands) {
    const hal::MetricGroupInfo& g = *this->g;
    const uint32_t groups[] = {engine};
    size_t bytes_metric = g.metrics.size();
    for (size_t i = 0; i < g.metrics.size(); ++i)
        if (g.metrics[i].name == "BytesMoved") bytes_metric = i;
    ASSERT_LT(bytes_metric, g.metrics.size());

    for (int round = 0; round < 5; ++round) {
        ASSERT_EQ(source->start(groups), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->append_copy(b->ptr, a->ptr, 1 << 20, nullptr, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        ASSERT_EQ(source->start(groups), ZE_RESULT_SUCCESS);  // a restart, the copy's records pending
        ASSERT_EQ(q->append_copy(b->ptr, a->ptr, 4096, nullptr, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        uint64_t lost = 0;
        // CUPTI delivers a device's records in order: once the second copy's are in, the
        // first copy's were handed over too.
        auto records = drain_until(
            *source,
            [&](const std::vector<hal::TraceRecord>& r) {
                return std::any_of(r.begin(), r.end(), [&](const hal::TraceRecord& x) {
                    return x.metric == g.first_metric_id + bytes_metric && x.value == 4096;
                });
            },
            &lost);
        EXPECT_EQ(source->stop(), ZE_RESULT_SUCCESS);
        EXPECT_EQ(records.size(), g.metrics.size()) << "round " << round;
        for (const hal::TraceRecord& r : records) {
            if (r.metric == g.first_metric_id + bytes_metric) {
                EXPECT_EQ(r.value, 4096u) << "round " << round;
            }
        }
    }
}

TEST(CudaTrace, ExportImportAndWritesBecomeKind6Records) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_TRACER(dev);
    const uint32_t exp = group_index(dev, hal::kGroupExportDmaBuf);
    const uint32_t engine = group_index(dev, hal::kGroupOther);
    ASSERT_NE(exp, ~0u);
    int fd = -1;
    size_t size = 0;
    EXPECT_EQ(dev->export_dma_buf(engine, &fd, &size), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(dev->export_dma_buf(99, &fd, &size), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    if (!dev->properties().dma_buf_export) {
        EXPECT_EQ(dev->export_dma_buf(exp, &fd, &size), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        GTEST_SKIP() << "the device does not export dma-bufs";
    }
    ASSERT_EQ(dev->export_dma_buf(exp, &fd, &size), ZE_RESULT_SUCCESS);
    ASSERT_GE(fd, 0);
    ASSERT_GT(size, 0u);
    int again = -1;
    size_t size_again = 0;
    ASSERT_EQ(dev->export_dma_buf(exp, &again, &size_again), ZE_RESULT_SUCCESS);
    EXPECT_EQ(again, fd);  // the group's fd
    EXPECT_EQ(size_again, size);

    void* p = nullptr;
    EXPECT_EQ(dev->import_dma_buf(fd, size + 1, &p), ZE_RESULT_ERROR_INVALID_SIZE);
    const int memfd = memfd_create("not-a-dma-buf", 0);
    ASSERT_GE(memfd, 0);
    ASSERT_EQ(ftruncate(memfd, 4096), 0);
    EXPECT_EQ(dev->import_dma_buf(memfd, 4096, &p), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    close(memfd);

    const int dup_fd = dup(fd);
    ASSERT_GE(dup_fd, 0);
    void* view = nullptr;
    void* other = nullptr;
    ASSERT_EQ(dev->import_dma_buf(dup_fd, size, &view), ZE_RESULT_SUCCESS);
    ASSERT_EQ(dev->import_dma_buf(fd, 4096, &other), ZE_RESULT_SUCCESS);
    close(dup_fd);  // not taken over: the imports stay valid
    hal::PointerInfo info;
    ASSERT_EQ(dev->pointer_info(view, &info), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(info.imported);
    EXPECT_EQ(info.kind, hal::MemoryKind::device);
    EXPECT_EQ(info.size, size);

    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    hal::TraceSource* source = dev->trace_source();
    const uint32_t groups[] = {exp};
    ASSERT_EQ(source->start(groups), ZE_RESULT_SUCCESS);
    const uint8_t ab = 0xAB;
    ASSERT_EQ(q->append_fill(view, &ab, 1, 4096, nullptr, {}), ZE_RESULT_SUCCESS);
    Memory host(dev, hal::MemoryKind::host, 64);
    const uint32_t word = 0x12345678;
    std::memcpy(host.ptr, &word, 4);
    ASSERT_EQ(q->append_copy(static_cast<char*>(view) + 8, host.ptr, 64, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    uint64_t lost = 0;
    auto records = drain_until(
        *source, [](const std::vector<hal::TraceRecord>& r) { return r.size() >= 2; }, &lost);
    EXPECT_EQ(source->stop(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(records.size(), 2u);
    const hal::MetricGroupInfo& g = dev->metric_groups()[exp];
    for (const hal::TraceRecord& r : records) {
        EXPECT_EQ(r.kind, hal::kRecordExportWrite);
        EXPECT_EQ(r.metric, g.first_metric_id);
    }
    EXPECT_EQ(records[0].value, 0xABABABABu);
    EXPECT_EQ(records[1].value, word);

    // The two imports map the same memory: what the fill wrote shows through the other.
    EXPECT_EQ(read_back(dev, *q, other, 8), std::vector<uint8_t>(8, 0xAB));
    EXPECT_GE(fcntl(fd, F_GETFD), 0);  // the group's fd stays open
    EXPECT_EQ(dev->free(view), ZE_RESULT_SUCCESS);
    EXPECT_EQ(dev->free(view), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(dev->free(other), ZE_RESULT_SUCCESS);
}

// A CUDA device with a tracer whose export group exported its buffer (fd_, size_).
class CudaExportGroup : public ::testing::Test {
protected:
    void SetUp() override {
        ZEHAL_REQUIRE_TRACER(dev_);
        if (!dev_->properties().dma_buf_export) GTEST_SKIP() << "the device does not export dma-bufs";
        exp_ = group_index(dev_, hal::kGroupExportDmaBuf);
        ASSERT_EQ(dev_->export_dma_buf(exp_, &fd_, &size_), ZE_RESULT_SUCCESS);
    }
    hal::DeviceRef dev_;
    uint32_t exp_ = ~0u;
    int fd_ = -1;
    size_t size_ = 0;
};

// A kernel whose first global pointer argument is into imported export memory is an export
// write, as on the sim device: the word there once the kernel ran.
TEST_F(CudaExportGroup, AKernelWritingIntoExportMemoryIsAKind6Record) {
    const hal::DeviceRef& dev = dev_;
    void* view = nullptr;
    ASSERT_EQ(dev->import_dma_buf(fd_, size_, &view), ZE_RESULT_SUCCESS);
    // A SPIR-V kernel: its signature says which arguments are global pointers (a native
    // PTX module's parameters are plain values to zehal).
    std::ifstream in(std::string(ZEHAL_SPIRV_KERNEL_DIR) + "/buffers.spv", std::ios::binary);
    const std::vector<uint8_t> spirv{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    hal::ModuleRef m;
    std::string log;
    const ze_result_t built = dev->create_module(hal::ModuleFormat::spirv, spirv, "", &m, &log);
    if (built == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE || spirv.empty()) {
        EXPECT_EQ(dev->free(view), ZE_RESULT_SUCCESS);
        GTEST_SKIP() << "no SPIR-V kernels here: " << log;
    }
    ASSERT_EQ(built, ZE_RESULT_SUCCESS) << log;
    hal::KernelRef k;
    ASSERT_EQ(m->create_kernel("fill_uint", &k), ZE_RESULT_SUCCESS);
    const void* at = static_cast<char*>(view) + 16;
    const uint32_t value = 0x5EED5EEDu;
    ASSERT_EQ(k->set_argument(0, sizeof at, &at), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_argument(1, sizeof value, &value), ZE_RESULT_SUCCESS);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kComputeOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    hal::TraceSource* source = dev->trace_source();
    const uint32_t groups[] = {exp_};
    ASSERT_EQ(source->start(groups), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_launch(*k, {1, 1, 1}, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    uint64_t lost = 0;
    auto records = drain_until(
        *source, [](const std::vector<hal::TraceRecord>& r) { return !r.empty(); }, &lost);
    EXPECT_EQ(source->stop(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].kind, hal::kRecordExportWrite);
    EXPECT_EQ(records[0].value, value);
    EXPECT_EQ(dev->free(view), ZE_RESULT_SUCCESS);
}

TEST_F(CudaExportGroup, NoFdLeakOverExportImportCycles) {
    const hal::DeviceRef& dev = dev_;
    const uint32_t exp = exp_;
    const int probe_before = dup(0);
    close(probe_before);
    for (int i = 0; i < 1000; ++i) {
        int f = -1;
        size_t s = 0;
        void* p = nullptr;
        ASSERT_EQ(dev->export_dma_buf(exp, &f, &s), ZE_RESULT_SUCCESS);
        ASSERT_EQ(dev->import_dma_buf(f, s, &p), ZE_RESULT_SUCCESS);
        ASSERT_EQ(dev->free(p), ZE_RESULT_SUCCESS);
    }
    const int probe_after = dup(0);
    close(probe_after);
    EXPECT_EQ(probe_after, probe_before);  // the lowest free fd did not move
}

}  // namespace
}  // namespace zehal::test
