// Virtual memory of a CUDA device (cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess):
// mapped ranges as copy and fill operands, access, bad input, commands in flight.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "hal/virtual_memory.hpp"
#include "support/backend_devices.hpp"

namespace zehal::test {
namespace {

using hal::MemoryAccess;
using hal::MemoryKind;
using hal::PhysicalMemory;
using hal::VirtualMemory;

constexpr uint64_t kForever = ~0ull;

unsigned char* at(void* base, size_t offset) { return static_cast<unsigned char*>(base) + offset; }

// The device's virtual memory and its page size, or a skip saying why there is none.
#define ZEHAL_REQUIRE_VIRTUAL_MEMORY(device, vm, page)                                     \
    ZEHAL_REQUIRE_CUDA(device);                                                            \
    VirtualMemory* vm = (device)->virtual_memory();                                        \
    if (!vm) GTEST_SKIP() << "the driver has no virtual memory management on this device"; \
    size_t page = 0;                                                                       \
    ASSERT_EQ(vm->page_size(0, &page), ZE_RESULT_SUCCESS)

std::shared_ptr<hal::Queue> copy_queue(const hal::DeviceRef& d) {
    std::shared_ptr<hal::Queue> q;
    EXPECT_EQ(d->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    return q;
}

TEST(CudaVirtualMemory, FillAndCopyAcrossTwoPhysicalMemories) {
    hal::DeviceRef d;
    ZEHAL_REQUIRE_VIRTUAL_MEMORY(d, vm, page);
    void* v = nullptr;
    ASSERT_EQ(vm->reserve(nullptr, 2 * page, &v), ZE_RESULT_SUCCESS);
    std::shared_ptr<PhysicalMemory> a, b, whole;
    ASSERT_EQ(vm->create_physical(MemoryKind::device, page, &a), ZE_RESULT_SUCCESS);
    ASSERT_EQ(vm->create_physical(MemoryKind::device, page, &b), ZE_RESULT_SUCCESS);
    ASSERT_EQ(vm->create_physical(MemoryKind::device, 2 * page, &whole), ZE_RESULT_SUCCESS);
    ASSERT_EQ(vm->map(v, page, a, 0, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    // CUDA maps a whole physical allocation only (cuMemMap: offset 0, its full size).
    EXPECT_EQ(vm->map(at(v, page), page, whole, page, MemoryAccess::read_write), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    ASSERT_EQ(vm->map(at(v, page), page, b, 0, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    auto q = copy_queue(d);
    const uint32_t pattern = 0x12345678;
    ASSERT_EQ(q->append_fill(v, &pattern, sizeof pattern, 2 * page, nullptr, {}), ZE_RESULT_SUCCESS);
    std::vector<uint32_t> out(2 * page / 4);
    ASSERT_EQ(q->append_barrier(nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(out.data(), v, 2 * page, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kForever), ZE_RESULT_SUCCESS);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], pattern) << i;
    // Read-only: a source, not a destination; unmapped: neither.
    ASSERT_EQ(vm->set_access(v, page, MemoryAccess::read_only), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->append_copy(v, out.data(), page, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_copy(out.data(), v, page, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kForever), ZE_RESULT_SUCCESS);
    ASSERT_EQ(vm->unmap(at(v, page), page), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->append_copy(out.data(), v, 2 * page, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm->destroy_physical(&a), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
    EXPECT_EQ(vm->free(v, 2 * page), ZE_RESULT_SUCCESS);  // unmaps a
    EXPECT_EQ(vm->destroy_physical(&a), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm->destroy_physical(&b), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm->destroy_physical(&whole), ZE_RESULT_SUCCESS);
}

TEST(CudaVirtualMemory, HostPhysicalMemoryWorksOrIsUnsupported) {
    hal::DeviceRef d;
    ZEHAL_REQUIRE_VIRTUAL_MEMORY(d, vm, page);
    std::shared_ptr<PhysicalMemory> host;
    const ze_result_t made = vm->create_physical(MemoryKind::host, page, &host);
    if (made == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "no host-located physical memory";
    ASSERT_EQ(made, ZE_RESULT_SUCCESS);
    void* v = nullptr;
    ASSERT_EQ(vm->reserve(nullptr, page, &v), ZE_RESULT_SUCCESS);
    ASSERT_EQ(vm->map(v, page, host, 0, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    const uint8_t seven = 7;
    auto q = copy_queue(d);
    ASSERT_EQ(q->append_fill(v, &seven, 1, page, nullptr, {}), ZE_RESULT_SUCCESS);
    std::vector<uint8_t> out(page);
    ASSERT_EQ(q->append_copy(out.data(), v, page, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kForever), ZE_RESULT_SUCCESS);
    EXPECT_EQ(out[page - 1], 7);
    EXPECT_EQ(vm->unmap(v, page), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm->free(v, page), ZE_RESULT_SUCCESS);
}

TEST(CudaVirtualMemory, BadInputIsRefused) {
    hal::DeviceRef d;
    ZEHAL_REQUIRE_VIRTUAL_MEMORY(d, vm, page);
    void* v = nullptr;
    EXPECT_EQ(vm->reserve(nullptr, 0, &v), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(vm->reserve(nullptr, page + 1, &v), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    ASSERT_EQ(vm->reserve(nullptr, 2 * page, &v), ZE_RESULT_SUCCESS);
    std::shared_ptr<PhysicalMemory> p;
    ASSERT_EQ(vm->create_physical(MemoryKind::device, page, &p), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm->map(at(v, 1), page, p, 0, MemoryAccess::read_write), ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
    EXPECT_EQ(vm->map(v, 2 * page, p, 0, MemoryAccess::read_write), ZE_RESULT_ERROR_INVALID_SIZE);
    ASSERT_EQ(vm->map(v, page, p, 0, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm->map(v, page, p, 0, MemoryAccess::read_write), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm->set_access(at(v, page), page, MemoryAccess::read_only), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm->free(v, page), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(d->free(v), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    hal::PointerInfo info;
    ASSERT_EQ(d->pointer_info(at(v, page), &info), ZE_RESULT_SUCCESS);
    EXPECT_EQ(info.base, v);
    EXPECT_EQ(info.size, 2 * page);
    EXPECT_EQ(vm->unmap(v, 2 * page), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm->free(v, 2 * page), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm->free(v, 2 * page), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vm->destroy_physical(&p), ZE_RESULT_SUCCESS);
}

TEST(CudaVirtualMemory, UnmapWaitsForAQueuedCopy) {
    hal::DeviceRef d;
    ZEHAL_REQUIRE_VIRTUAL_MEMORY(d, vm, page);
    void* v = nullptr;
    ASSERT_EQ(vm->reserve(nullptr, page, &v), ZE_RESULT_SUCCESS);
    std::shared_ptr<PhysicalMemory> p;
    ASSERT_EQ(vm->create_physical(MemoryKind::device, page, &p), ZE_RESULT_SUCCESS);
    ASSERT_EQ(vm->map(v, page, p, 0, MemoryAccess::read_write), ZE_RESULT_SUCCESS);
    std::shared_ptr<hal::EventPool> events;
    ASSERT_EQ(d->create_event_pool(2, hal::kPoolHostVisible, &events), ZE_RESULT_SUCCESS);
    hal::EventRef gate, done;
    ASSERT_EQ(events->event(0, &gate), ZE_RESULT_SUCCESS);
    ASSERT_EQ(events->event(1, &done), ZE_RESULT_SUCCESS);
    std::vector<uint8_t> in(page, 0x42);
    auto q = copy_queue(d);
    ASSERT_EQ(q->append_copy(v, in.data(), page, done, std::span(&gate, 1)), ZE_RESULT_SUCCESS);
    ze_result_t seen = ZE_RESULT_NOT_READY;
    std::thread unmapper([&] {
        EXPECT_EQ(vm->unmap(v, page), ZE_RESULT_SUCCESS);
        seen = done->query();
    });
    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    unmapper.join();
    EXPECT_EQ(seen, ZE_RESULT_SUCCESS);
    EXPECT_EQ(vm->free(v, page), ZE_RESULT_SUCCESS);
}

}  // namespace
}  // namespace zehal::test
