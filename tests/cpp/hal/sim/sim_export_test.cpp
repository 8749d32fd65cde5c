// Metric export memory on the sim device: memfd export, import as device memory, and
// export-write trace records from device commands.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <dirent.h>
#include <vector>

#include "hal/sim/sim_trace.hpp"
#include "hal/trace_record.hpp"
#include "support/sim_fixture.hpp"
#include "support/open_fds.hpp"

namespace zehal {
namespace {

using zehal::test::open_fds;

using hal::MemoryKind;
using test::kHangGuardNs;

// Index of a metric group without EXPORT_DMA_BUF.
uint32_t plain_group(const hal::DeviceRef& d) {
    const auto& groups = d->metric_groups();
    for (uint32_t i = 0; i < groups.size(); ++i)
        if (!(groups[i].type_flags & hal::kGroupExportDmaBuf)) return i;
    ADD_FAILURE() << "every group exports";
    return 0;
}

TEST(SimExport, ExportGivesOneMemfdPerGroup) {
    auto d = test::sim_device();
    const uint32_t g = sim::SimTrace::export_group();
    ASSERT_LT(g, d->metric_groups().size());
    ASSERT_TRUE(d->metric_groups()[g].type_flags & hal::kGroupExportDmaBuf);
    int fd = -1;
    size_t size = 0;
    ASSERT_EQ(d->export_dma_buf(g, &fd, &size), ZE_RESULT_SUCCESS);
    EXPECT_GE(fd, 0);
    EXPECT_GT(size, 0u);
    struct stat st {};
    ASSERT_EQ(fstat(fd, &st), 0);
    EXPECT_EQ(static_cast<size_t>(st.st_size), size);
    int again = -1;
    size_t size2 = 0;
    ASSERT_EQ(d->export_dma_buf(g, &again, &size2), ZE_RESULT_SUCCESS);
    EXPECT_EQ(again, fd);
    EXPECT_EQ(size2, size);
    // Another device has its own.
    auto other = test::sim_device();
    int theirs = -1;
    ASSERT_EQ(other->export_dma_buf(g, &theirs, &size2), ZE_RESULT_SUCCESS);
    EXPECT_NE(theirs, fd);
}

TEST(SimExport, ExportErrors) {
    auto d = test::sim_device();
    int fd = -7;
    size_t size = 3;
    EXPECT_EQ(d->export_dma_buf(plain_group(d), &fd, &size), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(d->export_dma_buf(static_cast<uint32_t>(d->metric_groups().size()), &fd, &size),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(d->export_dma_buf(~0u, &fd, &size), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(fd, -7);
    EXPECT_EQ(size, 3u);
}

// The fd lives as long as the device and is closed with it.
TEST(SimExport, FdLivesWithTheDevice) {
    auto d = test::sim_device();
    int fd = -1;
    size_t size = 0;
    ASSERT_EQ(d->export_dma_buf(sim::SimTrace::export_group(), &fd, &size), ZE_RESULT_SUCCESS);
    EXPECT_NE(fcntl(fd, F_GETFD), -1);
    const int kept = dup(fd);
    ASSERT_GE(kept, 0);
    d.reset();
    EXPECT_EQ(fcntl(fd, F_GETFD), -1);
    EXPECT_EQ(errno, EBADF);
    // A dup stays valid: the memory is still there.
    void* p = mmap(nullptr, size, PROT_READ, MAP_SHARED, kept, 0);
    EXPECT_NE(p, MAP_FAILED);
    if (p != MAP_FAILED) munmap(p, size);
    close(kept);
}

TEST(SimExport, ImportMapsTheSamePages) {
    auto d = test::sim_device();
    int fd = -1;
    size_t size = 0;
    ASSERT_EQ(d->export_dma_buf(sim::SimTrace::export_group(), &fd, &size), ZE_RESULT_SUCCESS);
    void* dev = nullptr;
    ASSERT_EQ(d->import_dma_buf(fd, size, &dev), ZE_RESULT_SUCCESS);
    hal::PointerInfo info;
    ASSERT_EQ(d->pointer_info(static_cast<char*>(dev) + 10, &info), ZE_RESULT_SUCCESS);
    EXPECT_EQ(info.kind, MemoryKind::device);
    EXPECT_TRUE(info.imported);
    EXPECT_EQ(info.base, dev);
    EXPECT_EQ(info.size, size);
    EXPECT_EQ(info.alignment, 4096u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(dev) % 4096, 0u);

    // A device fill lands in the file: another mapping of the fd sees it.
    auto q = test::queue(d);
    const unsigned char ab = 0xAB;
    ASSERT_EQ(q->append_fill(dev, &ab, 1, size, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    auto* view = static_cast<unsigned char*>(mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0));
    ASSERT_NE(view, MAP_FAILED);
    for (size_t i = 0; i < size; i += 997) ASSERT_EQ(view[i], 0xAB);
    // So does a child process mapping the fd.
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto* m = static_cast<unsigned char*>(mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0));
        _exit(m != MAP_FAILED && m[0] == 0xAB && m[size - 1] == 0xAB ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    // Reads go through copies, as for any device memory.
    test::Memory host(d, MemoryKind::host, 16);
    ASSERT_EQ(q->append_copy(host.ptr(), static_cast<char*>(dev) + 100, 16, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(host.get()[15], 0xAB);
    munmap(view, size);

    // The fd was not taken over; freeing unmaps once.
    EXPECT_EQ(d->free(dev), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d->free(dev), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(fcntl(fd, F_GETFD), -1);
    // A part of the file.
    ASSERT_EQ(d->import_dma_buf(fd, 100, &dev), ZE_RESULT_SUCCESS);
    ASSERT_EQ(d->pointer_info(dev, &info), ZE_RESULT_SUCCESS);
    EXPECT_EQ(info.size, 100u);
    EXPECT_EQ(d->free(dev), ZE_RESULT_SUCCESS);
}

TEST(SimExport, ImportErrors) {
    auto d = test::sim_device();
    int fd = -1;
    size_t size = 0;
    ASSERT_EQ(d->export_dma_buf(sim::SimTrace::export_group(), &fd, &size), ZE_RESULT_SUCCESS);
    void* out = reinterpret_cast<void*>(0x99);
    EXPECT_EQ(d->import_dma_buf(fd, size + 1, &out), ZE_RESULT_ERROR_INVALID_SIZE);
    // A closed fd, a pipe, a read-only file.
    const int closed = dup(fd);
    close(closed);
    EXPECT_EQ(d->import_dma_buf(closed, 64, &out), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    EXPECT_EQ(d->import_dma_buf(pipe_fds[0], 64, &out), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    char path[] = "/tmp/zehal-import-XXXXXX";
    const int file = mkstemp(path);
    ASSERT_GE(file, 0);
    ASSERT_EQ(ftruncate(file, 4096), 0);
    const int read_only = open(path, O_RDONLY);
    unlink(path);
    EXPECT_EQ(d->import_dma_buf(read_only, 4096, &out), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    close(read_only);
    // A regular file could shrink under the mapping (SIGBUS on access): refused (§11).
    EXPECT_EQ(d->import_dma_buf(file, 4096, &out), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    close(file);
    // A memfd imports once sealed against shrinking, as zehal's exports are.
    const int memfd = memfd_create("zehal-import-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    ASSERT_GE(memfd, 0);
    ASSERT_EQ(ftruncate(memfd, 8192), 0);
    EXPECT_EQ(d->import_dma_buf(memfd, 4096, &out), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
    ASSERT_EQ(d->import_dma_buf(memfd, 8192, &out), ZE_RESULT_SUCCESS);
    EXPECT_NE(ftruncate(memfd, 0), 0);  // the seal holds
    EXPECT_EQ(d->free(out), ZE_RESULT_SUCCESS);
    EXPECT_NE(fcntl(memfd, F_GETFD), -1);  // the import never closes an fd it did not open (§11)
    close(memfd);
}

TEST(SimExport, ExportsAreSealedAgainstShrinking) {
    auto d = test::sim_device();
    int fd = -1;
    size_t size = 0;
    ASSERT_EQ(d->export_dma_buf(sim::SimTrace::export_group(), &fd, &size), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(fcntl(fd, F_GET_SEALS) & F_SEAL_SHRINK);
    EXPECT_NE(ftruncate(fd, 0), 0);
    void* out = nullptr;
    ASSERT_EQ(d->import_dma_buf(fd, size, &out), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d->free(out), ZE_RESULT_SUCCESS);
}

// The whole 0xAB path on the device side: a fill of the imported export memory shows as an
// export-write record whose value is the first 32-bit word written.
TEST(SimExport, DeviceWritesBecomeExportWriteRecords) {
    for (uint32_t subdevices : {0u, 2u}) {
        sim::SimConfig c;
        c.subdevices = subdevices;
        auto d = test::sim_device(c);
        const uint32_t g = sim::SimTrace::export_group();
        int fd = -1;
        size_t size = 0;
        ASSERT_EQ(d->export_dma_buf(g, &fd, &size), ZE_RESULT_SUCCESS);
        void* dev = nullptr;
        ASSERT_EQ(d->import_dma_buf(fd, size, &dev), ZE_RESULT_SUCCESS);
        hal::TraceSource* trace = d->trace_source();
        ASSERT_NE(trace, nullptr);
        const uint32_t groups[] = {g};
        ASSERT_EQ(trace->start(groups), ZE_RESULT_SUCCESS);

        auto q = test::queue(d);
        const unsigned char ab = 0xAB;
        ASSERT_EQ(q->append_fill(dev, &ab, 1, 256, nullptr, {}), ZE_RESULT_SUCCESS);
        test::Memory src(d, MemoryKind::host, 64);
        const uint32_t word = 0x12345678;
        std::memcpy(src.ptr(), &word, 4);
        ASSERT_EQ(q->append_copy(static_cast<char*>(dev) + 512, src.ptr(), 64, nullptr, {}), ZE_RESULT_SUCCESS);
        // Writes elsewhere make no export record.
        test::Memory other(d, MemoryKind::device, 64);
        ASSERT_EQ(q->append_fill(other.ptr(), &ab, 1, 64, nullptr, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);

        std::vector<hal::TraceRecord> records(64);
        uint64_t lost = 0;
        const size_t bytes = trace->drain(records.data(), records.size() * sizeof(hal::TraceRecord), &lost);
        records.resize(bytes / sizeof(hal::TraceRecord));
        std::vector<hal::TraceRecord> writes;
        for (const hal::TraceRecord& r : records)
            if (r.kind == hal::kRecordExportWrite) writes.push_back(r);
        ASSERT_EQ(writes.size(), 2u);
        EXPECT_EQ(writes[0].value, 0xABABABABu);
        EXPECT_EQ(writes[0].value & 0xFF, 0xABu);
        EXPECT_EQ(writes[1].value, 0x12345678u);
        EXPECT_EQ(writes[0].subdevice, subdevices ? 0u : hal::kRootDevice);
        EXPECT_EQ(lost, 0u);
        ASSERT_EQ(trace->stop(), ZE_RESULT_SUCCESS);
        EXPECT_EQ(d->free(dev), ZE_RESULT_SUCCESS);
    }
}

// While a tracer runs, the start and end ticks the engines report for a command map to host
// times between its submission and its completion, even with 50 µs ticks.
TEST(SimTrace, TracedCommandTicksFallInsideTheirHostWindow) {
    sim::SimConfig c;
    c.timer_hz = 20'000;
    c.async_records_per_s = 0;
    auto d = test::sim_device(c);
    const auto& groups = d->metric_groups();
    uint32_t start_id = ~0u;
    uint32_t end_id = ~0u;
    std::vector<uint32_t> traced;
    for (uint32_t g = 0; g < groups.size(); ++g) {
        if (!(groups[g].sampling_types & hal::kSamplingTracerBased)) continue;
        traced.push_back(g);
        for (uint32_t m = 0; m < groups[g].metrics.size(); ++m) {
            if (groups[g].metrics[m].metric_type == hal::kMetricEventExpStart) start_id = groups[g].first_metric_id + m;
            if (groups[g].metrics[m].metric_type == hal::kMetricEventExpEnd) end_id = groups[g].first_metric_id + m;
        }
    }
    ASSERT_NE(start_id, ~0u);
    ASSERT_NE(end_id, ~0u);
    hal::TraceSource* trace = d->trace_source();
    ASSERT_EQ(trace->start(traced), ZE_RESULT_SUCCESS);
    uint64_t ref_host = 0;
    uint64_t ref_ticks = 0;
    ASSERT_EQ(d->global_timestamps(&ref_host, &ref_ticks), ZE_RESULT_SUCCESS);
    auto host_of = [&](uint64_t ticks) { return ref_host + (ticks - ref_ticks) * 1'000'000'000ull / c.timer_hz; };

    auto q = test::queue(d);
    test::Memory m(d, MemoryKind::device, 64);
    std::vector<std::pair<uint64_t, uint64_t>> windows;
    for (int i = 0; i < 50; ++i) {
        const unsigned char v = static_cast<unsigned char>(i);
        const uint64_t before = host_now_ns();
        ASSERT_EQ(q->append_fill(m.ptr(), &v, 1, 64, nullptr, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        windows.emplace_back(before, host_now_ns());
    }
    ASSERT_EQ(trace->stop(), ZE_RESULT_SUCCESS);
    std::vector<hal::TraceRecord> records(4096);
    uint64_t lost = 0;
    records.resize(trace->drain(records.data(), records.size() * sizeof(hal::TraceRecord), &lost) /
                   sizeof(hal::TraceRecord));
    ASSERT_EQ(lost, 0u);
    std::vector<uint64_t> starts;
    std::vector<uint64_t> ends;
    for (const hal::TraceRecord& r : records) {
        if (r.kind != hal::kRecordSample) continue;
        if (r.metric == start_id) starts.push_back(r.ticks);
        if (r.metric == end_id) ends.push_back(r.ticks);
    }
    ASSERT_EQ(starts.size(), windows.size());
    ASSERT_EQ(ends.size(), windows.size());
    for (size_t i = 0; i < windows.size(); ++i) {
        EXPECT_LE(windows[i].first, host_of(starts[i])) << i;
        EXPECT_LE(starts[i], ends[i]) << i;
        EXPECT_LE(host_of(ends[i]), windows[i].second) << i;
    }
}

// No fd leaks over 1000 export/import cycles.
TEST(SimExport, NoFdLeakOverManyCycles) {
    const size_t before = open_fds();
    for (int i = 0; i < 1000; ++i) {
        auto d = test::sim_device();
        int fd = -1;
        size_t size = 0;
        ASSERT_EQ(d->export_dma_buf(sim::SimTrace::export_group(), &fd, &size), ZE_RESULT_SUCCESS);
        void* dev = nullptr;
        ASSERT_EQ(d->import_dma_buf(fd, size, &dev), ZE_RESULT_SUCCESS);
        if (i % 2) {
            ASSERT_EQ(d->free(dev), ZE_RESULT_SUCCESS);  // else freed with the device
        }
    }
    EXPECT_EQ(open_fds(), before);
}

}  // namespace
}  // namespace zehal
