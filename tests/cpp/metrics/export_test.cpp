// Metric export memory (contract §6): (fd, size) of export groups, import, the 0xAB path
// through the tracer and decoder, another process mapping the fd, fd lifetime and leaks.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.hpp"
#include "metrics/decoder.hpp"
#include "metrics/metric_export.hpp"
#include "metrics_test_util.hpp"
#include "support/open_fds.hpp"
#include "support/quiet_sim.hpp"

namespace zehal::metrics::test {
namespace {

using zehal::test::open_fds;
using zehal::test::quiet;

bool fd_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

void fill_device(const hal::DeviceRef& d, void* dst, uint8_t byte, size_t size) {
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(d->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_fill(dst, &byte, 1, size, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
}

TEST(Export, ExportGroupsGiveAnFdAndOthersRefuse) {
    auto d = make_device(quiet());
    std::vector<MetricGroupRef> groups;
    ASSERT_EQ(metric_groups(d, &groups), ZE_RESULT_SUCCESS);
    int exported = 0;
    for (const auto& g : groups) {
        int fd = -7;
        size_t size = 0;
        const ze_result_t r = export_dma_buf(*g, &fd, &size);
        if (g->info().type_flags & hal::kGroupExportDmaBuf) {
            ASSERT_EQ(r, ZE_RESULT_SUCCESS) << g->info().name;
            EXPECT_GE(fd, 0);
            EXPECT_GT(size, 0u);
            EXPECT_TRUE(fd_open(fd));
            // The same memory every time.
            int again = -1;
            size_t again_size = 0;
            ASSERT_EQ(export_dma_buf(*g, &again, &again_size), ZE_RESULT_SUCCESS);
            EXPECT_EQ(again, fd);
            EXPECT_EQ(again_size, size);
            ++exported;
            // The metric of type EXP_EXPORT_DMA_BUF gives the same; the others refuse.
            for (const Metric& m : g->metrics()) {
                int mfd = -7;
                size_t msize = 0;
                if (m.info().metric_type == hal::kMetricExpExportDmaBuf) {
                    ASSERT_EQ(export_dma_buf(m, &mfd, &msize), ZE_RESULT_SUCCESS);
                    EXPECT_EQ(mfd, fd);
                    EXPECT_EQ(msize, size);
                } else {
                    EXPECT_EQ(export_dma_buf(m, &mfd, &msize), ZE_RESULT_ERROR_INVALID_ARGUMENT);
                    EXPECT_EQ(mfd, -7);
                }
            }
        } else {
            EXPECT_EQ(r, ZE_RESULT_ERROR_INVALID_ARGUMENT) << g->info().name;
            EXPECT_EQ(fd, -7);
            EXPECT_EQ(size, 0u);
            for (const Metric& m : g->metrics()) {
                EXPECT_EQ(export_dma_buf(m, &fd, &size), ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
        }
        EXPECT_EQ(export_dma_buf(*g, nullptr, &size), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        EXPECT_EQ(export_dma_buf(*g, &fd, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    EXPECT_EQ(exported, 1);
}

TEST(Export, LostDeviceRefusesToExport) {
    auto d = make_device(quiet());
    auto g = group_named(d, "ExportMemory");
    ASSERT_EQ(d->lose(), ZE_RESULT_SUCCESS);
    int fd = -1;
    size_t size = 0;
    EXPECT_EQ(export_dma_buf(*g, &fd, &size), ZE_RESULT_ERROR_DEVICE_LOST);
}

// Fill the imported memory with 0xAB by a device command, read the tracer, decode, and
// find an entry whose value & 0xFF == 0xAB.
TEST(Export, FillOfImportedMemoryDecodesToAnEntryWithTheBytesWritten) {
    auto d = make_device(quiet());
    auto g = group_named(d, "ExportMemory");
    int fd = -1;
    size_t size = 0;
    ASSERT_EQ(export_dma_buf(*g, &fd, &size), ZE_RESULT_SUCCESS);
    void* imported = nullptr;
    ASSERT_EQ(d->import_dma_buf(fd, size, &imported), ZE_RESULT_SUCCESS);

    auto tracer = make_tracer(d, {"ExportMemory"});
    std::shared_ptr<Decoder> decoder;
    ASSERT_EQ(Decoder::create(tracer, &decoder), ZE_RESULT_SUCCESS);
    ASSERT_EQ(tracer->enable(true), ZE_RESULT_SUCCESS);
    fill_device(d, imported, 0xAB, size);
    ASSERT_EQ(tracer->disable(true), ZE_RESULT_SUCCESS);
    auto raw = read_until_drained(*tracer);

    bool kind6 = false;
    for (const Record& r : records_of(raw)) kind6 |= r.kind == hal::kRecordExportWrite;
    EXPECT_TRUE(kind6);

    size_t raw_size = raw.size();
    uint32_t sets = 0, count = 0;
    ASSERT_EQ(decoder->decode(&raw_size, raw.data(), {}, &sets, nullptr, &count, nullptr), ZE_RESULT_SUCCESS);
    ASSERT_GE(count, 1u);
    std::vector<MetricEntry> entries(count);
    ASSERT_EQ(decoder->decode(&raw_size, raw.data(), {}, &sets, nullptr, &count, entries.data()), ZE_RESULT_SUCCESS);
    const auto& metrics = tracer->decodable_metrics();
    bool found = false;
    for (const MetricEntry& e : entries) {
        if (metrics[e.metric_index]->info().name == "ExportWrite" && (e.value & 0xFF) == 0xAB) found = true;
    }
    EXPECT_TRUE(found);
    // The memory holds what the device wrote.
    void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    ASSERT_NE(map, MAP_FAILED);
    EXPECT_EQ(static_cast<const uint8_t*>(map)[0], 0xAB);
    EXPECT_EQ(static_cast<const uint8_t*>(map)[size - 1], 0xAB);
    munmap(map, size);
    EXPECT_EQ(d->free(imported), ZE_RESULT_SUCCESS);
}

TEST(Export, WritesToOtherMemoryMakeNoExportRecords) {
    auto d = make_device(quiet());
    auto tracer = make_tracer(d, {"ExportMemory"});
    void* plain = nullptr;
    ASSERT_EQ(d->allocate(hal::MemoryKind::device, 4096, 64, 0, 0, &plain), ZE_RESULT_SUCCESS);
    ASSERT_EQ(tracer->enable(true), ZE_RESULT_SUCCESS);
    fill_device(d, plain, 0xAB, 4096);
    ASSERT_EQ(tracer->disable(true), ZE_RESULT_SUCCESS);
    for (const Record& r : records_of(read_until_drained(*tracer))) EXPECT_NE(r.kind, hal::kRecordExportWrite);
    EXPECT_EQ(d->free(plain), ZE_RESULT_SUCCESS);
}

// A child process maps the fd and sees what the device writes after it started.
TEST(Export, ChildProcessMappingTheFdSeesDeviceWrites) {
    auto d = make_device(quiet());
    auto g = group_named(d, "ExportMemory");
    int fd = -1;
    size_t size = 0;
    ASSERT_EQ(export_dma_buf(*g, &fd, &size), ZE_RESULT_SUCCESS);
    void* imported = nullptr;
    ASSERT_EQ(d->import_dma_buf(fd, size, &imported), ZE_RESULT_SUCCESS);
    fill_device(d, imported, 0x00, size);

    int go[2], done[2];
    ASSERT_EQ(pipe(go), 0);
    ASSERT_EQ(pipe(done), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // The child: map first, then wait for the parent's device write, then look.
        void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) _exit(2);
        char c = 0;
        if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) != 1) _exit(3);
        const auto* bytes = static_cast<const uint8_t*>(map);
        _exit(bytes[0] == 0xC3 && bytes[size / 2] == 0xC3 && bytes[size - 1] == 0xC3 ? 0 : 1);
    }
    char c = 0;
    ASSERT_EQ(read(done[0], &c, 1), 1);  // the child has mapped the fd
    fill_device(d, imported, 0xC3, size);
    ASSERT_EQ(write(go[1], &c, 1), 1);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    for (int p : {go[0], go[1], done[0], done[1]}) close(p);
    EXPECT_EQ(d->free(imported), ZE_RESULT_SUCCESS);
}

TEST(Export, FdLivesAsLongAsTheGroupAndIsReleasedAfter) {
    int fd = -1;
    size_t size = 0;
    std::weak_ptr<hal::Device> weak;
    {
        MetricGroupRef g;
        {
            auto d = make_device(quiet());
            weak = d;
            g = group_named(d, "ExportMemory");
            ASSERT_EQ(export_dma_buf(*g, &fd, &size), ZE_RESULT_SUCCESS);
        }
        // The device reference is gone; the group keeps it, so the fd stays valid.
        EXPECT_FALSE(weak.expired());
        EXPECT_TRUE(fd_open(fd));
        // A dup outlives everything.
        const int kept = dup(fd);
        ASSERT_GE(kept, 0);
        g.reset();
        EXPECT_TRUE(weak.expired());
        EXPECT_FALSE(fd_open(fd));
        EXPECT_TRUE(fd_open(kept));
        close(kept);
    }
}

TEST(Export, NoFdLeakOverAThousandExportImportCycles) {
    auto d = make_device(quiet());
    const size_t before = open_fds();
    for (int i = 0; i < 1000; ++i) {
        auto g = group_named(d, "ExportMemory");
        int fd = -1;
        size_t size = 0;
        ASSERT_EQ(export_dma_buf(*g, &fd, &size), ZE_RESULT_SUCCESS);
        const int kept = dup(fd);
        ASSERT_GE(kept, 0);
        void* a = nullptr;
        void* b = nullptr;
        ASSERT_EQ(d->import_dma_buf(fd, size, &a), ZE_RESULT_SUCCESS);
        ASSERT_EQ(d->import_dma_buf(kept, size, &b), ZE_RESULT_SUCCESS);
        ASSERT_EQ(d->free(a), ZE_RESULT_SUCCESS);
        ASSERT_EQ(d->free(b), ZE_RESULT_SUCCESS);
        close(kept);
    }
    // The group's own fd was made by the first export; nothing else stays open.
    EXPECT_LE(open_fds(), before + 1);
    const size_t settled = open_fds();
    for (int i = 0; i < 1000; ++i) {
        auto g = group_named(d, "ExportMemory");
        int fd = -1;
        size_t size = 0;
        ASSERT_EQ(export_dma_buf(*g, &fd, &size), ZE_RESULT_SUCCESS);
        void* a = nullptr;
        ASSERT_EQ(d->import_dma_buf(fd, size, &a), ZE_RESULT_SUCCESS);
        ASSERT_EQ(d->free(a), ZE_RESULT_SUCCESS);
    }
    EXPECT_EQ(open_fds(), settled);
}

}  // namespace
}  // namespace zehal::metrics::test
