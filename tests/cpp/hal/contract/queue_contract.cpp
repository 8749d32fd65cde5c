// The queue contract (cpp/hal/queue.hpp, contract §1, §2.2, §2.4): copies, fills and barriers
// run in submission order, events signal and gate commands, and every bad input is refused
// with its code, nothing queued, the queue still usable.
#include <algorithm>
#include <cstring>

#include "contract_fixture.hpp"
#include "support/freed_operands.hpp"

namespace zehal::test::contract {
namespace {

constexpr hal::MemoryKind kKinds[] = {hal::MemoryKind::host, hal::MemoryKind::device, hal::MemoryKind::shared};

TEST_P(QueueContract, CopiesBetweenEveryPairOfKinds) {
    auto q = queue();
    constexpr size_t kSize = (1 << 20) + 3;  // a multiple of nothing
    const std::vector<uint8_t> data = random_bytes(kSize, 7);
    Allocation source(device_, hal::MemoryKind::host, kSize);
    std::memcpy(source.ptr(), data.data(), kSize);
    for (hal::MemoryKind from : kKinds) {
        for (hal::MemoryKind to : kKinds) {
            SCOPED_TRACE(testing::Message() << static_cast<int>(from) << " -> " << static_cast<int>(to));
            Allocation a(device_, from, kSize), b(device_, to, kSize);
            copy_and_wait(*q, a.ptr(), source.ptr(), kSize);
            copy_and_wait(*q, b.ptr(), a.ptr(), kSize);
            EXPECT_EQ(read_back(*q, b.ptr(), kSize), data);
        }
    }
}

TEST_P(QueueContract, CommandsRunInSubmissionOrder) {
    auto q = queue();
    constexpr size_t kSize = 1 << 16;
    const std::vector<uint8_t> data = random_bytes(kSize, 3);
    Allocation src(device_, hal::MemoryKind::host, kSize), a(device_, hal::MemoryKind::device, kSize),
        b(device_, hal::MemoryKind::device, kSize), dst(device_, hal::MemoryKind::host, kSize);
    std::memcpy(src.ptr(), data.data(), kSize);
    const uint8_t first = 0x11, second = 0x22;
    // Each command reads what the one before it wrote; nothing but the queue orders them.
    ASSERT_EQ(q->append_fill(a.ptr(), &first, 1, kSize, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(a.ptr(), src.ptr(), kSize, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(b.ptr(), a.ptr(), kSize, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_fill(b.ptr(), &second, 1, 16, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(dst.ptr(), b.ptr(), kSize, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    std::vector<uint8_t> want = data;
    std::memset(want.data(), second, 16);
    EXPECT_EQ(std::memcmp(dst.ptr(), want.data(), kSize), 0);
}

TEST_P(QueueContract, CopiesWithinOneAllocationAtOffsets) {
    auto q = queue();
    const std::vector<uint8_t> data = random_bytes(4096, 9);
    Allocation m(device_, hal::MemoryKind::device, 8192);
    Allocation host(device_, hal::MemoryKind::host, 4096);
    std::memcpy(host.ptr(), data.data(), 4096);
    copy_and_wait(*q, m.as() + 1, host.ptr(), 4095);
    copy_and_wait(*q, m.as() + 4097, m.as() + 1, 4095);  // adjacent ranges do not overlap
    const std::vector<uint8_t> got = read_back(*q, m.as() + 4097, 4095);
    EXPECT_EQ(got, std::vector<uint8_t>(data.begin(), data.end() - 1));
}

// Random and uniform patterns (a backend may take a faster path for the latter), at
// unaligned offsets, into device and host memory, on every engine group.
TEST_P(QueueContract, FillsEveryPatternSizeAtEveryOffset) {
    constexpr size_t kBytes = 4096, kRoom = kBytes + 256;
    Allocation device_memory(device_, hal::MemoryKind::device, kRoom);
    Allocation host_memory(device_, hal::MemoryKind::host, kRoom);
    const uint8_t zero = 0;
    for (uint32_t ordinal : {hal::kComputeOrdinal, hal::kCopyOrdinal}) {
        if (ordinal == hal::kCopyOrdinal && device_->properties().copy_engines == 0) continue;
        auto q = queue(ordinal);
        for (size_t psize = 1; psize <= 128; psize *= 2) {
            for (bool uniform : {false, true}) {
                std::vector<uint8_t> pattern = random_bytes(psize, static_cast<uint32_t>(psize));
                if (uniform) std::fill(pattern.begin(), pattern.end(), uint8_t{0xAB});
                for (size_t offset : {0, 1, 2, 3, 4, 8}) {
                    for (Allocation* m : {&device_memory, &host_memory}) {
                        SCOPED_TRACE(testing::Message() << "ordinal " << ordinal << " pattern " << psize << " offset "
                                                        << offset << " uniform " << uniform);
                        ASSERT_EQ(q->append_fill(m->ptr(), &zero, 1, kRoom, nullptr, {}), ZE_RESULT_SUCCESS);
                        ASSERT_EQ(q->append_fill(m->as() + offset, pattern.data(), psize, kBytes, nullptr, {}),
                                  ZE_RESULT_SUCCESS);
                        ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
                        const std::vector<uint8_t> got = read_back(*q, m->ptr(), kRoom);
                        for (size_t i = 0; i < kRoom; ++i) {
                            const uint8_t want = i >= offset && i < offset + kBytes ? pattern[(i - offset) % psize] : 0;
                            ASSERT_EQ(got[i], want) << "byte " << i;
                        }
                    }
                }
            }
        }
    }
}

TEST_P(QueueContract, FireAndForgetThenBarrier) {
    auto q = queue();
    constexpr size_t kCopies = 128, kChunk = 1024;
    const std::vector<uint8_t> data = random_bytes(kCopies * kChunk, 11);
    Allocation src(device_, hal::MemoryKind::host, data.size()), dst(device_, hal::MemoryKind::device, data.size());
    std::memcpy(src.ptr(), data.data(), data.size());
    for (size_t i = 0; i < kCopies; ++i)
        ASSERT_EQ(q->append_copy(dst.as() + i * kChunk, src.as() + i * kChunk, kChunk, nullptr, {}), ZE_RESULT_SUCCESS);
    EventSet ev(device_, 1);
    ASSERT_EQ(q->append_barrier(ev.events[0], {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev.events[0]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(read_back(*q, dst.ptr(), data.size()), data);
    // A barrier without an event, on an idle queue.
    ASSERT_EQ(q->append_barrier(nullptr, {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

TEST_P(QueueContract, CommandWaitsForAHostSignal) {
    auto q = queue();
    EventSet ev(device_, 2);
    const hal::EventRef gate = ev.events[0], done = ev.events[1];
    const std::vector<uint8_t> data = random_bytes(4096, 3);
    Allocation src(device_, hal::MemoryKind::host, 4096), dst(device_, hal::MemoryKind::device, 4096);
    std::memcpy(src.ptr(), data.data(), 4096);
    const hal::EventRef waits[] = {gate};
    ASSERT_EQ(q->append_copy(dst.ptr(), src.ptr(), 4096, done, waits), ZE_RESULT_SUCCESS);
    // Held back by the gate: the timeouts only bound the waits, the states are what is checked.
    EXPECT_EQ(done->query(), ZE_RESULT_NOT_READY);
    EXPECT_EQ(done->host_synchronize(50'000'000), ZE_RESULT_NOT_READY);
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_NOT_READY);
    EXPECT_EQ(q->host_synchronize(1'000'000), ZE_RESULT_NOT_READY);
    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(done->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(read_back(*q, dst.ptr(), 4096), data);
}

TEST_P(QueueContract, WaitOnAnEventSignalledLaterByAnotherQueue) {
    auto first = queue(), second = queue(hal::kComputeOrdinal);
    EventSet ev(device_, 2);
    const std::vector<uint8_t> data = random_bytes(1 << 16, 5);
    Allocation src(device_, hal::MemoryKind::host, data.size()), mid(device_, hal::MemoryKind::device, data.size()),
        dst(device_, hal::MemoryKind::shared, data.size());
    std::memcpy(src.ptr(), data.data(), data.size());
    const hal::EventRef waits[] = {ev.events[0]};
    // The waiting command is submitted first; the command that signals its event after it.
    ASSERT_EQ(second->append_copy(dst.ptr(), mid.ptr(), data.size(), ev.events[1], waits), ZE_RESULT_SUCCESS);
    ASSERT_EQ(first->append_copy(mid.ptr(), src.ptr(), data.size(), ev.events[0], {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev.events[1]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::memcmp(dst.ptr(), data.data(), data.size()), 0);
}

TEST_P(QueueContract, CreateQueueOutsideTheEngineGroupsIsRefused) {
    const hal::DeviceProperties& p = device_->properties();
    std::shared_ptr<hal::Queue> q;
    EXPECT_EQ(device_->create_queue(2, 0, &q), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(device_->create_queue(hal::kComputeOrdinal, p.compute_engines, &q), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(device_->create_queue(hal::kCopyOrdinal, p.copy_engines, &q), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(device_->create_queue(hal::kComputeOrdinal, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q, nullptr);
    ASSERT_EQ(device_->create_queue(hal::kComputeOrdinal, p.compute_engines - 1, &q), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->ordinal(), hal::kComputeOrdinal);
    EXPECT_EQ(q->index(), p.compute_engines - 1);
    if (p.copy_engines == 0) return;
    ASSERT_EQ(device_->create_queue(hal::kCopyOrdinal, p.copy_engines - 1, &q), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->ordinal(), hal::kCopyOrdinal);
    EXPECT_EQ(q->index(), p.copy_engines - 1);
}

TEST_P(QueueContract, NullAndZeroSizesAreRefused) {
    auto q = queue();
    Allocation a(device_, hal::MemoryKind::device, 1024), b(device_, hal::MemoryKind::host, 1024);
    const uint8_t pattern[4] = {1, 2, 3, 4};
    EXPECT_EQ(q->append_copy(nullptr, b.ptr(), 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_copy(a.ptr(), nullptr, 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_copy(a.ptr(), b.ptr(), 0, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(nullptr, pattern, 1, 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_fill(a.ptr(), nullptr, 1, 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_fill(a.ptr(), pattern, 1, 0, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_SUCCESS);  // nothing was queued
}

TEST_P(QueueContract, OperandsPastTheirAllocationAreInvalidSize) {
    auto q = queue();
    Allocation a(device_, hal::MemoryKind::device, 1024), b(device_, hal::MemoryKind::host, 1024);
    const uint8_t pattern[4] = {1, 2, 3, 4};
    EXPECT_EQ(q->append_copy(a.ptr(), b.ptr(), 1025, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_copy(a.as() + 1000, b.ptr(), 25, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_copy(a.ptr(), b.as() + 1, 1024, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_copy(a.ptr(), b.ptr(), ~size_t{0}, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.as() + 1000, pattern, 1, 25, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(b.ptr(), pattern, 4, 1028, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_SUCCESS);
}

TEST_P(QueueContract, PagesNotMappedAreRefused) {
    auto q = queue();
    Allocation a(device_, hal::MemoryKind::device, 1024);
    auto* unmapped = reinterpret_cast<uint8_t*>(uintptr_t{4096});
    const uint8_t pattern = 1;
    EXPECT_EQ(q->append_copy(a.ptr(), unmapped, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_copy(unmapped, a.ptr(), 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_fill(unmapped, &pattern, 1, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_write_global_timestamp(reinterpret_cast<uint64_t*>(unmapped), nullptr, {}),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_SUCCESS);
}

TEST_P(QueueContract, OverlappingCopiesAreRefused) {
    auto q = queue();
    Allocation a(device_, hal::MemoryKind::device, 1024);
    EXPECT_EQ(q->append_copy(a.ptr(), a.ptr(), 16, nullptr, {}), ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
    EXPECT_EQ(q->append_copy(a.as() + 8, a.ptr(), 16, nullptr, {}), ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
    EXPECT_EQ(q->append_copy(a.ptr(), a.as() + 15, 16, nullptr, {}), ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_SUCCESS);
    copy_and_wait(*q, a.as() + 16, a.ptr(), 16);  // touching, not overlapping
}

TEST_P(QueueContract, FillPatternsArePowersOfTwoUpTo128DividingTheSize) {
    auto q = queue();
    Allocation a(device_, hal::MemoryKind::device, 1024);
    const uint8_t pattern[256] = {};
    EXPECT_EQ(q->append_fill(a.ptr(), pattern, 0, 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.ptr(), pattern, 3, 24, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.ptr(), pattern, 256, 512, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.ptr(), pattern, 8, 12, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_fill(a.ptr(), pattern, 128, 1024, nullptr, {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

TEST_P(QueueContract, EventsOfAnotherDeviceAreRefused) {
    hal::DeviceRef other = other_device();
    ASSERT_NE(other, nullptr);
    auto q = queue();
    Allocation a(device_, hal::MemoryKind::device, 1024), b(device_, hal::MemoryKind::host, 1024);
    EventSet mine(device_, 1), theirs(other, 1);
    const hal::EventRef foreign = theirs.events[0];
    const hal::EventRef foreign_waits[] = {foreign};
    const hal::EventRef null_waits[] = {mine.events[0], nullptr};
    const uint8_t pattern = 1;
    EXPECT_FALSE(device_->owns_event(*foreign));
    EXPECT_TRUE(device_->owns_event(*mine.events[0]));
    EXPECT_EQ(q->append_copy(a.ptr(), b.ptr(), 16, nullptr, null_waits), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(q->append_barrier(nullptr, null_waits), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    // Signals of another device's events are refused where the backend cannot write them
    // (CUDA devices signal each other's events without timestamps: cuda_peer_test.cpp).
    if (!device_->signals_event(*foreign)) {
        EXPECT_EQ(q->append_copy(a.ptr(), b.ptr(), 16, foreign, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(q->append_fill(a.ptr(), &pattern, 1, 16, foreign, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(q->append_barrier(foreign, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    // Waits for another device's events are refused where the backend cannot watch them
    // (sim devices wait for each other's: tests/cpp/hal/sim/sim_peer_test.cpp).
    if (!device_->waits_for_event(*foreign)) {
        EXPECT_EQ(q->append_copy(a.ptr(), b.ptr(), 16, nullptr, foreign_waits), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(q->append_fill(a.ptr(), &pattern, 1, 16, nullptr, foreign_waits), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(q->append_barrier(nullptr, foreign_waits), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    EXPECT_EQ(q->cancel(nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    // Another device's event is taken back where the device may signal it: no command of
    // this queue signals it, so nothing is.
    EXPECT_EQ(q->cancel(foreign),
              device_->signals_event(*foreign) ? ZE_RESULT_NOT_READY : ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // Nothing was queued or signalled, and the queue still works.
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_SUCCESS);
    EXPECT_EQ(foreign->query(), ZE_RESULT_NOT_READY);
    std::memset(b.ptr(), 0x61, 1024);
    ASSERT_EQ(q->append_copy(a.ptr(), b.ptr(), 1024, mine.events[0], {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(mine.events[0]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(read_back(*q, a.ptr(), 1024), std::vector<uint8_t>(1024, 0x61));
}

// A backend that cannot take commands back answers as for a command that already started:
// every backend answers NOT_READY for a command that completed, and its event stays as the
// command left it.
TEST_P(QueueContract, CancelOfACompletedCommandIsNotReady) {
    auto q = queue();
    Allocation a(device_, hal::MemoryKind::device, 1024), b(device_, hal::MemoryKind::host, 1024);
    EventSet ev(device_, 2);
    ASSERT_EQ(q->append_copy(a.ptr(), b.ptr(), 1024, ev.events[0], {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev.events[0]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->cancel(ev.events[0]), ZE_RESULT_NOT_READY);
    EXPECT_EQ(ev.events[0]->query(), ZE_RESULT_SUCCESS);
    // An event no command of the queue signals is not taken back either.
    EXPECT_EQ(q->cancel(ev.events[1]), ZE_RESULT_NOT_READY);
    EXPECT_EQ(ev.events[1]->query(), ZE_RESULT_NOT_READY);
    EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

// A command recorded for the device (the driver's command lists) is checked by the same rules
// as a queue's append (hal/queue_checks.hpp with Device::check_operand): each answers alike.
TEST_P(QueueContract, RecordedCommandsAreCheckedAsTheQueueChecksThem) {
    hal::DeviceRef other = other_device();
    ASSERT_NE(other, nullptr);
    auto q = queue();
    Allocation a(device_, hal::MemoryKind::device, 1024), b(device_, hal::MemoryKind::host, 1024);
    Allocation theirs(other, hal::MemoryKind::device, 1024);
    EventSet mine(device_, 1), foreign(other, 1);
    const hal::EventRef foreign_waits[] = {foreign.events[0]};
    const hal::EventRef null_waits[] = {nullptr};
    const uint8_t pattern[8] = {};
    auto* unmapped = reinterpret_cast<uint8_t*>(uintptr_t{4096});
    hal::DeviceTarget target(*device_);
    hal::PlacedOperand to, from;
    struct Copy {
        void* dst;
        const void* src;
        size_t size;
    };
    const Copy copies[] = {{a.ptr(), b.ptr(), 1024}, {nullptr, b.ptr(), 16},    {a.ptr(), b.ptr(), 0},
                           {a.ptr(), b.ptr(), 1025}, {a.as() + 8, a.ptr(), 16}, {a.ptr(), unmapped, 16},
                           {unmapped, b.ptr(), 16}};
    for (const Copy& c : copies) {
        SCOPED_TRACE(testing::Message() << "copy " << c.dst << " <- " << c.src << " size " << c.size);
        EXPECT_EQ(hal::check_copy(target, c.dst, c.src, c.size, nullptr, {}, &to, &from),
                  q->append_copy(c.dst, c.src, c.size, nullptr, {}));
    }
    // Memory of another device: refused alike, or copied alike where the backend copies
    // between its devices.
    EXPECT_EQ(hal::check_copy(target, a.ptr(), theirs.ptr(), 16, nullptr, {}, &to, &from),
              q->append_copy(a.ptr(), theirs.ptr(), 16, nullptr, {}));
    for (size_t pattern_size : {0, 1, 3, 8, 256}) {
        SCOPED_TRACE(testing::Message() << "fill pattern " << pattern_size);
        EXPECT_EQ(hal::check_fill(target, a.ptr(), pattern, pattern_size, 64, nullptr, {}, &to),
                  q->append_fill(a.ptr(), pattern, pattern_size, 64, nullptr, {}));
    }
    EXPECT_EQ(hal::check_fill(target, a.as() + 1000, pattern, 8, 64, nullptr, {}, &to),
              q->append_fill(a.as() + 1000, pattern, 8, 64, nullptr, {}));
    EXPECT_EQ(hal::check_barrier(target, foreign.events[0], {}), q->append_barrier(foreign.events[0], {}));
    EXPECT_EQ(hal::check_barrier(target, nullptr, null_waits), q->append_barrier(nullptr, null_waits));
    EXPECT_EQ(hal::check_barrier(target, nullptr, foreign_waits), q->append_barrier(nullptr, foreign_waits));
    EXPECT_EQ(hal::check_event_reset(target, foreign.events[0]), q->append_event_reset(foreign.events[0]));
    EXPECT_EQ(hal::check_event_reset(target, nullptr), q->append_event_reset(nullptr));
    EXPECT_EQ(hal::check_write_global_timestamp(target, a.as<uint64_t>() + 127, nullptr, {}, &to),
              q->append_write_global_timestamp(a.as<uint64_t>() + 127, nullptr, {}));
    EXPECT_EQ(hal::check_write_global_timestamp(target, reinterpret_cast<uint64_t*>(a.as() + 4), nullptr, {}, &to),
              q->append_write_global_timestamp(reinterpret_cast<uint64_t*>(a.as() + 4), nullptr, {}));
    const hal::EventRef queried[] = {mine.events[0]};
    EXPECT_EQ(hal::check_query_kernel_timestamps(target, queried, b.ptr(), nullptr, nullptr, {}, {}),
              q->append_query_kernel_timestamps(queried, b.ptr(), nullptr, nullptr, {}));
    EXPECT_EQ(hal::check_cancel(target, nullptr), q->cancel(nullptr));
    // A cancel the checks refuse is refused alike; one they accept depends on whether the
    // command that signals the event already started.
    const ze_result_t cancel_checked = hal::check_cancel(target, foreign.events[0]);
    const ze_result_t cancelled = q->cancel(foreign.events[0]);
    if (cancel_checked != ZE_RESULT_SUCCESS) {
        EXPECT_EQ(cancel_checked, cancelled);
    }
    // A backend that waits for another device's events queued the barrier behind it.
    ASSERT_EQ(foreign.events[0]->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

TEST_P(QueueContract, AFreedOperandIsRefusedAfterCopiesThatUsedIt) {
    expect_freed_operands_refused(device_, hal::kComputeOrdinal);
    if (device_->properties().copy_engines > 0) expect_freed_operands_refused(device_, hal::kCopyOrdinal);
}

}  // namespace
}  // namespace zehal::test::contract
