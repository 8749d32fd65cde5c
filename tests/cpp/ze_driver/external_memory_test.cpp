// Allocations exported as dma-bufs through the driver: ze_external_memory_export_desc_t at
// allocation, ze_external_memory_export_fd_t from zeMemGetAllocProperties, and the fd
// imported with ze_external_memory_import_fd_t, in this process and in a child process.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../support/child_exit.hpp"
#include "../support/in_child.hpp"
#include "../support/open_fds.hpp"
#include "ze_fixture.hpp"

namespace zetest {
namespace {

// The fd number a child process finds the exported fd under, and the variable naming it.
constexpr int kChildFd = 100;
constexpr const char* kChildFdVariable = "ZEHAL_TEST_IMPORT_FD";
constexpr size_t kExportBytes = 8192;

ze_device_external_memory_properties_t external_properties(ze_device_handle_t d) {
    ze_device_external_memory_properties_t p{ZE_STRUCTURE_TYPE_DEVICE_EXTERNAL_MEMORY_PROPERTIES, nullptr, 0, 0, 0, 0};
    EXPECT_EQ(zeDeviceGetExternalMemoryProperties(d, &p), ZE_RESULT_SUCCESS);
    return p;
}

bool exports_dma_buf(ze_device_handle_t d) {
    return external_properties(d).memoryAllocationExportTypes & ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF;
}

// The test's device is the sim device, which exports its allocations (memfds).
class ExternalMemory : public SimDriver {
protected:
    void SetUp() override {
        SimDriver::SetUp();
        if (IsSkipped()) return;
        ASSERT_TRUE(exports_dma_buf(device));
    }

    // zeMemAllocDevice with an export descriptor of `flags`.
    ze_result_t alloc_exportable(size_t size, void** out, uint32_t flags = ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF) {
        ze_external_memory_export_desc_t ed{ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_EXPORT_DESC, nullptr, flags};
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, &ed, 0, 0};
        return zeMemAllocDevice(context, &dd, size, 1, device, out);
    }

    // zeMemGetAllocProperties asking for the dma-buf of `ptr`.
    ze_result_t export_fd(const void* ptr, int* fd, uint32_t flags = ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF) {
        ze_external_memory_export_fd_t ef{ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_EXPORT_FD, nullptr, flags, -1};
        ze_memory_allocation_properties_t p{ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES, &ef, ZE_MEMORY_TYPE_UNKNOWN,
                                            0, 0};
        const ze_result_t r = zeMemGetAllocProperties(context, ptr, &p, nullptr);
        *fd = ef.fd;
        return r;
    }

    // zeMemAllocDevice importing `size` bytes of `fd`.
    ze_result_t import(int fd, size_t size, void** out) {
        ze_external_memory_import_fd_t im{ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD, nullptr,
                                          ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF, fd};
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, &im, 0, 0};
        return zeMemAllocDevice(context, &dd, size, 4096, device, out);
    }

    void fill(void* p, uint8_t value, size_t size) {
        ZE_OK(zeCommandListAppendMemoryFill(list, p, &value, 1, size, nullptr, 0, nullptr));
        finish(list);
    }

    // The bytes [0, size) of device memory `p`, through a copy into host memory.
    std::string read(const void* p, size_t size) {
        EXPECT_LE(size, kBytes);
        EXPECT_EQ(zeCommandListAppendMemoryCopy(list, host, p, size, nullptr, 0, nullptr), ZE_RESULT_SUCCESS);
        finish(list);
        return std::string(static_cast<const char*>(host), size);
    }
};

TEST_F(ExternalMemory, DevicesReportTheTypesTheyExport) {
    for (ze_device_handle_t d : devices) {
        const auto p = external_properties(d);
        EXPECT_EQ(p.memoryAllocationExportTypes & ~uint32_t{ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF}, 0u);
        EXPECT_EQ(p.memoryAllocationImportTypes & ~uint32_t{ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF}, 0u);
        // The sim device exports and imports dma-bufs (memfds); other backends' devices
        // export no allocation and import no dma-buf but their own metric export memory.
        const uint32_t expected = is_sim(d) ? ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF : 0;
        EXPECT_EQ(p.memoryAllocationExportTypes, expected);
        EXPECT_EQ(p.memoryAllocationImportTypes, expected);
        ze_external_memory_export_desc_t ed{ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_EXPORT_DESC, nullptr,
                                            ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF};
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, &ed, 0, 0};
        void* p2 = nullptr;
        const ze_result_t r = zeMemAllocDevice(context, &dd, 4096, 1, d, &p2);
        if (p.memoryAllocationExportTypes & ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF) {
            ASSERT_EQ(r, ZE_RESULT_SUCCESS);
            EXPECT_EQ(zeMemFree(context, p2), ZE_RESULT_SUCCESS);
        } else {
            EXPECT_EQ(r, ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
    }
}

TEST_F(ExternalMemory, ExportedFdMapsTheAllocationsBytes) {
    void* mem = nullptr;
    ZE_OK(alloc_exportable(kExportBytes, &mem));
    fill(mem, 0xAB, kExportBytes);
    int fd = -1;
    ZE_OK(export_fd(mem, &fd));
    ASSERT_GE(fd, 0);
    int again = -1;
    ZE_OK(export_fd(static_cast<char*>(mem) + 100, &again));  // an interior pointer: its allocation's
    EXPECT_EQ(again, fd);
    struct stat st {};
    ASSERT_EQ(fstat(fd, &st), 0);
    EXPECT_GE(static_cast<size_t>(st.st_size), kExportBytes);
    auto* view = static_cast<unsigned char*>(mmap(nullptr, kExportBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    ASSERT_NE(view, MAP_FAILED);
    EXPECT_EQ(view[0], 0xAB);
    EXPECT_EQ(view[kExportBytes - 1], 0xAB);
    view[7] = 0x11;  // a write through the fd is seen by the device
    EXPECT_EQ(read(mem, 8)[7], 0x11);
    munmap(view, kExportBytes);
    EXPECT_EQ(zeMemFree(context, mem), ZE_RESULT_SUCCESS);
}

TEST_F(ExternalMemory, ImportInThisProcessSharesTheBytes) {
    void* mem = nullptr;
    ZE_OK(alloc_exportable(kExportBytes, &mem));
    fill(mem, 0xAB, kExportBytes);
    int fd = -1;
    ZE_OK(export_fd(mem, &fd));
    void* imported = nullptr;
    ZE_OK(import(fd, kExportBytes, &imported));
    EXPECT_NE(imported, mem);
    EXPECT_EQ(read(imported, kExportBytes), std::string(kExportBytes, '\xAB'));
    fill(imported, 0xCD, 16);
    EXPECT_EQ(read(mem, 16), std::string(16, '\xCD'));
    // The exporter's free leaves the import's mapping whole.
    EXPECT_EQ(zeMemFree(context, mem), ZE_RESULT_SUCCESS);
    EXPECT_EQ(read(imported, 17), std::string(16, '\xCD') + '\xAB');
    EXPECT_EQ(zeMemFree(context, imported), ZE_RESULT_SUCCESS);
}

// Host and shared memory export too; an export imports as host memory as well.
TEST_F(ExternalMemory, HostAndSharedAllocationsExportToo) {
    ze_external_memory_export_desc_t ed{ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_EXPORT_DESC, nullptr,
                                        ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF};
    ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, &ed, 0};
    ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, &ed, 0, 0};
    ze_host_mem_alloc_desc_t plain_hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    void* h = nullptr;
    void* s = nullptr;
    ZE_OK(zeMemAllocHost(context, &hd, 4096, 1, &h));
    ZE_OK(zeMemAllocShared(context, &dd, &plain_hd, 4096, 1, device, &s));
    for (void* p : {h, s}) {
        std::memset(p, 0x5A, 4096);
        int fd = -1;
        ZE_OK(export_fd(p, &fd));
        void* imported = nullptr;
        ZE_OK(import(fd, 4096, &imported));
        EXPECT_EQ(read(imported, 4096), std::string(4096, '\x5A'));
        EXPECT_EQ(zeMemFree(context, imported), ZE_RESULT_SUCCESS);
        // Imported as host memory: the host reads it directly.
        ze_external_memory_import_fd_t im{ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD, nullptr,
                                          ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF, fd};
        ze_host_mem_alloc_desc_t import_hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, &im, 0};
        void* host_view = nullptr;
        ZE_OK(zeMemAllocHost(context, &import_hd, 4096, 1, &host_view));
        EXPECT_NE(host_view, p);
        EXPECT_EQ(std::string(static_cast<const char*>(host_view), 4096), std::string(4096, '\x5A'));
        ze_memory_allocation_properties_t props{ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES, nullptr,
                                                ZE_MEMORY_TYPE_UNKNOWN, 0, 0};
        ZE_OK(zeMemGetAllocProperties(context, host_view, &props, nullptr));
        EXPECT_EQ(props.type, ZE_MEMORY_TYPE_HOST);
        EXPECT_EQ(zeMemFree(context, host_view), ZE_RESULT_SUCCESS);
        EXPECT_EQ(zeMemFree(context, p), ZE_RESULT_SUCCESS);
    }
}

// Every allocation of the sim device holds a file descriptor (it exports, as on Intel's
// driver); a process out of descriptors still gets the allocations it did not ask to export.
TEST_F(ExternalMemory, AllocationsOutlastTheProcessesFileDescriptors) {
    zehal::test::in_child([&] {
        const int first_free = dup(0);
        ASSERT_GE(first_free, 0);
        close(first_free);
        const rlimit low{static_cast<rlim_t>(first_free + 8), static_cast<rlim_t>(first_free + 8)};
        ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
        std::vector<void*> mem(32, nullptr);
        for (void*& p : mem) ASSERT_EQ(zeMemAllocDevice(context, &dd, 4096, 64, device, &p), ZE_RESULT_SUCCESS);
        // The last ones hold no descriptor: they export nothing, and an allocation that asks
        // to export is refused.
        int fd = -1;
        EXPECT_EQ(export_fd(mem.back(), &fd), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        void* exported = nullptr;
        EXPECT_NE(alloc_exportable(4096, &exported), ZE_RESULT_SUCCESS);
        EXPECT_EQ(exported, nullptr);
        // Copies through them work as through any allocation.
        std::memset(host, 0x3D, 64);
        ASSERT_EQ(zeCommandListAppendMemoryCopy(list, mem.back(), host, 64, nullptr, 0, nullptr), ZE_RESULT_SUCCESS);
        ASSERT_EQ(zeCommandListAppendMemoryCopy(list, host2, mem.back(), 64, nullptr, 0, nullptr), ZE_RESULT_SUCCESS);
        finish(list);
        EXPECT_EQ(std::memcmp(host, host2, 64), 0);
        for (void* p : mem) EXPECT_EQ(zeMemFree(context, p), ZE_RESULT_SUCCESS);
    });
}

TEST_F(ExternalMemory, BadExportRequestsAreRefused) {
    void* p = nullptr;
    EXPECT_EQ(alloc_exportable(4096, &p, ZE_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD),
              ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
    EXPECT_EQ(alloc_exportable(4096, &p, 1u << 20), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(p, nullptr);
    // Flags 0 ask for no export: a plain allocation, which on the sim device exports like
    // every allocation (as on Intel's driver), with a descriptor or without.
    ZE_OK(alloc_exportable(4096, &p, 0));
    int fd = -7;
    EXPECT_EQ(export_fd(p, &fd), ZE_RESULT_SUCCESS);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(zeMemFree(context, p), ZE_RESULT_SUCCESS);
    EXPECT_EQ(export_fd(dev, &fd), ZE_RESULT_SUCCESS);
    // Host memory is the first device's: pinned memory of a GPU, which exports nothing.
    EXPECT_EQ(export_fd(host, &fd), is_sim(devices.front()) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT);
    int local = 0;
    EXPECT_EQ(export_fd(&local, &fd), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // not zehal's memory

    ZE_OK(alloc_exportable(4096, &p));
    EXPECT_EQ(export_fd(p, &fd, ZE_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD), ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
    EXPECT_EQ(export_fd(p, &fd, 1u << 20), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(zeMemFree(context, p), ZE_RESULT_SUCCESS);
    EXPECT_EQ(export_fd(p, &fd), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // freed
}

TEST_F(ExternalMemory, BadImportsAreRefused) {
    void* mem = nullptr;
    ZE_OK(alloc_exportable(4096, &mem));
    int fd = -1;
    ZE_OK(export_fd(mem, &fd));
    struct stat st {};
    ASSERT_EQ(fstat(fd, &st), 0);
    void* p = nullptr;
    EXPECT_EQ(import(fd, static_cast<size_t>(st.st_size) + 1, &p), ZE_RESULT_ERROR_INVALID_SIZE);  // past its end
    int pipes[2];
    ASSERT_EQ(pipe(pipes), 0);
    EXPECT_EQ(import(pipes[0], 4096, &p), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // not memory
    close(pipes[0]);
    close(pipes[1]);
    EXPECT_EQ(import(pipes[0], 4096, &p), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // closed
    EXPECT_EQ(import(-1, 4096, &p), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(zeMemFree(context, mem), ZE_RESULT_SUCCESS);
}

// An export imports as device physical memory that a reserved range maps.
TEST_F(ExternalMemory, ImportsAsPhysicalMemory) {
    if (!is_sim(devices.front()))
        GTEST_SKIP() << "reservations belong to the first device with virtual memory, a GPU here (docs/ze_driver.md)";
    void* mem = nullptr;
    ZE_OK(alloc_exportable(1024, &mem));
    fill(mem, 0xAB, 1024);
    int fd = -1;
    ZE_OK(export_fd(mem, &fd));
    size_t page = 0;
    ZE_OK(zeVirtualMemQueryPageSize(context, device, 1024, &page));
    ze_external_memory_import_fd_t im{ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD, nullptr,
                                      ZE_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD, fd};
    ze_physical_mem_desc_t pd{ZE_STRUCTURE_TYPE_PHYSICAL_MEM_DESC, &im, 0, page};
    ze_physical_mem_handle_t physical = nullptr;
    EXPECT_EQ(zePhysicalMemCreate(context, device, &pd, &physical), ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
    im.flags = ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF;
    ZE_OK(zePhysicalMemCreate(context, device, &pd, &physical));
    void* range = nullptr;
    ZE_OK(zeVirtualMemReserve(context, nullptr, page, &range));
    ZE_OK(zeVirtualMemMap(context, range, page, physical, 0, ZE_MEMORY_ACCESS_ATTRIBUTE_READWRITE));
    EXPECT_EQ(read(range, 1024), std::string(1024, '\xAB'));
    EXPECT_EQ(zeVirtualMemUnmap(context, range, page), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zeVirtualMemFree(context, range, page), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zePhysicalMemDestroy(context, physical), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zeMemFree(context, mem), ZE_RESULT_SUCCESS);
}

// The allocation's fd is closed by its free, once; nothing else leaks.
TEST_F(ExternalMemory, FreeClosesTheFdOnce) {
    const size_t before = zehal::test::open_fds();
    for (int i = 0; i < 64; ++i) {
        void* mem = nullptr;
        ZE_OK(alloc_exportable(4096, &mem));
        int fd = -1;
        ZE_OK(export_fd(mem, &fd));
        void* imported = nullptr;
        ZE_OK(import(fd, 4096, &imported));
        ZE_OK(zeMemFree(context, imported));
        EXPECT_NE(fcntl(fd, F_GETFD), -1);  // an import does not take the fd over
        ZE_OK(zeMemFree(context, mem));
        EXPECT_EQ(fcntl(fd, F_GETFD), -1);
    }
    EXPECT_EQ(zehal::test::open_fds(), before);
}

// The parent exports, a child process (this program again, fresh) imports the fd it
// inherits, checks the parent's bytes and writes its own, which the parent then reads.
TEST_F(ExternalMemory, ChildProcessImportsTheExport) {
    void* mem = nullptr;
    ZE_OK(alloc_exportable(kExportBytes, &mem));
    fill(mem, 0xAB, kExportBytes);
    int fd = -1;
    ZE_OK(export_fd(mem, &fd));
    // The child's arguments and environment, made before the fork (the child only execs).
    std::vector<std::string> env_text{std::string(kChildFdVariable) + "=" + std::to_string(kChildFd)};
    for (char** e = environ; *e; ++e) env_text.emplace_back(*e);
    std::vector<char*> env;
    for (std::string& e : env_text) env.push_back(e.data());
    env.push_back(nullptr);
    std::string name = "external_memory_child", filter = "--gtest_filter=ExternalMemoryChild.*";
    char* argv[] = {name.data(), filter.data(), nullptr};
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // dup2 drops close-on-exec on the copy.
        if (dup2(fd, kChildFd) != kChildFd) _exit(2);
        execve("/proc/self/exe", argv, env.data());
        _exit(3);
    }
    // The child may hang only if the driver does: it gets a minute.
    ASSERT_EQ(zehal::test::wait_for_child(child), "") << "the importing child";
    EXPECT_EQ(read(mem, 32), std::string(16, '\xCD') + std::string(16, '\xAB'));
    EXPECT_EQ(zeMemFree(context, mem), ZE_RESULT_SUCCESS);
}

class ExternalMemoryChild : public ExternalMemory {};

// The child side of ExternalMemory.ChildProcessImportsTheExport; skipped when run on its own.
TEST_F(ExternalMemoryChild, ImportsInheritedFd) {
    const char* fd_text = std::getenv(kChildFdVariable);
    if (!fd_text) GTEST_SKIP() << "run by ExternalMemory.ChildProcessImportsTheExport";
    void* imported = nullptr;
    ZE_OK(import(std::atoi(fd_text), kExportBytes, &imported));
    EXPECT_EQ(read(imported, kExportBytes), std::string(kExportBytes, '\xAB'));
    fill(imported, 0xCD, 16);
    EXPECT_EQ(zeMemFree(context, imported), ZE_RESULT_SUCCESS);
}

}  // namespace
}  // namespace zetest
