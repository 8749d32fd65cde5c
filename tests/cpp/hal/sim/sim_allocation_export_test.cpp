// Allocations of the sim device made for export: each over a memfd of its own, handed out by
// export_allocation, imported by import_dma_buf in this process or in another.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "hal/sim/sim_virtual_memory.hpp"
#include "support/child_exit.hpp"
#include "support/open_fds.hpp"
#include "support/sim_fixture.hpp"

namespace zehal {
namespace {

using hal::MemoryKind;
using test::kHangGuardNs;

constexpr size_t kBytes = 8192;

// An exportable allocation of `kind`, freed (and checked) when it goes.
class Exportable {
public:
    Exportable(const hal::DeviceRef& d, MemoryKind kind, size_t size, size_t alignment = 0) : d_(d) {
        EXPECT_EQ(d->allocate_exportable(kind, size, alignment, 0, 0, &ptr_), ZE_RESULT_SUCCESS);
    }
    Exportable(const Exportable&) = delete;
    Exportable& operator=(const Exportable&) = delete;
    ~Exportable() {
        if (ptr_) {
            EXPECT_EQ(d_->free(ptr_), ZE_RESULT_SUCCESS);
        }
    }
    void* ptr() const { return ptr_; }

private:
    hal::DeviceRef d_;
    void* ptr_ = nullptr;
};

TEST(SimAllocationExport, EveryKindExportsItsOwnMemfd) {
    auto d = test::sim_device();
    EXPECT_EQ(d->exportable_kinds(), 0x7u);
    for (MemoryKind kind : {MemoryKind::host, MemoryKind::device, MemoryKind::shared}) {
        Exportable m(d, kind, 5000);
        ASSERT_NE(m.ptr(), nullptr);
        hal::PointerInfo info;
        ASSERT_EQ(d->pointer_info(m.ptr(), &info), ZE_RESULT_SUCCESS);
        EXPECT_EQ(info.kind, kind);
        EXPECT_EQ(info.size, 5000u);
        int fd = -1;
        ASSERT_EQ(d->export_allocation(m.ptr(), &fd), ZE_RESULT_SUCCESS);
        ASSERT_GE(fd, 0);
        int again = -1;
        ASSERT_EQ(d->export_allocation(m.ptr(), &again), ZE_RESULT_SUCCESS);
        EXPECT_EQ(again, fd);
        // A memfd of whole pages of the device's virtual memory, sealed against shrinking:
        // importable, as memory and as physical memory.
        struct stat st {};
        ASSERT_EQ(fstat(fd, &st), 0);
        EXPECT_EQ(static_cast<size_t>(st.st_size), sim::SimVirtualMemory::kPageSize);
        EXPECT_TRUE(fcntl(fd, F_GET_SEALS) & F_SEAL_SHRINK);
        // A fill lands in the file; a write through the file is the allocation's.
        auto q = test::queue(d);
        const unsigned char ab = 0xAB;
        ASSERT_EQ(q->append_fill(m.ptr(), &ab, 1, 5000, nullptr, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        auto* view = static_cast<unsigned char*>(mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
        ASSERT_NE(view, MAP_FAILED);
        EXPECT_EQ(view[0], 0xAB);
        EXPECT_EQ(view[4999], 0xAB);
        view[1] = 0x11;
        EXPECT_EQ(static_cast<unsigned char*>(m.ptr())[1], 0x11);
        munmap(view, 8192);
    }
}

// Imported by this device or another, as device memory or as host memory.
TEST(SimAllocationExport, ImportMapsTheSameBytes) {
    auto d = test::sim_device();
    auto other = test::sim_device();
    Exportable m(d, MemoryKind::device, kBytes);
    std::memset(m.ptr(), 0x3C, kBytes);
    int fd = -1;
    ASSERT_EQ(d->export_allocation(m.ptr(), &fd), ZE_RESULT_SUCCESS);
    for (const hal::DeviceRef& importer : {d, other}) {
        void* imported = nullptr;
        ASSERT_EQ(importer->import_dma_buf(fd, kBytes, &imported), ZE_RESULT_SUCCESS);
        EXPECT_NE(imported, m.ptr());
        test::Memory host(importer, MemoryKind::host, kBytes);
        auto q = test::queue(importer);
        ASSERT_EQ(q->append_copy(host.ptr(), imported, kBytes, nullptr, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        EXPECT_EQ(host.get()[0], 0x3C);
        EXPECT_EQ(host.get()[kBytes - 1], 0x3C);
        EXPECT_EQ(importer->free(imported), ZE_RESULT_SUCCESS);
        EXPECT_NE(fcntl(fd, F_GETFD), -1);  // the import did not take the fd over
    }
    // As host memory: the host reads it, every sim device copies it as its backend's host memory.
    void* host_view = nullptr;
    ASSERT_EQ(other->import_host_dma_buf(fd, kBytes, &host_view), ZE_RESULT_SUCCESS);
    hal::PointerInfo info;
    ASSERT_EQ(d->pointer_info(host_view, &info), ZE_RESULT_SUCCESS);
    EXPECT_EQ(info.kind, MemoryKind::host);
    EXPECT_TRUE(info.imported);
    EXPECT_EQ(static_cast<unsigned char*>(host_view)[kBytes - 1], 0x3C);
    static_cast<unsigned char*>(host_view)[0] = 0x77;
    EXPECT_EQ(static_cast<unsigned char*>(m.ptr())[0], 0x77);
    EXPECT_EQ(d->free(host_view), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d->import_host_dma_buf(fd, sim::SimVirtualMemory::kPageSize + 1, &host_view),
              ZE_RESULT_ERROR_INVALID_SIZE);  // more than the file holds
    EXPECT_EQ(d->import_host_dma_buf(-1, kBytes, &host_view), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(SimAllocationExport, AlignmentIsKept) {
    auto d = test::sim_device();
    for (size_t alignment : {size_t{64}, size_t{4096}, size_t{1} << 21}) {
        Exportable m(d, MemoryKind::device, 100, alignment);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(m.ptr()) % alignment, 0u) << alignment;
        hal::PointerInfo info;
        ASSERT_EQ(d->pointer_info(m.ptr(), &info), ZE_RESULT_SUCCESS);
        EXPECT_EQ(info.alignment, alignment);
    }
}

// Memory export_allocation refuses (the HAL's argument checks are the contract suite's).
TEST(SimAllocationExport, Errors) {
    auto d = test::sim_device();
    void* p = nullptr;
    int fd = -7;
    int local = 0;
    EXPECT_EQ(d->export_allocation(&local, &fd), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // foreign
    {
        Exportable m(d, MemoryKind::device, 64);
        EXPECT_EQ(d->export_allocation(static_cast<char*>(m.ptr()) + 1, &fd), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(fd, -7);
        p = m.ptr();
    }
    EXPECT_EQ(d->export_allocation(p, &fd), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // freed
    // Another device's memory is not this device's to export.
    auto other = test::sim_device();
    Exportable theirs(other, MemoryKind::device, 64);
    EXPECT_EQ(d->export_allocation(theirs.ptr(), &fd), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(fd, -7);
}

// An export imports as device physical memory that a virtual range maps.
TEST(SimAllocationExport, ImportsAsPhysicalMemory) {
    auto d = test::sim_device();
    Exportable m(d, MemoryKind::device, kBytes);
    std::memset(m.ptr(), 0x42, kBytes);
    int fd = -1;
    ASSERT_EQ(d->export_allocation(m.ptr(), &fd), ZE_RESULT_SUCCESS);
    hal::VirtualMemory* vm = d->virtual_memory();
    const size_t page = sim::SimVirtualMemory::kPageSize;
    std::shared_ptr<hal::PhysicalMemory> physical;
    EXPECT_EQ(vm->import_physical(fd, 2 * page, &physical), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(vm->import_physical(fd, 100, &physical), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(vm->import_physical(-1, page, &physical), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(vm->import_physical(fd, page, &physical), ZE_RESULT_SUCCESS);
    EXPECT_EQ(physical->kind(), MemoryKind::device);
    void* range = nullptr;
    ASSERT_EQ(vm->reserve(nullptr, page, &range), ZE_RESULT_SUCCESS);
    ASSERT_EQ(vm->map(range, page, physical, 0, hal::MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    test::Memory host(d, MemoryKind::host, kBytes);
    auto q = test::queue(d);
    ASSERT_EQ(q->append_copy(host.ptr(), range, kBytes, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(host.get()[0], 0x42);
    EXPECT_EQ(host.get()[kBytes - 1], 0x42);
    EXPECT_EQ(vm->unmap(range, page), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm->free(range, page), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm->destroy_physical(&physical), ZE_RESULT_SUCCESS);
    EXPECT_NE(fcntl(fd, F_GETFD), -1);  // the caller's fd stays open
}

// Each allocation's fd is closed by its free, once; a device's destruction closes those
// never freed; nothing leaks.
TEST(SimAllocationExport, FdsCloseWithTheirMemory) {
    const size_t before = test::open_fds();
    {
        auto d = test::sim_device();
        const size_t with_device = test::open_fds();
        for (int i = 0; i < 64; ++i) {
            void* p = nullptr;
            ASSERT_EQ(d->allocate_exportable(MemoryKind::device, 4096, 0, 0, 0, &p), ZE_RESULT_SUCCESS);
            int fd = -1;
            ASSERT_EQ(d->export_allocation(p, &fd), ZE_RESULT_SUCCESS);
            ASSERT_EQ(d->free(p), ZE_RESULT_SUCCESS);
            EXPECT_EQ(fcntl(fd, F_GETFD), -1);
        }
        EXPECT_EQ(test::open_fds(), with_device);
        void* kept = nullptr;
        ASSERT_EQ(d->allocate_exportable(MemoryKind::device, 4096, 0, 0, 0, &kept), ZE_RESULT_SUCCESS);
    }
    EXPECT_EQ(test::open_fds(), before);
}

// Sends `fd` over unix socket `s` (SCM_RIGHTS), as programs pass dma-bufs between processes.
bool send_fd(int s, int fd) {
    char byte = 0;
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    return sendmsg(s, &msg, 0) == 1;
}

// The fd sent over `s`; -1 when none came.
int receive_fd(int s) {
    char byte = 0;
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    if (recvmsg(s, &msg, 0) != 1) return -1;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    if (!c || c->cmsg_type != SCM_RIGHTS) return -1;
    int fd = -1;
    std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
}

// What the child of AnotherProcessImportsTheExport does, as its exit status: receives the
// fd, imports it into a sim device of its own, checks the parent's bytes, writes its own.
int import_in_child(int s) {
    alarm(30);  // a hang ends the child; the parent sees it killed
    const int fd = receive_fd(s);
    if (fd < 0) return 2;
    hal::DeviceRef d;
    if (sim::create_device({}, &d) != ZE_RESULT_SUCCESS) return 3;
    void* imported = nullptr;
    if (d->import_dma_buf(fd, kBytes, &imported) != ZE_RESULT_SUCCESS) return 4;
    void* host = nullptr;
    if (d->allocate(MemoryKind::host, kBytes, 0, 0, 0, &host) != ZE_RESULT_SUCCESS) return 5;
    std::shared_ptr<hal::Queue> q;
    if (d->create_queue(hal::kCopyOrdinal, 0, &q) != ZE_RESULT_SUCCESS) return 6;
    const unsigned char cd = 0xCD;
    if (q->append_copy(host, imported, kBytes, nullptr, {}) != ZE_RESULT_SUCCESS ||
        q->append_fill(imported, &cd, 1, 16, nullptr, {}) != ZE_RESULT_SUCCESS ||
        q->host_synchronize(kHangGuardNs) != ZE_RESULT_SUCCESS)
        return 7;
    const auto* bytes = static_cast<const unsigned char*>(host);
    for (size_t i = 0; i < kBytes; ++i)
        if (bytes[i] != 0xAB) return 8;
    q.reset();
    if (d->free(imported) != ZE_RESULT_SUCCESS || d->free(host) != ZE_RESULT_SUCCESS) return 9;
    close(fd);
    return 0;
}

TEST(SimAllocationExport, AnotherProcessImportsTheExport) {
    int sockets[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sockets), 0);
    // The child starts before this test makes a device: it makes its own.
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        close(sockets[0]);
        _exit(import_in_child(sockets[1]));
    }
    close(sockets[1]);
    auto d = test::sim_device();
    Exportable m(d, MemoryKind::device, kBytes);
    std::memset(m.ptr(), 0xAB, kBytes);
    int fd = -1;
    ASSERT_EQ(d->export_allocation(m.ptr(), &fd), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(send_fd(sockets[0], fd));
    close(sockets[0]);
    ASSERT_EQ(test::wait_for_child(child), "") << "the importing child";
    const auto* bytes = static_cast<const unsigned char*>(m.ptr());
    EXPECT_EQ(bytes[0], 0xCD);
    EXPECT_EQ(bytes[15], 0xCD);
    EXPECT_EQ(bytes[16], 0xAB);
}

}  // namespace
}  // namespace zehal
