// Several threads through the driver at once: each with its own immediate list copying
// and signalling, all sharing one event pool, while others create and destroy objects.
#include <atomic>
#include <cstring>
#include <thread>

#include "ze_fixture.hpp"

namespace zetest {
namespace {

using ThreadsTest = ZeDriver;

TEST_F(ThreadsTest, ConcurrentListsEventsAndHandles) {
    constexpr int kThreads = 4;
    constexpr int kRounds = 50;
    auto ev = make_events(kThreads);
    std::memset(host, 3, kBytes);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            ze_command_list_handle_t l = immediate_list(0);
            const size_t slice = kBytes / kThreads;
            char* dst = static_cast<char*>(host2) + t * slice;
            char* src = static_cast<char*>(host) + t * slice;
            for (int i = 0; i < kRounds; ++i) {
                if (zeCommandListAppendMemoryCopy(l, dst, src, slice, ev[t], 0, nullptr) != ZE_RESULT_SUCCESS ||
                    zeEventHostSynchronize(ev[t], kForever) != ZE_RESULT_SUCCESS ||
                    zeEventHostReset(ev[t]) != ZE_RESULT_SUCCESS)
                    failures.fetch_add(1);
                // Churn of handles beside the copies.
                ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
                ze_context_handle_t c = nullptr;
                if (zeContextCreate(driver, &cd, &c) != ZE_RESULT_SUCCESS || zeContextDestroy(c) != ZE_RESULT_SUCCESS)
                    failures.fetch_add(1);
            }
            if (zeCommandListDestroy(l) != ZE_RESULT_SUCCESS) failures.fetch_add(1);
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(std::memcmp(host, host2, kBytes), 0);
}

TEST_F(ThreadsTest, DestroyRacesLookupWithoutCrashing) {
    // One thread destroys events while others use their handles: every call answers
    // SUCCESS or INVALID_NULL_HANDLE.
    for (int round = 0; round < 20; ++round) {
        auto ev = make_events(1);
        owned_events.erase(owned_events.begin());  // destroyed below, not by TearDown
        std::atomic<bool> go{false};
        std::atomic<int> bad{0};
        std::thread user([&] {
            while (!go.load()) std::this_thread::yield();
            for (int i = 0; i < 200; ++i) {
                ze_result_t r = zeEventHostSignal(ev[0]);
                if (r != ZE_RESULT_SUCCESS && r != ZE_RESULT_ERROR_INVALID_NULL_HANDLE) bad.fetch_add(1);
            }
        });
        go.store(true);
        EXPECT_EQ(zeEventDestroy(ev[0]), ZE_RESULT_SUCCESS);
        user.join();
        EXPECT_EQ(bad.load(), 0);
    }
}

}  // namespace
}  // namespace zetest
