// Virtual memory of the sim device: reservations, physical memory, mappings as operands of
// copies and fills, access, bad input, commands in flight and threads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "hal/import_fd.hpp"
#include "hal/sim/sim_virtual_memory.hpp"
#include "support/in_child.hpp"
#include "support/sim_fixture.hpp"

namespace zehal::test {
namespace {

using hal::MemoryAccess;
using hal::MemoryKind;
using hal::PhysicalMemory;
using hal::VirtualMemory;

constexpr size_t kPage = sim::SimVirtualMemory::kPageSize;
constexpr uint64_t kForever = ~0ull;

unsigned char* at(void* base, size_t offset) { return static_cast<unsigned char*>(base) + offset; }

// A reservation of `size` bytes of `vm`; fails the test when none is made.
void* reserve(VirtualMemory& vm, size_t size, const void* hint = nullptr) {
    void* p = nullptr;
    EXPECT_EQ(vm.reserve(hint, size, &p), ZE_RESULT_SUCCESS);
    return p;
}

std::shared_ptr<PhysicalMemory> physical(VirtualMemory& vm, size_t size, MemoryKind kind = MemoryKind::device) {
    std::shared_ptr<PhysicalMemory> p;
    EXPECT_EQ(vm.create_physical(kind, size, &p), ZE_RESULT_SUCCESS);
    return p;
}

// Copies `size` bytes on a copy queue of `d` and waits.
ze_result_t copy(const hal::DeviceRef& d, void* dst, const void* src, size_t size) {
    auto q = queue(d);
    if (ze_result_t r = q->append_copy(dst, src, size, nullptr, {}); r != ZE_RESULT_SUCCESS) return r;
    return q->host_synchronize(kForever);
}

TEST(SimVirtualMemory, EveryDeviceHasIt) {
    auto d = sim_device();
    ASSERT_NE(d->virtual_memory(), nullptr);
    size_t page = 0;
    EXPECT_EQ(d->virtual_memory()->page_size(0, &page), ZE_RESULT_SUCCESS);
    EXPECT_EQ(page, kPage);
    EXPECT_EQ(d->virtual_memory()->page_size(1, &page), ZE_RESULT_SUCCESS);
    EXPECT_EQ(page, kPage);
    EXPECT_EQ(d->virtual_memory()->page_size(64u << 20, &page), ZE_RESULT_SUCCESS);
    EXPECT_EQ(page, sim::SimVirtualMemory::kLargePageSize);
    EXPECT_EQ(d->virtual_memory()->page_size(1, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

// The physical memory behind an address and the address's offset into it; the file that
// holds its pages, sealed against shrinking so that another process may map it.
TEST(SimVirtualMemory, PhysicalMemoryAtAnAddress) {
    auto d = sim_device();
    VirtualMemory& vm = *d->virtual_memory();
    void* v = reserve(vm, 3 * kPage);
    ASSERT_NE(v, nullptr);
    auto p = physical(vm, 2 * kPage);
    ASSERT_EQ(vm.map(at(v, kPage), kPage, p, kPage, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    std::shared_ptr<PhysicalMemory> found;
    size_t offset = 0;
    EXPECT_EQ(vm.physical_at(at(v, kPage + 8), &found, &offset), ZE_RESULT_SUCCESS);
    EXPECT_EQ(found, p);
    EXPECT_EQ(offset, kPage + 8);
    EXPECT_EQ(vm.physical_at(v, &found, &offset), ZE_RESULT_ERROR_INVALID_ARGUMENT);                 // not mapped
    EXPECT_EQ(vm.physical_at(at(v, 2 * kPage), &found, &offset), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // past it
    int local = 0;
    EXPECT_EQ(vm.physical_at(&local, &found, &offset), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.physical_at(v, nullptr, &offset), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    uint64_t bytes = 0;
    ASSERT_GE(p->file(), 0);
    EXPECT_EQ(hal::check_import_fd(p->file(), &bytes), ZE_RESULT_SUCCESS);
    EXPECT_EQ(bytes, 2 * kPage);
    EXPECT_EQ(vm.unmap(at(v, kPage), kPage), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm.physical_at(at(v, kPage), &found, &offset), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.free(v, 3 * kPage), ZE_RESULT_SUCCESS);
}

TEST(SimVirtualMemory, FillAndCopyAcrossSeveralPhysicalMemories) {
    auto d = sim_device();
    VirtualMemory& vm = *d->virtual_memory();
    constexpr size_t kChunk = 2 * kPage;
    void* v = reserve(vm, 3 * kChunk);
    ASSERT_NE(v, nullptr);
    auto a = physical(vm, kChunk);
    auto b = physical(vm, 2 * kChunk);
    // The second chunk of the reservation is b's second chunk: a mapping at an offset.
    ASSERT_EQ(vm.map(v, kChunk, a, 0, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    ASSERT_EQ(vm.map(at(v, kChunk), kChunk, b, kChunk, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    ASSERT_EQ(vm.map(at(v, 2 * kChunk), kChunk, b, 0, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    EXPECT_EQ(a->mappings(), 1u);
    EXPECT_EQ(b->mappings(), 2u);

    auto q = queue(d);
    const uint32_t pattern = 0x5a5a1234;
    ASSERT_EQ(q->append_fill(v, &pattern, sizeof pattern, 3 * kChunk, nullptr, {}), ZE_RESULT_SUCCESS);
    Memory out(d, MemoryKind::host, 3 * kChunk);
    ASSERT_EQ(q->append_barrier(nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(out.ptr(), v, 3 * kChunk, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kForever), ZE_RESULT_SUCCESS);
    for (size_t i = 0; i < 3 * kChunk / 4; ++i) ASSERT_EQ(out.get<uint32_t>()[i], pattern) << i;

    // A copy in across the mappings lands in the physical pages they name.
    std::vector<unsigned char> in(3 * kChunk);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 13 + 1);
    ASSERT_EQ(copy(d, v, in.data(), in.size()), ZE_RESULT_SUCCESS);
    ASSERT_EQ(vm.unmap(v, 3 * kChunk), ZE_RESULT_SUCCESS);
    // b's first chunk now holds the reservation's third chunk: map it alone and read it.
    ASSERT_EQ(vm.map(v, kChunk, b, 0, MemoryAccess::read_only), ZE_RESULT_SUCCESS);
    std::vector<unsigned char> back(kChunk);
    ASSERT_EQ(copy(d, back.data(), v, kChunk), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::memcmp(back.data(), in.data() + 2 * kChunk, kChunk), 0);
    ASSERT_EQ(vm.unmap(v, kChunk), ZE_RESULT_SUCCESS);

    EXPECT_EQ(vm.free(v, 3 * kChunk), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm.destroy_physical(&a), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm.destroy_physical(&b), ZE_RESULT_SUCCESS);
    EXPECT_EQ(a, nullptr);
}

TEST(SimVirtualMemory, HostPhysicalMemoryIsSharedByItsMappings) {
    auto d = sim_device();
    VirtualMemory& vm = *d->virtual_memory();
    auto host = physical(vm, kPage, MemoryKind::host);
    ASSERT_NE(host, nullptr);
    EXPECT_EQ(host->kind(), MemoryKind::host);
    EXPECT_EQ(host->size(), kPage);
    void* v0 = reserve(vm, kPage);
    void* v1 = reserve(vm, kPage);
    ASSERT_EQ(vm.map(v0, kPage, host, 0, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    ASSERT_EQ(vm.map(v1, kPage, host, 0, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    static_cast<uint64_t*>(v0)[7] = 0xdeadbeef;
    EXPECT_EQ(static_cast<uint64_t*>(v1)[7], 0xdeadbeefu);
    const uint8_t seven = 7;
    auto q = queue(d);
    ASSERT_EQ(q->append_fill(v1, &seven, 1, kPage, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kForever), ZE_RESULT_SUCCESS);
    EXPECT_EQ(*at(v0, kPage - 1), 7);
    EXPECT_EQ(vm.free(v0, kPage), ZE_RESULT_SUCCESS);  // unmaps what is mapped in it
    EXPECT_EQ(host->mappings(), 1u);
    EXPECT_EQ(vm.free(v1, kPage), ZE_RESULT_SUCCESS);
    EXPECT_EQ(host->mappings(), 0u);
}

TEST(SimVirtualMemory, UnmappedAndInaccessibleRangesAreRefusedAtAppend) {
    auto d = sim_device();
    VirtualMemory& vm = *d->virtual_memory();
    void* v = reserve(vm, 4 * kPage);
    auto p = physical(vm, 2 * kPage);
    auto q = queue(d);
    std::vector<unsigned char> host(4 * kPage, 1);
    const uint8_t one = 1;
    // Nothing mapped yet.
    EXPECT_EQ(q->append_copy(v, host.data(), kPage, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_fill(v, &one, 1, kPage, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(d->check_operand(v, kPage), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(vm.map(at(v, kPage), 2 * kPage, p, 0, MemoryAccess::none), ZE_RESULT_SUCCESS);
    // Mapped without access.
    EXPECT_EQ(q->append_copy(host.data(), at(v, kPage), kPage, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(vm.set_access(at(v, kPage), 2 * kPage, MemoryAccess::read_only), ZE_RESULT_SUCCESS);
    // Read-only: a source, never a destination.
    EXPECT_EQ(q->append_copy(host.data(), at(v, kPage), 2 * kPage, nullptr, {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->append_copy(at(v, kPage), host.data(), kPage, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_fill(at(v, kPage), &one, 1, kPage, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(vm.set_access(at(v, kPage), 2 * kPage, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->append_fill(at(v, kPage), &one, 1, 2 * kPage, nullptr, {}), ZE_RESULT_SUCCESS);
    // Running into the unmapped page after the mapping, or before it.
    EXPECT_EQ(q->append_fill(at(v, kPage), &one, 1, 3 * kPage, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_copy(v, host.data(), 2 * kPage, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // Past the end of the reservation.
    EXPECT_EQ(q->append_copy(at(v, 3 * kPage), host.data(), 2 * kPage, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    ASSERT_EQ(q->host_synchronize(kForever), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm.unmap(at(v, kPage), 2 * kPage), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->append_copy(host.data(), at(v, kPage), kPage, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.free(v, 4 * kPage), ZE_RESULT_SUCCESS);
    // Freed: not an operand any more (system memory there is not mapped either).
    EXPECT_NE(q->append_copy(host.data(), v, kPage, nullptr, {}), ZE_RESULT_SUCCESS);
}

TEST(SimVirtualMemory, AccessIsReportedPerRun) {
    auto d = sim_device();
    VirtualMemory& vm = *d->virtual_memory();
    void* v = reserve(vm, 4 * kPage);
    auto p = physical(vm, 2 * kPage);
    MemoryAccess access = MemoryAccess::read_write;
    size_t size = 0;
    ASSERT_EQ(vm.get_access(v, kPage, &access, &size), ZE_RESULT_SUCCESS);
    EXPECT_EQ(access, MemoryAccess::none);
    EXPECT_EQ(size, 4 * kPage);
    ASSERT_EQ(vm.map(at(v, kPage), kPage, p, 0, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    ASSERT_EQ(vm.map(at(v, 2 * kPage), kPage, p, kPage, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    ASSERT_EQ(vm.get_access(v, kPage, &access, &size), ZE_RESULT_SUCCESS);
    EXPECT_EQ(access, MemoryAccess::none);
    EXPECT_EQ(size, kPage);
    ASSERT_EQ(vm.get_access(at(v, kPage), kPage, &access, &size), ZE_RESULT_SUCCESS);
    EXPECT_EQ(access, MemoryAccess::read_write);
    EXPECT_EQ(size, 2 * kPage);  // two mappings, one access
    ASSERT_EQ(vm.set_access(at(v, 2 * kPage), kPage, MemoryAccess::read_only), ZE_RESULT_SUCCESS);
    ASSERT_EQ(vm.get_access(at(v, kPage), kPage, &access, &size), ZE_RESULT_SUCCESS);
    EXPECT_EQ(size, kPage);
    ASSERT_EQ(vm.get_access(at(v, 2 * kPage), kPage, &access, &size), ZE_RESULT_SUCCESS);
    EXPECT_EQ(access, MemoryAccess::read_only);
    EXPECT_EQ(vm.get_access(v, kPage, nullptr, &size), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(vm.get_access(v, kPage, &access, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(vm.get_access(at(v, 3 * kPage), 2 * kPage, &access, &size), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.free(v, 4 * kPage), ZE_RESULT_SUCCESS);
}

TEST(SimVirtualMemory, HintIsTakenWhenFree) {
    auto d = sim_device();
    VirtualMemory& vm = *d->virtual_memory();
    void* first = reserve(vm, 2 * kPage);
    ASSERT_NE(first, nullptr);
    // Taken: somewhere else.
    void* second = reserve(vm, 2 * kPage, first);
    ASSERT_NE(second, nullptr);
    EXPECT_NE(second, first);
    ASSERT_EQ(vm.free(first, 2 * kPage), ZE_RESULT_SUCCESS);
    void* again = reserve(vm, 2 * kPage, first);
    EXPECT_EQ(again, first);
    EXPECT_EQ(vm.reservations(), 2u);
    EXPECT_EQ(vm.free(again, 2 * kPage), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm.free(second, 2 * kPage), ZE_RESULT_SUCCESS);
    // A large reservation costs no memory.
    void* large = reserve(vm, size_t{1} << 36);
    ASSERT_NE(large, nullptr);
    EXPECT_EQ(vm.free(large, size_t{1} << 36), ZE_RESULT_SUCCESS);
}

TEST(SimVirtualMemory, BadInputIsRefusedAndChangesNothing) {
    auto d = sim_device();
    VirtualMemory& vm = *d->virtual_memory();
    void* out = nullptr;
    EXPECT_EQ(vm.reserve(nullptr, kPage, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(vm.reserve(nullptr, 0, &out), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(vm.reserve(nullptr, kPage + 1, &out), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    // A hint off the page is one the range cannot start at: the reservation lies elsewhere.
    ASSERT_EQ(vm.reserve(reinterpret_cast<void*>(kPage + 8), kPage, &out), ZE_RESULT_SUCCESS);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(out) % kPage, 0u);
    EXPECT_EQ(vm.free(out, kPage), ZE_RESULT_SUCCESS);
    std::shared_ptr<PhysicalMemory> p;
    EXPECT_EQ(vm.create_physical(MemoryKind::device, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(vm.create_physical(MemoryKind::device, kPage / 2, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(vm.create_physical(MemoryKind::shared, kPage, &p), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(vm.create_physical(MemoryKind::device, kPage, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(vm.destroy_physical(nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(vm.destroy_physical(&p), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);

    void* v = reserve(vm, 4 * kPage);
    p = physical(vm, 2 * kPage);
    const auto rw = MemoryAccess::read_write;
    EXPECT_EQ(vm.map(nullptr, kPage, p, 0, rw), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(vm.map(v, kPage, nullptr, 0, rw), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(vm.map(v, 0, p, 0, rw), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(vm.map(at(v, 8), kPage, p, 0, rw), ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
    EXPECT_EQ(vm.map(v, kPage + 8, p, 0, rw), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(vm.map(v, kPage, p, 8, rw), ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
    EXPECT_EQ(vm.map(v, kPage, p, 0, static_cast<MemoryAccess>(3)), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(vm.map(v, 2 * kPage, p, kPage, rw), ZE_RESULT_ERROR_INVALID_SIZE);  // past the physical end
    EXPECT_EQ(vm.map(v, 4 * kPage, p, 0, rw), ZE_RESULT_ERROR_INVALID_SIZE);
    std::vector<unsigned char> outside(4 * kPage);
    EXPECT_EQ(vm.map(at(v, 3 * kPage), 2 * kPage, p, 0, rw), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // runs out
    // Another device's physical memory.
    auto other = sim_device();
    auto foreign = physical(*other->virtual_memory(), kPage);
    EXPECT_EQ(vm.map(v, kPage, foreign, 0, rw), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.destroy_physical(&foreign), ZE_RESULT_ERROR_INVALID_ARGUMENT);

    ASSERT_EQ(vm.map(at(v, kPage), 2 * kPage, p, 0, rw), ZE_RESULT_SUCCESS);
    // Over a mapping, fully or in part.
    EXPECT_EQ(vm.map(at(v, kPage), kPage, p, 0, rw), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.map(v, 2 * kPage, p, 0, rw), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.map(at(v, 2 * kPage), 2 * kPage, p, 0, rw), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // Unmap of part of a mapping, of what lies outside every reservation; access of what is
    // not (wholly) mapped.
    EXPECT_EQ(vm.unmap(at(v, kPage), kPage), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.unmap(v, 2 * kPage), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.unmap(at(v, 2 * kPage), 2 * kPage), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.unmap(at(v, 2 * kPage), 4 * kPage), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // (8 bytes into a heap block: never page-aligned, whatever the allocator aligns blocks to.)
    EXPECT_EQ(vm.unmap(outside.data() + 8, kPage), ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
    EXPECT_EQ(vm.unmap(reinterpret_cast<void*>(kPage), kPage), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.unmap(v, kPage), ZE_RESULT_SUCCESS);  // nothing mapped there: nothing to do
    EXPECT_EQ(vm.set_access(v, kPage, rw), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.set_access(at(v, kPage), 2 * kPage, static_cast<MemoryAccess>(7)),
              ZE_RESULT_ERROR_INVALID_ENUMERATION);
    // Physical memory in use.
    EXPECT_EQ(vm.destroy_physical(&p), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
    EXPECT_NE(p, nullptr);
    // Free of anything but a whole reservation, then twice.
    EXPECT_EQ(vm.free(v, 2 * kPage), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.free(at(v, kPage), 3 * kPage), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.free(nullptr, kPage), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    // Device free() knows no reservation.
    EXPECT_EQ(d->free(v), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // Nothing changed: the mapping still works.
    const uint8_t one = 1;
    auto q = queue(d);
    EXPECT_EQ(q->append_fill(at(v, kPage), &one, 1, 2 * kPage, nullptr, {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(kForever), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm.unmap(v, 4 * kPage), ZE_RESULT_SUCCESS);  // the mapping in it
    EXPECT_EQ(p->mappings(), 0u);
    EXPECT_EQ(vm.unmap(at(v, kPage), 2 * kPage), ZE_RESULT_SUCCESS);  // twice
    EXPECT_EQ(vm.destroy_physical(&p), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm.free(v, 4 * kPage), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm.free(v, 4 * kPage), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.reservations(), 0u);
}

TEST(SimVirtualMemory, PointerInfoDescribesTheReservation) {
    auto d = sim_device();
    VirtualMemory& vm = *d->virtual_memory();
    void* v = reserve(vm, 2 * kPage);
    hal::PointerInfo info;
    ASSERT_EQ(d->pointer_info(at(v, kPage + 5), &info), ZE_RESULT_SUCCESS);
    EXPECT_EQ(info.base, v);
    EXPECT_EQ(info.size, 2 * kPage);
    EXPECT_EQ(info.kind, MemoryKind::device);
    // Another device refuses it as an operand.
    auto other = sim_device();
    std::vector<unsigned char> host(kPage);
    auto p = physical(vm, kPage);
    ASSERT_EQ(vm.map(v, kPage, p, 0, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    EXPECT_EQ(queue(other)->append_copy(host.data(), v, kPage, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm.free(v, 2 * kPage), ZE_RESULT_SUCCESS);
}

TEST(SimVirtualMemory, DevicePhysicalMemoryCountsAgainstTheDevice) {
    sim::SimConfig config;
    config.memory_bytes = 4 * kPage;
    auto d = sim_device(config);
    VirtualMemory& vm = *d->virtual_memory();
    std::shared_ptr<PhysicalMemory> p;
    EXPECT_EQ(vm.create_physical(MemoryKind::device, 8 * kPage, &p), ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
    p = physical(vm, 3 * kPage);
    void* q = nullptr;
    EXPECT_EQ(d->allocate(MemoryKind::device, 2 * kPage, 0, 0, 0, &q), ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
    // Host physical memory does not.
    auto host = physical(vm, 8 * kPage, MemoryKind::host);
    EXPECT_NE(host, nullptr);
    p.reset();  // given back with the last reference
    ASSERT_EQ(d->allocate(MemoryKind::device, 2 * kPage, 0, 0, 0, &q), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d->free(q), ZE_RESULT_SUCCESS);
}

// Unmapping, narrowing the access and freeing wait for the commands queued on the reservation:
// the engine never touches pages taken away, and the data arrives.
void change_under_queued_copy(int change) {
    auto d = sim_device();
    VirtualMemory& vm = *d->virtual_memory();
    void* v = reserve(vm, kPage);
    auto p = physical(vm, kPage);
    ASSERT_EQ(vm.map(v, kPage, p, 0, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    auto events = pool(d, 2);
    const hal::EventRef gate = event(events, 0);
    const hal::EventRef done = event(events, 1);
    std::vector<unsigned char> in(kPage, 0x42);
    auto q = queue(d);
    ASSERT_EQ(q->append_copy(v, in.data(), kPage, done, std::span(&gate, 1)), ZE_RESULT_SUCCESS);
    std::atomic<bool> returned{false};
    ze_result_t seen = ZE_RESULT_NOT_READY;
    std::thread changer([&] {
        ze_result_t r = ZE_RESULT_SUCCESS;
        if (change == 0) r = vm.unmap(v, kPage);
        if (change == 1) r = vm.set_access(v, kPage, MemoryAccess::read_only);
        if (change == 2) r = vm.free(v, kPage);
        EXPECT_EQ(r, ZE_RESULT_SUCCESS);
        seen = done->query();
        returned = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(returned.load());
    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    changer.join();
    EXPECT_EQ(seen, ZE_RESULT_SUCCESS);  // the copy was over when the change returned
    if (change == 1) {
        EXPECT_EQ(static_cast<unsigned char*>(v)[kPage - 1], 0x42);
        EXPECT_EQ(vm.free(v, kPage), ZE_RESULT_SUCCESS);
    }
}

TEST(SimVirtualMemory, UnmapWaitsForQueuedCommands) {
    in_child([] { change_under_queued_copy(0); });
}
TEST(SimVirtualMemory, NarrowingAccessWaitsForQueuedCommands) {
    in_child([] { change_under_queued_copy(1); });
}
TEST(SimVirtualMemory, FreeWaitsForQueuedCommands) {
    in_child([] { change_under_queued_copy(2); });
}

TEST(SimVirtualMemory, ThreadsReserveMapCopyAndFreeAtOnce) {
    in_child([] {
        auto d = sim_device();
        VirtualMemory& vm = *d->virtual_memory();
        auto shared = physical(vm, 2 * kPage, MemoryKind::host);
        constexpr int kThreads = 6;
        constexpr int kRounds = 40;
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                auto q = queue(d);
                std::vector<unsigned char> in(2 * kPage, static_cast<unsigned char>(t + 1));
                std::vector<unsigned char> out(2 * kPage);
                for (int i = 0; i < kRounds; ++i) {
                    void* v = reserve(vm, 4 * kPage);
                    auto own = physical(vm, 2 * kPage);
                    ASSERT_EQ(vm.map(v, 2 * kPage, own, 0, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
                    ASSERT_EQ(vm.map(at(v, 2 * kPage), 2 * kPage, shared, 0, MemoryAccess::read_only),
                              ZE_RESULT_SUCCESS);
                    ASSERT_EQ(q->append_copy(v, in.data(), 2 * kPage, nullptr, {}), ZE_RESULT_SUCCESS);
                    ASSERT_EQ(q->append_copy(out.data(), v, 2 * kPage, nullptr, {}), ZE_RESULT_SUCCESS);
                    ASSERT_EQ(q->append_copy(out.data(), at(v, kPage), 2 * kPage, nullptr, {}), ZE_RESULT_SUCCESS);
                    // Queued copies may still run: unmap and free wait for them.
                    ASSERT_EQ(vm.unmap(v, 2 * kPage), ZE_RESULT_SUCCESS);
                    ASSERT_EQ(vm.free(v, 4 * kPage), ZE_RESULT_SUCCESS);
                    ASSERT_EQ(q->host_synchronize(kForever), ZE_RESULT_SUCCESS);
                    ASSERT_EQ(out[0], static_cast<unsigned char>(t + 1));
                }
            });
        }
        for (auto& t : threads) t.join();
        EXPECT_EQ(vm.reservations(), 0u);
        EXPECT_EQ(shared->mappings(), 0u);
    });
}

}  // namespace
}  // namespace zehal::test
