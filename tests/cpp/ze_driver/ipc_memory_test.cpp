// IPC memory handles through the driver: a handle opened in this process and in another one
// (the exporter a child process, this program again), the handle's fd, and every bad input.
// Loader 1.8 has no entry for the API 1.6 functions (zeMemPutIpcHandle and the two fd
// functions): the test asks the driver's own tables for them, as a loader does.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../support/open_fds.hpp"
#include "driver_table.hpp"
#include "read_within.hpp"
#include "ze_fixture.hpp"

namespace zetest {
namespace {

using PutHandle = ze_result_t (*)(ze_context_handle_t, ze_ipc_mem_handle_t);
using HandleFromFd = ze_result_t (*)(ze_context_handle_t, uint64_t, ze_ipc_mem_handle_t*);
using FdFromHandle = ze_result_t (*)(ze_context_handle_t, ze_ipc_mem_handle_t, uint64_t*);

// The fds a child exporter finds its pipes under, and the variable that tells it it is one.
constexpr int kChildHandleFd = 100;  // the child writes its handle here
constexpr int kChildGoFd = 101;      // and reads one byte here before checking and exiting
constexpr const char* kChildVariable = "ZEHAL_TEST_IPC_CHILD";
constexpr size_t kBytes = 8192;

// The test's device is the sim device, the one whose allocations IPC handles share.
class IpcMemory : public SimDriver {
protected:
    void SetUp() override {
        SimDriver::SetUp();
        if (IsSkipped()) return;
        put = driver_table_function<PutHandle>("zeGetMemProcAddrTable", "zeMemPutIpcHandle", 6);
        from_fd = driver_table_function<HandleFromFd>("zeGetMemExpProcAddrTable",
                                                      "zeMemGetIpcHandleFromFileDescriptorExp", 6);
        to_fd = driver_table_function<FdFromHandle>("zeGetMemExpProcAddrTable",
                                                    "zeMemGetFileDescriptorFromIpcHandleExp", 6);
        ASSERT_TRUE(put && from_fd && to_fd);
    }

    // A device allocation of `size` bytes, through a plain descriptor.
    void* alloc_device(size_t size) {
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
        void* p = nullptr;
        EXPECT_EQ(zeMemAllocDevice(context, &dd, size, 64, device, &p), ZE_RESULT_SUCCESS);
        return p;
    }

    // Fills `size` bytes at `ptr` with `value` on the device.
    void fill(void* ptr, uint8_t value, size_t size) {
        ZE_OK(zeCommandListAppendMemoryFill(list, ptr, &value, 1, size, nullptr, 0, nullptr));
        finish(list);
    }

    // The `size` bytes at `ptr`, copied to the host.
    std::string read(const void* ptr, size_t size) {
        std::string out(size, '\0');
        EXPECT_EQ(zeCommandListAppendMemoryCopy(list, out.data(), ptr, size, nullptr, 0, nullptr), ZE_RESULT_SUCCESS);
        finish(list);
        return out;
    }

    PutHandle put = nullptr;
    HandleFromFd from_fd = nullptr;
    FdFromHandle to_fd = nullptr;
};

// A handle opened in its own process maps the same pages at another address: writes through
// either pointer are seen through the other. The handle names the pointer it was made for.
TEST_F(IpcMemory, OpenedHandleSharesTheAllocation) {
    char* mem = static_cast<char*>(alloc_device(kBytes));
    fill(mem, 0xAB, kBytes);
    ze_ipc_mem_handle_t handle{};
    ZE_OK(zeMemGetIpcHandle(context, mem + 256, &handle));
    void* opened = nullptr;
    ZE_OK(zeMemOpenIpcHandle(context, device, handle, 0, &opened));
    ASSERT_NE(opened, nullptr);
    EXPECT_NE(opened, mem + 256);
    EXPECT_EQ(read(opened, kBytes - 256), std::string(kBytes - 256, '\xAB'));
    fill(opened, 0xCD, 16);
    EXPECT_EQ(read(mem + 256, 32), std::string(16, '\xCD') + std::string(16, '\xAB'));
    ze_memory_allocation_properties_t props{ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES, nullptr,
                                            ZE_MEMORY_TYPE_UNKNOWN, 0, 0};
    ze_device_handle_t owner = nullptr;
    ZE_OK(zeMemGetAllocProperties(context, opened, &props, &owner));
    EXPECT_EQ(props.type, ZE_MEMORY_TYPE_DEVICE);
    EXPECT_EQ(owner, device);
    EXPECT_EQ(zeMemCloseIpcHandle(context, opened), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zeMemCloseIpcHandle(context, opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // closed twice
    EXPECT_EQ(put(context, handle), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zeMemFree(context, mem), ZE_RESULT_SUCCESS);
}

// Every bad input is refused with its error, and changes nothing.
TEST_F(IpcMemory, BadInputIsRefused) {
    ze_ipc_mem_handle_t handle{};
    EXPECT_EQ(zeMemGetIpcHandle(nullptr, dev, &handle), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeMemGetIpcHandle(context, nullptr, &handle), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeMemGetIpcHandle(context, dev, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    int local = 0;
    EXPECT_EQ(zeMemGetIpcHandle(context, &local, &handle), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // not zehal's

    void* opened = nullptr;
    ze_ipc_mem_handle_t garbage{};
    EXPECT_EQ(zeMemOpenIpcHandle(context, device, garbage, 0, &opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    std::memset(garbage.data, 0x5A, sizeof garbage.data);
    EXPECT_EQ(zeMemOpenIpcHandle(context, device, garbage, 0, &opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(put(context, garbage), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    uint64_t fd = 0;
    EXPECT_EQ(to_fd(context, garbage, &fd), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(opened, nullptr);

    ZE_OK(zeMemGetIpcHandle(context, dev, &handle));
    EXPECT_EQ(zeMemOpenIpcHandle(nullptr, device, handle, 0, &opened), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeMemOpenIpcHandle(context, nullptr, handle, 0, &opened), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeMemOpenIpcHandle(context, device, handle, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(put(nullptr, handle), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(to_fd(context, handle, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(from_fd(context, 1u << 20, &handle), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // no such fd
    EXPECT_EQ(from_fd(context, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);

    EXPECT_EQ(zeMemCloseIpcHandle(context, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeMemCloseIpcHandle(nullptr, dev), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeMemCloseIpcHandle(context, dev), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // never opened
    EXPECT_EQ(zeMemCloseIpcHandle(context, &local), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(read(dev, 1).size(), 1u);  // the allocation is still there
}

// A handle of memory since freed opens nothing, even once its fd number names another file.
TEST_F(IpcMemory, HandleOfFreedMemoryDoesNotOpen) {
    void* mem = alloc_device(kBytes);
    ze_ipc_mem_handle_t handle{};
    ZE_OK(zeMemGetIpcHandle(context, mem, &handle));
    ZE_OK(zeMemFree(context, mem));
    void* opened = nullptr;
    EXPECT_EQ(zeMemOpenIpcHandle(context, device, handle, 0, &opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    void* other = alloc_device(kBytes);  // most likely under the same fd number
    EXPECT_EQ(zeMemOpenIpcHandle(context, device, handle, 0, &opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(opened, nullptr);
    EXPECT_EQ(put(context, handle), ZE_RESULT_SUCCESS);  // nothing left to release
    ZE_OK(zeMemFree(context, other));
}

// The handle's fd is the allocation's export fd; a handle made from that fd (or carrying
// another number for the same file, as a receiver over a socket writes) opens the memory.
TEST_F(IpcMemory, HandleCarriesTheExportFd) {
    void* mem = alloc_device(kBytes);
    fill(mem, 0x3C, kBytes);
    ze_external_memory_export_fd_t ef{ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_EXPORT_FD, nullptr,
                                      ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF, -1};
    ze_memory_allocation_properties_t props{ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES, &ef, ZE_MEMORY_TYPE_UNKNOWN,
                                            0, 0};
    ZE_OK(zeMemGetAllocProperties(context, mem, &props, nullptr));
    ze_ipc_mem_handle_t handle{};
    ZE_OK(zeMemGetIpcHandle(context, mem, &handle));
    uint64_t fd = 0;
    ZE_OK(to_fd(context, handle, &fd));
    EXPECT_EQ(fd, static_cast<uint64_t>(ef.fd));

    ze_ipc_mem_handle_t from{};
    ZE_OK(from_fd(context, fd, &from));
    const int copy = fcntl(static_cast<int>(fd), F_DUPFD_CLOEXEC, 0);
    ASSERT_GE(copy, 0);
    std::memcpy(from.data, &copy, sizeof copy);  // the receiver's number for the file
    void* opened = nullptr;
    ZE_OK(zeMemOpenIpcHandle(context, device, from, 0, &opened));
    EXPECT_EQ(read(opened, kBytes), std::string(kBytes, '\x3C'));
    ZE_OK(zeMemCloseIpcHandle(context, opened));
    close(copy);
    EXPECT_EQ(put(context, from), ZE_RESULT_SUCCESS);
    ZE_OK(zeMemFree(context, mem));
}

// Opening and closing leaks no fd and no mapping; zeMemFree of an opened pointer closes it.
TEST_F(IpcMemory, OpenAndCloseLeakNothing) {
    void* mem = alloc_device(kBytes);
    ze_ipc_mem_handle_t handle{};
    ZE_OK(zeMemGetIpcHandle(context, mem, &handle));
    const size_t before = zehal::test::open_fds();
    for (int i = 0; i < 64; ++i) {
        void* opened = nullptr;
        ZE_OK(zeMemOpenIpcHandle(context, device, handle, 0, &opened));
        if (i % 2)
            ZE_OK(zeMemCloseIpcHandle(context, opened));
        else {
            ZE_OK(zeMemFree(context, opened));
            EXPECT_EQ(zeMemCloseIpcHandle(context, opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
    }
    EXPECT_EQ(zehal::test::open_fds(), before);
    ZE_OK(zeMemFree(context, mem));
}

// A reserved range shares the physical memory it maps: the handle of an address in it opens
// that physical memory, at the address's offset into it.
TEST_F(IpcMemory, ReservedRangeSharesItsPhysicalMemory) {
    if (!is_sim(devices.front()))
        GTEST_SKIP() << "reservations belong to the first device with virtual memory, a GPU here (docs/ze_driver.md)";
    size_t page = 0;
    ZE_OK(zeVirtualMemQueryPageSize(context, device, 1, &page));
    ze_physical_mem_desc_t pd{ZE_STRUCTURE_TYPE_PHYSICAL_MEM_DESC, nullptr, 0, 2 * page};
    ze_physical_mem_handle_t physical = nullptr;
    ZE_OK(zePhysicalMemCreate(context, device, &pd, &physical));
    void* range = nullptr;
    ZE_OK(zeVirtualMemReserve(context, nullptr, 2 * page, &range));
    // The range's second page maps the physical memory's second page; its first maps nothing.
    char* mapped = static_cast<char*>(range) + page;
    ZE_OK(zeVirtualMemMap(context, mapped, page, physical, page, ZE_MEMORY_ACCESS_ATTRIBUTE_READWRITE));
    fill(mapped, 0x77, page);
    ze_ipc_mem_handle_t handle{};
    EXPECT_EQ(zeMemGetIpcHandle(context, range, &handle), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // maps nothing
    ZE_OK(zeMemGetIpcHandle(context, mapped + 64, &handle));
    // The handle's fd is the physical memory's, which zeMemGetAllocProperties exports too.
    ze_external_memory_export_fd_t ef{ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_EXPORT_FD, nullptr,
                                      ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF, -1};
    ze_memory_allocation_properties_t props{ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES, &ef, ZE_MEMORY_TYPE_UNKNOWN,
                                            0, 0};
    ZE_OK(zeMemGetAllocProperties(context, mapped, &props, nullptr));
    uint64_t fd = 0;
    ZE_OK(to_fd(context, handle, &fd));
    EXPECT_EQ(fd, static_cast<uint64_t>(ef.fd));
    void* opened = nullptr;
    ZE_OK(zeMemOpenIpcHandle(context, device, handle, 0, &opened));
    EXPECT_EQ(read(opened, page - 64), std::string(page - 64, '\x77'));
    fill(opened, 0x11, 16);
    EXPECT_EQ(read(mapped + 64, 32), std::string(16, '\x11') + std::string(16, '\x77'));
    EXPECT_EQ(zeMemCloseIpcHandle(context, opened), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zeVirtualMemUnmap(context, mapped, page), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zeVirtualMemFree(context, range, 2 * page), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zePhysicalMemDestroy(context, physical), ZE_RESULT_SUCCESS);
}

// A device whose allocations lie in no file of their own (a CUDA device) neither shares its
// memory nor maps another process's: both are UNSUPPORTED_FEATURE, and nothing changes.
TEST_F(IpcMemory, DevicesWithoutSharedMemorySayWhy) {
    ze_ipc_mem_handle_t sim_handle{};
    ZE_OK(zeMemGetIpcHandle(context, dev, &sim_handle));
    size_t others = 0;
    for (ze_device_handle_t d : devices) {
        if (is_sim(d)) continue;
        ++others;
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
        void* mem = nullptr;
        ZE_OK(zeMemAllocDevice(context, &dd, kBytes, 64, d, &mem));
        ze_ipc_mem_handle_t handle{};
        EXPECT_EQ(zeMemGetIpcHandle(context, mem, &handle), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        void* opened = nullptr;
        EXPECT_EQ(zeMemOpenIpcHandle(context, d, sim_handle, 0, &opened), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        EXPECT_EQ(opened, nullptr);
        EXPECT_EQ(zeMemFree(context, mem), ZE_RESULT_SUCCESS);
    }
    if (others == 0) GTEST_SKIP() << "no device other than the sim device (CUDA devices are checked on a GPU machine)";
}

// A child process (this program again, fresh) exports a device allocation and sends its
// handle; this process opens it, sees the child's bytes and writes its own, which the child
// then reads through its own pointer. Once the child has exited, the handle opens nothing.
TEST_F(IpcMemory, AnotherProcessOpensTheHandle) {
    int to_parent[2];
    int to_child[2];
    ASSERT_EQ(pipe2(to_parent, O_CLOEXEC), 0);
    ASSERT_EQ(pipe2(to_child, O_CLOEXEC), 0);
    // The child's arguments and environment, made before the fork (the child only execs).
    std::vector<std::string> env_text{std::string(kChildVariable) + "=1"};
    for (char** e = environ; *e; ++e) env_text.emplace_back(*e);
    std::vector<char*> env;
    for (std::string& e : env_text) env.push_back(e.data());
    env.push_back(nullptr);
    std::string name = "ipc_memory_child", filter = "--gtest_filter=IpcMemoryChild.*";
    char* argv[] = {name.data(), filter.data(), nullptr};
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // dup2 drops close-on-exec on the copies.
        if (dup2(to_parent[1], kChildHandleFd) != kChildHandleFd || dup2(to_child[0], kChildGoFd) != kChildGoFd)
            _exit(2);
        execve("/proc/self/exe", argv, env.data());
        _exit(3);
    }
    close(to_parent[1]);
    close(to_child[0]);
    ze_ipc_mem_handle_t handle{};
    const bool received = read_within_a_minute(to_parent[0], handle.data, sizeof handle.data);
    close(to_parent[0]);
    void* opened = nullptr;
    if (received) {
        EXPECT_EQ(zeMemOpenIpcHandle(context, device, handle, 0, &opened), ZE_RESULT_SUCCESS);
        if (opened) {
            EXPECT_EQ(read(opened, kBytes), std::string(kBytes, '\xAB'));
            fill(opened, 0xCD, 16);
            EXPECT_EQ(zeMemCloseIpcHandle(context, opened), ZE_RESULT_SUCCESS);
        }
    }
    const char go = 1;
    EXPECT_EQ(write(to_child[1], &go, 1), 1);
    close(to_child[1]);
    // The child may hang only if the driver does: it gets a minute.
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    pid_t done = 0;
    while ((done = waitpid(child, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (done == 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        FAIL() << "the exporting child hung";
    }
    ASSERT_TRUE(received) << "the child sent no handle";
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the child did not see this process's write";
    // The exporter is gone: its handle opens nothing.
    opened = nullptr;
    EXPECT_EQ(zeMemOpenIpcHandle(context, device, handle, 0, &opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(opened, nullptr);
}

class IpcMemoryChild : public IpcMemory {};

// The child side of IpcMemory.AnotherProcessOpensTheHandle; skipped when run on its own.
TEST_F(IpcMemoryChild, ExportsAnAllocation) {
    if (!std::getenv(kChildVariable)) GTEST_SKIP() << "run by IpcMemory.AnotherProcessOpensTheHandle";
    void* mem = alloc_device(kBytes);
    fill(mem, 0xAB, kBytes);
    ze_ipc_mem_handle_t handle{};
    ZE_OK(zeMemGetIpcHandle(context, mem, &handle));
    ASSERT_EQ(write(kChildHandleFd, handle.data, sizeof handle.data), static_cast<ssize_t>(sizeof handle.data));
    close(kChildHandleFd);
    char go = 0;
    ASSERT_TRUE(read_within_a_minute(kChildGoFd, &go, 1));
    EXPECT_EQ(read(mem, 32), std::string(16, '\xCD') + std::string(16, '\xAB'));
    EXPECT_EQ(put(context, handle), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zeMemFree(context, mem), ZE_RESULT_SUCCESS);
}

}  // namespace
}  // namespace zetest
