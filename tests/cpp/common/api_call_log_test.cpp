// The host API call log: nothing recorded without a consumer, one consumer at a time, each
// thread's calls in order, full rings counted, and threads recording while the consumer
// drains (run under TSan).
#include "common/api_call_log.hpp"

#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <vector>

namespace zehal {
namespace {

// Attaches for one test and detaches at its end, whatever it asserted.
struct Attached {
    Attached() { attached = api_call_log::attach(); }
    ~Attached() {
        if (attached) api_call_log::detach();
    }
    bool attached = false;
};

std::vector<LoggedApiCall> drain() {
    std::vector<LoggedApiCall> out;
    api_call_log::drain(out);
    return out;
}

TEST(ApiCallLog, InternGivesOneIdPerName) {
    const uint32_t a = api_call_log::intern("Test.a");
    const uint32_t b = api_call_log::intern("Test.b");
    EXPECT_NE(a, b);
    EXPECT_EQ(api_call_log::intern("Test.a"), a);
    EXPECT_EQ(api_call_log::name_of(a), "Test.a");
    EXPECT_EQ(api_call_log::name_of(b), "Test.b");
    EXPECT_EQ(api_call_log::name_of(1u << 30), "?");
}

TEST(ApiCallLog, NothingIsRecordedWithoutAConsumer) {
    const uint32_t id = api_call_log::intern("Test.unrecorded");
    EXPECT_FALSE(g_api_calls_recording.load());
    { const ApiCallScope scope(id); }
    const Attached on;
    ASSERT_TRUE(on.attached);
    EXPECT_TRUE(drain().empty());
}

TEST(ApiCallLog, OneConsumerAtATime) {
    {
        const Attached on;
        ASSERT_TRUE(on.attached);
        EXPECT_TRUE(g_api_calls_recording.load());
        EXPECT_FALSE(api_call_log::attach());
    }
    EXPECT_FALSE(g_api_calls_recording.load());
    const Attached again;
    EXPECT_TRUE(again.attached);
}

TEST(ApiCallLog, ScopesRecordTheirCallsInCompletionOrder) {
    const uint32_t outer = api_call_log::intern("Test.outer");
    const uint32_t inner = api_call_log::intern("Test.inner");
    const Attached on;
    ASSERT_TRUE(on.attached);
    const uint64_t before = host_now_ns();
    {
        const ApiCallScope a(outer);
        const ApiCallScope b(inner);
    }
    const uint64_t after = host_now_ns();
    const auto calls = drain();
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_EQ(calls[0].name, inner);  // ends first
    EXPECT_EQ(calls[1].name, outer);
    EXPECT_LE(before, calls[1].start_ns);
    EXPECT_LE(calls[1].start_ns, calls[0].start_ns);
    EXPECT_LE(calls[0].end_ns, calls[1].end_ns);
    EXPECT_LE(calls[1].end_ns, after);
    EXPECT_EQ(calls[0].thread, static_cast<uint64_t>(pthread_self()));
    EXPECT_TRUE(drain().empty());  // taken once
}

TEST(ApiCallLog, AttachDiscardsWhatAnEarlierConsumerLeft) {
    const uint32_t id = api_call_log::intern("Test.stale");
    {
        const Attached on;
        ASSERT_TRUE(on.attached);
        api_call_log::record(id, 1, 2);
    }
    const Attached on;
    ASSERT_TRUE(on.attached);
    EXPECT_TRUE(drain().empty());
}

TEST(ApiCallLog, AFullRingCountsWhatItLoses) {
    const uint32_t id = api_call_log::intern("Test.many");
    const Attached on;
    ASSERT_TRUE(on.attached);
    // 24 bytes a call: what fits in the ring, then ten more.
    const size_t fit = api_call_log::kRingBytes / 24;
    for (size_t k = 0; k < fit + 10; ++k) api_call_log::record(id, k, k + 1);
    EXPECT_EQ(api_call_log::dropped(), 10u);
    const auto calls = drain();
    ASSERT_EQ(calls.size(), fit);
    EXPECT_EQ(calls.back().start_ns, fit - 1);
    api_call_log::record(id, 7, 8);  // room again
    EXPECT_EQ(drain().size(), 1u);
    EXPECT_EQ(api_call_log::dropped(), 10u);
}

// Records one call of `name` when destroyed: a thread-local made before the thread's first
// call is destroyed after the log's slot of that thread.
struct RecordsWhenDestroyed {
    uint32_t name = 0;
    ~RecordsWhenDestroyed() { api_call_log::record(name, 5, 6); }
};

TEST(ApiCallLog, ACallWhileItsThreadEndsIsCountedNotRecorded) {
    const uint32_t id = api_call_log::intern("Test.late");
    const Attached on;
    ASSERT_TRUE(on.attached);
    std::thread([id] {
        thread_local RecordsWhenDestroyed late;
        late.name = id;
        api_call_log::record(id, 1, 2);  // the slot is made after `late`, so destroyed first
    }).join();
    const auto calls = drain();
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].start_ns, 1u);
    EXPECT_EQ(api_call_log::dropped(), 1u);
}

TEST(ApiCallLog, ThreadsRecordWhileTheConsumerDrains) {
    constexpr int kThreads = 4;
    constexpr uint64_t kCalls = 20000;
    const uint32_t id = api_call_log::intern("Test.threaded");
    const Attached on;
    ASSERT_TRUE(on.attached);
    std::atomic<int> running{kThreads};
    std::atomic<int> started{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
            // All alive at once, so no two share a thread id.
            started.fetch_add(1);
            while (started.load() < kThreads) std::this_thread::yield();
            for (uint64_t k = 0; k < kCalls; ++k) api_call_log::record(id, k, k);
            running.fetch_sub(1);
        });
    std::map<uint64_t, std::vector<uint64_t>> by_thread;
    auto take = [&] {
        for (const LoggedApiCall& c : drain()) by_thread[c.thread].push_back(c.start_ns);
    };
    while (running.load() > 0) take();
    for (auto& t : threads) t.join();
    take();  // the ended threads' last calls, then they are forgotten
    EXPECT_EQ(api_call_log::dropped(), 0u);
    ASSERT_EQ(by_thread.size(), static_cast<size_t>(kThreads));
    for (const auto& [thread, starts] : by_thread) {
        ASSERT_EQ(starts.size(), kCalls);
        EXPECT_TRUE(std::is_sorted(starts.begin(), starts.end()));
    }
}

}  // namespace
}  // namespace zehal
