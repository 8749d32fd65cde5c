// Host memory is host memory (contract §2.2): HostMemoryRegistry, find_operand, and sim
// queues copying host memory of another backend and of another sim device.
#include "hal/host_memory.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "support/sim_fixture.hpp"

namespace zehal {
namespace {

using hal::Allocation;
using hal::HostMemoryRegistry;
using hal::MemoryKind;
using hal::Operand;
using hal::Placement;
using hal::PointerRegistry;
using test::Memory;

// Plain heap memory entered in `registry` as one of its backend's host allocations (as a
// backend other than sim would), taken out and freed when it goes.
class OtherHostMemory {
public:
    OtherHostMemory(HostMemoryRegistry& registry, size_t size) : registry_(registry) {
        EXPECT_EQ(posix_memalign(&ptr_, 64, size), 0);
        Allocation a;
        a.info.kind = MemoryKind::host;
        a.info.base = ptr_;
        a.info.size = size;
        a.info.alignment = 64;
        a.mapping = ptr_;
        EXPECT_EQ(registry_.insert(a), ZE_RESULT_SUCCESS);
    }
    ~OtherHostMemory() {
        registry_.remove(ptr_, nullptr);
        std::free(ptr_);
    }
    OtherHostMemory(const OtherHostMemory&) = delete;
    OtherHostMemory& operator=(const OtherHostMemory&) = delete;
    unsigned char* get() const { return static_cast<unsigned char*>(ptr_); }

private:
    HostMemoryRegistry& registry_;
    void* ptr_ = nullptr;
};

Allocation allocation(void* base, size_t size, MemoryKind kind) {
    Allocation a;
    a.info.kind = kind;
    a.info.base = base;
    a.info.size = size;
    return a;
}

// Copies on `q` and waits for it; the queue's result.
ze_result_t copy_and_wait(const std::shared_ptr<hal::Queue>& q, void* dst, const void* src, size_t size) {
    if (ze_result_t r = q->append_copy(dst, src, size, nullptr, {}); r != ZE_RESULT_SUCCESS) return r;
    return q->host_synchronize(test::kHangGuardNs);
}

TEST(HostMemoryRegistry, KeepsOnlyHostAllocationsOfItsOwn) {
    HostMemoryRegistry mine("mine");
    HostMemoryRegistry theirs("theirs");
    EXPECT_EQ(mine.backend(), "mine");
    alignas(64) static unsigned char block[256];
    EXPECT_EQ(mine.insert(allocation(block, 128, MemoryKind::device)), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(mine.insert(allocation(block, 0, MemoryKind::host)), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(mine.insert(allocation(block, 128, MemoryKind::host)), ZE_RESULT_SUCCESS);
    // The same range again, in this registry or another backend's: refused (overlap).
    EXPECT_EQ(mine.insert(allocation(block + 64, 128, MemoryKind::host)), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(theirs.insert(allocation(block, 128, MemoryKind::host)), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(theirs.count(), 0u);
    ASSERT_EQ(theirs.insert(allocation(block + 128, 128, MemoryKind::host)), ZE_RESULT_SUCCESS);

    Allocation found;
    EXPECT_TRUE(mine.find(block + 5, &found));
    EXPECT_EQ(found.info.base, block);
    EXPECT_FALSE(mine.find(block + 128, nullptr));  // theirs, not mine
    EXPECT_EQ(mine.find_range(block, 129, nullptr), ZE_RESULT_ERROR_INVALID_SIZE);
    // Only the owner frees (removes) an allocation.
    EXPECT_FALSE(mine.remove(block + 128, nullptr));
    EXPECT_FALSE(mine.remove(block + 1, nullptr));  // interior
    EXPECT_TRUE(mine.remove(block, &found));
    EXPECT_FALSE(mine.remove(block, nullptr));  // twice
    EXPECT_EQ(mine.count(), 0u);
    EXPECT_EQ(theirs.take_all().size(), 1u);
    EXPECT_EQ(theirs.count(), 0u);
}

// A device's memory and two backends' host memory over one block: device memory at
// [0, 256), host memory of `own` at [256, 512), host memory of `other` at [512, 768).
class ThreeRegistries : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(device.insert(allocation(block, 256, MemoryKind::device)), ZE_RESULT_SUCCESS);
        ASSERT_EQ(own.insert(allocation(block + 256, 256, MemoryKind::host)), ZE_RESULT_SUCCESS);
        ASSERT_EQ(other.insert(allocation(block + 512, 256, MemoryKind::host)), ZE_RESULT_SUCCESS);
    }
    PointerRegistry device;
    hal::DeviceMemoryListing listed{device};  // `device` is a device's memory
    HostMemoryRegistry own{"own"};
    HostMemoryRegistry other{"other"};
    alignas(64) static inline unsigned char block[1024];
};

TEST_F(ThreeRegistries, FindOperandPlacesDeviceOwnHostAndOtherHostMemory) {
    Operand o;
    ASSERT_EQ(hal::find_operand(device, own, block + 8, 8, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::device);
    ASSERT_EQ(hal::find_operand(device, own, block + 300, 8, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::own_host);
    EXPECT_EQ(o.allocation.info.base, block + 256);
    ASSERT_EQ(hal::find_operand(device, own, block + 600, 100, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::other_host);
    EXPECT_EQ(o.allocation.info.base, block + 512);
    EXPECT_EQ(o.allocation.info.size, 256u);
    EXPECT_EQ(o.allocation.info.kind, MemoryKind::host);
    // The other backend's own view of the same memory: its own host memory.
    PointerRegistry no_device;
    ASSERT_EQ(hal::find_operand(no_device, other, block + 600, 100, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::own_host);

    // Past the end of the allocation, whoever owns it.
    EXPECT_EQ(hal::find_operand(device, own, block + 200, 57, &o), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(hal::find_operand(device, own, block + 500, 13, &o), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(hal::find_operand(device, own, block + 700, 69, &o), ZE_RESULT_ERROR_INVALID_SIZE);
    // Memory nobody registered is system memory: the range asked for, pageable.
    ASSERT_EQ(hal::find_operand(device, own, block + 768, 100, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::system);
    EXPECT_TRUE(hal::is_pageable(o.placement));
    EXPECT_FALSE(o.zehal_allocation);
    EXPECT_EQ(o.allocation.info.base, block + 768);
    EXPECT_EQ(o.allocation.info.size, 100u);
    EXPECT_EQ(o.allocation.info.kind, MemoryKind::host);
    int stack = 0;
    ASSERT_EQ(hal::find_operand(device, own, &stack, sizeof stack, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::system);
    std::vector<double> vector(1000);
    ASSERT_EQ(hal::find_operand(device, own, vector.data(), 8000, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::system);
    // Device memory of one device is another device's memory to the rest: refused.
    EXPECT_EQ(hal::find_operand(no_device, other, block + 8, 8, &o), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // A range that is not mapped, or that wraps around the address space.
    const auto* low = reinterpret_cast<const void*>(uintptr_t{4096});
    EXPECT_EQ(hal::find_operand(device, own, low, 64, &o), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(hal::find_operand(device, own, &stack, ~size_t{0}, &o), ZE_RESULT_ERROR_INVALID_SIZE);

    // Freed (removed) by its backend, or its backend gone: system memory from then on.
    ASSERT_TRUE(other.remove(block + 512, nullptr));
    ASSERT_EQ(hal::find_operand(device, own, block + 600, 8, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::system);
    {
        HostMemoryRegistry gone("gone");
        ASSERT_EQ(gone.insert(allocation(block + 768, 256, MemoryKind::host)), ZE_RESULT_SUCCESS);
        ASSERT_EQ(hal::find_operand(device, own, block + 800, 8, &o), ZE_RESULT_SUCCESS);
        EXPECT_EQ(o.placement, Placement::other_host);
    }
    ASSERT_EQ(hal::find_operand(device, own, block + 800, 8, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::system);
}

// A backend that recognises part of the system's memory as its own, as CUDA does memory
// another library allocated: [0, 64) of `theirs` as device memory, [64, 128) refused.
class RecognisesABlock final : public hal::ForeignMemory {
public:
    std::optional<ze_result_t> recognise(const void* p, size_t size, Operand* out) const override {
        const auto at = static_cast<const unsigned char*>(p) - theirs;
        if (at < 0 || at >= 128) return std::nullopt;
        if (at >= 64) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        if (size > static_cast<size_t>(64 - at)) return ZE_RESULT_ERROR_INVALID_SIZE;
        out->placement = Placement::device;
        out->allocation.info.base = theirs;
        out->allocation.info.size = 64;
        out->allocation.info.kind = MemoryKind::device;
        return ZE_RESULT_SUCCESS;
    }
    alignas(64) static inline unsigned char theirs[256];
};

TEST_F(ThreeRegistries, MemoryNoZehalAllocationHoldsIsAskedOfTheBackendFirst) {
    RecognisesABlock backend;
    Operand o;
    unsigned char* theirs = RecognisesABlock::theirs;
    ASSERT_EQ(hal::find_operand(device, own, theirs + 8, 8, &o, nullptr, &backend), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::device);
    EXPECT_FALSE(o.zehal_allocation);
    EXPECT_EQ(hal::find_operand(device, own, theirs + 8, 57, &o, nullptr, &backend), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(hal::find_operand(device, own, theirs + 64, 8, &o, nullptr, &backend), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(hal::find_operand(device, own, theirs + 128, 8, &o, nullptr, &backend), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::system);
    // zehal's own allocations and another device's memory never reach the backend.
    ASSERT_EQ(hal::find_operand(device, own, block + 300, 8, &o, nullptr, &backend), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::own_host);
    PointerRegistry no_device;
    EXPECT_EQ(hal::find_operand(no_device, other, block + 8, 8, &o, nullptr, &backend),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // The cache answers alike, and keeps none of it.
    hal::OperandCache cache(device, own, &backend);
    for (int round = 0; round < 2; ++round) {
        ASSERT_EQ(cache.find(theirs + 8, 8, &o), ZE_RESULT_SUCCESS);
        EXPECT_EQ(o.placement, Placement::device);
        ASSERT_EQ(cache.find(theirs + 128, 8, &o), ZE_RESULT_SUCCESS);
        EXPECT_EQ(o.placement, Placement::system);
    }
}

TEST_F(ThreeRegistries, OperandCacheAnswersAsFindOperandAndForgetsWhatWasRemoved) {
    hal::OperandCache cache(device, own);
    Operand o;
    // Found, then found again from the cache: the same answers, errors included.
    for (int round = 0; round < 2; ++round) {
        ASSERT_EQ(cache.find(block + 8, 8, &o), ZE_RESULT_SUCCESS);
        EXPECT_EQ(o.placement, Placement::device);
        ASSERT_EQ(cache.find(block + 300, 8, &o), ZE_RESULT_SUCCESS);
        EXPECT_EQ(o.placement, Placement::own_host);
        EXPECT_EQ(o.allocation.info.base, block + 256);
        EXPECT_EQ(cache.find(block + 200, 57, &o), ZE_RESULT_ERROR_INVALID_SIZE);
        EXPECT_EQ(cache.find(block + 500, 13, &o), ZE_RESULT_ERROR_INVALID_SIZE);
        EXPECT_EQ(cache.find(block + 300, 212, nullptr), ZE_RESULT_SUCCESS);
    }
    ASSERT_EQ(cache.find(block + 600, 100, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::other_host);

    // Removed from either registry: never answered from the cache again.
    ASSERT_EQ(cache.find(block + 8, 8, &o), ZE_RESULT_SUCCESS);
    ASSERT_TRUE(device.remove(block, nullptr));
    ASSERT_EQ(cache.find(block + 8, 8, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::system);
    ASSERT_EQ(cache.find(block + 600, 8, &o), ZE_RESULT_SUCCESS);
    ASSERT_TRUE(other.remove(block + 512, nullptr));
    ASSERT_EQ(cache.find(block + 600, 8, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::system);
    // System memory is never kept: registered since, it is found as what it became.
    ASSERT_EQ(other.insert(allocation(block + 512, 256, MemoryKind::host)), ZE_RESULT_SUCCESS);
    ASSERT_EQ(cache.find(block + 600, 8, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::other_host);
    // Another allocation at the same address: its own size and placement.
    ASSERT_EQ(cache.find(block + 300, 8, &o), ZE_RESULT_SUCCESS);
    ASSERT_TRUE(own.remove(block + 256, nullptr));
    ASSERT_EQ(device.insert(allocation(block + 256, 64, MemoryKind::device)), ZE_RESULT_SUCCESS);
    ASSERT_EQ(cache.find(block + 260, 8, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::device);
    EXPECT_EQ(cache.find(block + 316, 8, &o), ZE_RESULT_ERROR_INVALID_SIZE);
    // A backend's registry gone (its allocations taken out): nothing of it is answered.
    {
        HostMemoryRegistry gone("gone");
        ASSERT_EQ(gone.insert(allocation(block + 768, 256, MemoryKind::host)), ZE_RESULT_SUCCESS);
        ASSERT_EQ(cache.find(block + 800, 8, &o), ZE_RESULT_SUCCESS);
        EXPECT_EQ(o.placement, Placement::other_host);
    }
    ASSERT_EQ(cache.find(block + 800, 8, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::system);
}

TEST(FindOperand, ManyThreadsRegisterAndLookUp) {
    HostMemoryRegistry a("a");
    HostMemoryRegistry b("b");
    PointerRegistry device;
    constexpr int kBlocks = 64;
    alignas(64) static unsigned char block[kBlocks * 64];
    std::atomic<bool> stop{false};
    std::atomic<int> errors{0};
    // Writers add and remove their own blocks; readers place them (found or not, never wrong).
    auto writer = [&](HostMemoryRegistry& r, int first) {
        for (int round = 0; round < 200; ++round)
            for (int i = first; i < kBlocks; i += 2) {
                if (r.insert(allocation(block + i * 64, 64, MemoryKind::host)) != ZE_RESULT_SUCCESS) ++errors;
                if (!r.remove(block + i * 64, nullptr)) ++errors;
            }
    };
    auto reader = [&] {
        while (!stop.load()) {
            for (int i = 0; i < kBlocks; ++i) {
                Operand o;
                const ze_result_t r = hal::find_operand(device, a, block + i * 64 + 3, 8, &o);
                // Registered or not at the moment of the look-up: never another placement.
                const Placement registered = i % 2 == 0 ? Placement::own_host : Placement::other_host;
                if (r != ZE_RESULT_SUCCESS || (o.placement != registered && o.placement != Placement::system)) ++errors;
            }
        }
    };
    std::thread r1(reader), r2(reader);
    std::thread w1(writer, std::ref(a), 0), w2(writer, std::ref(b), 1);
    w1.join();
    w2.join();
    stop.store(true);
    r1.join();
    r2.join();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(a.count() + b.count(), 0u);
}

TEST(OperandCache, KeepsAPeersMemoryUntilItIsRemovedOrItsDeviceGoes) {
    alignas(64) static unsigned char block[512];
    auto a = test::sim_device();
    auto b = test::sim_device();
    PointerRegistry a_memory, b_memory;
    hal::DeviceMemoryListing a_listed(a_memory, a.get()), b_listed(b_memory, b.get());
    HostMemoryRegistry own("own");
    ASSERT_EQ(a_memory.insert(allocation(block, 256, MemoryKind::device)), ZE_RESULT_SUCCESS);
    hal::OperandCache cache(b_memory, own);
    Operand o;
    // Found, then found again from the cache: the same answers, with the owner each time.
    for (int round = 0; round < 2; ++round) {
        ASSERT_EQ(cache.find(block + 8, 8, &o), ZE_RESULT_SUCCESS);
        EXPECT_EQ(o.placement, Placement::peer);
        EXPECT_EQ(o.peer, a);
        EXPECT_EQ(o.allocation.info.base, block);
        EXPECT_EQ(cache.find(block + 200, 57, &o), ZE_RESULT_ERROR_INVALID_SIZE);
    }
    // Removed from the peer's registry: never answered from the cache again.
    ASSERT_TRUE(a_memory.remove(block, nullptr));
    ASSERT_EQ(cache.find(block + 8, 8, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::system);
    EXPECT_EQ(o.peer, nullptr);
    // Another allocation there: its own size.
    ASSERT_EQ(a_memory.insert(allocation(block, 64, MemoryKind::device)), ZE_RESULT_SUCCESS);
    EXPECT_EQ(cache.find(block + 8, 64, &o), ZE_RESULT_ERROR_INVALID_SIZE);
    ASSERT_EQ(cache.find(block + 8, 8, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.allocation.info.size, 64u);

    // The cache does not keep a peer alive; once it is gone, its memory is found as what it
    // is then.
    {
        auto c = test::sim_device();
        PointerRegistry c_memory;
        hal::DeviceMemoryListing c_listed(c_memory, c.get());
        ASSERT_EQ(c_memory.insert(allocation(block + 256, 256, MemoryKind::device)), ZE_RESULT_SUCCESS);
        ASSERT_EQ(cache.find(block + 300, 8, &o), ZE_RESULT_SUCCESS);
        EXPECT_EQ(o.peer, c);
        o = Operand{};
        std::weak_ptr<hal::Device> gone = c;
        c.reset();
        EXPECT_TRUE(gone.expired());
    }
    ASSERT_EQ(cache.find(block + 300, 8, &o), ZE_RESULT_SUCCESS);
    EXPECT_EQ(o.placement, Placement::system);
}

TEST(SimHostMemory, HostMemoryOfOneSimDeviceIsCopiedOnAnother) {
    auto a = test::sim_device();
    auto b = test::sim_device();
    auto q = test::queue(b);
    Memory host_of_a(a, MemoryKind::host, 4096);
    Memory dev_of_b(b, MemoryKind::device, 4096);
    Memory dev_of_a(a, MemoryKind::device, 4096);
    Memory shared_of_a(a, MemoryKind::shared, 4096);
    std::memset(host_of_a.ptr(), 0x3C, 4096);
    ASSERT_EQ(copy_and_wait(q, dev_of_b.ptr(), host_of_a.ptr(), 4096), ZE_RESULT_SUCCESS);
    std::memset(host_of_a.ptr(), 0, 4096);
    ASSERT_EQ(copy_and_wait(q, host_of_a.ptr(), dev_of_b.ptr(), 4096), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::vector<unsigned char>(host_of_a.get(), host_of_a.get() + 4096),
              std::vector<unsigned char>(4096, 0x3C));
    // Device and shared memory of a stay a's: b reaches them as a peer's memory.
    ASSERT_EQ(b->check_operand(dev_of_a.ptr(), 64), ZE_RESULT_SUCCESS);
    ASSERT_EQ(b->check_operand(shared_of_a.ptr(), 64), ZE_RESULT_SUCCESS);
    std::memset(host_of_a.ptr(), 0x5A, 64);
    ASSERT_EQ(copy_and_wait(q, shared_of_a.ptr(), host_of_a.ptr(), 64), ZE_RESULT_SUCCESS);
    ASSERT_EQ(copy_and_wait(q, dev_of_b.ptr(), shared_of_a.ptr(), 64), ZE_RESULT_SUCCESS);
    std::memset(host_of_a.ptr(), 0, 64);
    ASSERT_EQ(copy_and_wait(q, host_of_a.ptr(), dev_of_b.ptr(), 64), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::vector<unsigned char>(host_of_a.get(), host_of_a.get() + 64), std::vector<unsigned char>(64, 0x5A));
}

TEST(SimHostMemory, HostMemoryOfAnotherBackendIsCopiedAndFilled) {
    HostMemoryRegistry other("other");
    auto d = test::sim_device();
    auto q = test::queue(d, hal::kComputeOrdinal);
    OtherHostMemory theirs(other, 8192);
    Memory dev(d, MemoryKind::device, 8192);
    Memory host(d, MemoryKind::host, 8192);
    for (size_t i = 0; i < 8192; ++i) theirs.get()[i] = static_cast<unsigned char>(i * 7);
    const std::vector<unsigned char> expected(theirs.get(), theirs.get() + 8192);

    // To and from device memory, to and from the sim backend's own host memory.
    ASSERT_EQ(copy_and_wait(q, dev.ptr(), theirs.get(), 8192), ZE_RESULT_SUCCESS);
    ASSERT_EQ(copy_and_wait(q, host.ptr(), dev.ptr(), 8192), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::vector<unsigned char>(host.get(), host.get() + 8192), expected);
    std::memset(theirs.get(), 0, 8192);
    ASSERT_EQ(copy_and_wait(q, theirs.get() + 100, host.get() + 100, 8000), ZE_RESULT_SUCCESS);
    EXPECT_EQ(theirs.get()[99], 0);
    EXPECT_EQ(std::vector<unsigned char>(theirs.get() + 100, theirs.get() + 8100),
              std::vector<unsigned char>(expected.begin() + 100, expected.begin() + 8100));
    const unsigned char pattern[4] = {1, 2, 3, 4};
    ASSERT_EQ(q->append_fill(theirs.get(), pattern, 4, 8192, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(test::kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(theirs.get()[8190], 3);

    // Bad input still answers as for any memory.
    EXPECT_EQ(q->append_copy(dev.ptr(), theirs.get(), 8193, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_copy(theirs.get() + 1, theirs.get(), 64, nullptr, {}), ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
    // Never the sim device's to free or describe.
    hal::PointerInfo info;
    EXPECT_EQ(d->pointer_info(theirs.get(), &info), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(d->free(theirs.get()), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(SimHostMemory, FreedHostMemoryOfAnotherBackendIsSystemMemoryWhileMapped) {
    HostMemoryRegistry other("other");
    auto d = test::sim_device();
    auto q = test::queue(d);
    Memory dev(d, MemoryKind::device, 64);
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void* pages = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(pages, MAP_FAILED);
    ASSERT_EQ(other.insert(allocation(pages, page, MemoryKind::host)), ZE_RESULT_SUCCESS);
    EXPECT_EQ(copy_and_wait(q, dev.ptr(), pages, 64), ZE_RESULT_SUCCESS);
    // Taken out of its backend's registry, still mapped: memory no zehal allocation holds.
    ASSERT_TRUE(other.remove(pages, nullptr));
    EXPECT_EQ(copy_and_wait(q, dev.ptr(), pages, 64), ZE_RESULT_SUCCESS);
    // Unmapped: refused, never touched.
    ASSERT_EQ(munmap(pages, page), 0);
    EXPECT_EQ(q->append_copy(dev.ptr(), pages, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->host_synchronize(test::kHangGuardNs), ZE_RESULT_SUCCESS);
}

// Contract §11 across backends: host memory of another backend that a lost sim device's
// engine still copies is given back by its backend only once that copy is over (the
// registry's remove waits; AddressSanitizer sees any write to freed memory in the
// sanitizer run).
TEST(SimHostMemory, OtherBackendFreesAfterALostDeviceStopsCopying) {
    HostMemoryRegistry other("other");
    constexpr size_t kBytes = 64u << 20;
    for (int round = 0; round < 8; ++round) {
        auto d = test::sim_device();
        auto q = test::queue(d);
        auto e = test::event(test::pool(d, 1, 0));
        auto* src = new OtherHostMemory(other, kBytes);
        auto* dst = new OtherHostMemory(other, kBytes);
        for (int i = 0; i < 4; ++i)
            ASSERT_EQ(q->append_copy(dst->get(), src->get(), kBytes, nullptr, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->append_copy(dst->get(), src->get(), kBytes, e, {}), ZE_RESULT_SUCCESS);
        std::this_thread::sleep_for(std::chrono::milliseconds(round / 2));  // lose at various points
        ASSERT_EQ(d->lose(), ZE_RESULT_SUCCESS);
        EXPECT_EQ(e->host_synchronize(test::kHangGuardNs), ZE_RESULT_ERROR_DEVICE_LOST);
        delete dst;  // removed from `other` (waiting for the engine), then freed
        delete src;
    }
    EXPECT_EQ(other.count(), 0u);
}

}  // namespace
}  // namespace zehal
