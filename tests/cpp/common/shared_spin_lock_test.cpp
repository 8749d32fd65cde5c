// SharedSpinLock: readers share it, a writer excludes readers and writers, and neither side
// starves the other (run under ThreadSanitizer in CI, label threaded).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "common/shared_spin_lock.hpp"

namespace zehal {
namespace {

TEST(SharedSpinLock, ReadersShareIt) {
    SharedSpinLock lock;
    std::shared_lock a(lock);
    std::atomic<bool> entered{false};
    std::thread other([&] {
        std::shared_lock b(lock);  // would block forever if readers excluded each other
        entered.store(true);
    });
    other.join();
    EXPECT_TRUE(entered.load());
}

TEST(SharedSpinLock, AWriterWaitsForTheReaderInside) {
    SharedSpinLock lock;
    std::atomic<bool> writer_in{false};
    lock.lock_shared();
    std::thread writer([&] {
        std::unique_lock w(lock);
        writer_in.store(true);
    });
    // The writer cannot get in while the reader holds the lock.
    for (int i = 0; i < 1000; ++i) std::this_thread::yield();
    EXPECT_FALSE(writer_in.load());
    lock.unlock_shared();
    writer.join();
    EXPECT_TRUE(writer_in.load());
}

// Writers keep two words equal; readers must never see them differ, and every thread ends.
TEST(SharedSpinLock, ReadersNeverSeeAWriteHalfDone) {
    SharedSpinLock lock;
    uint64_t a = 0;
    uint64_t b = 0;
    std::atomic<bool> torn{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 20000; ++i) {
                std::unique_lock w(lock);
                ++a;
                ++b;
            }
        });
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 50000; ++i) {
                std::shared_lock r(lock);
                if (a != b) torn.store(true);
            }
        });
    for (auto& th : threads) th.join();
    EXPECT_FALSE(torn.load());
    EXPECT_EQ(a, 40000u);
    EXPECT_EQ(b, 40000u);
}

}  // namespace
}  // namespace zehal
