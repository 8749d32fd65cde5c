#include "common/api_call_log.hpp"

#include <pthread.h>

#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>

#include "common/spsc_ring.hpp"

namespace zehal {

std::atomic<bool> g_api_calls_recording{false};

namespace api_call_log {
namespace {

// What a thread's ring holds per call.
struct Entry {
    uint64_t start_ns;
    uint64_t end_ns;
    uint32_t name;
    uint32_t unused;
};

// One thread's calls: it produces, the attached consumer takes.
struct ThreadCalls {
    SpscByteRing ring{kRingBytes};
    uint64_t thread = static_cast<uint64_t>(pthread_self());
    // Set when the thread ends; release: its last push happens before (pairs with drain()'s acquire).
    std::atomic<bool> ended{false};
};

// The log's shared state. Never destroyed: threads may record while the process exits.
struct Log {
    std::mutex mu;  // the thread list and the consumer side of every ring
    std::vector<std::shared_ptr<ThreadCalls>> threads;
    bool attached = false;
    std::atomic<uint64_t> dropped{0};

    std::mutex names_mu;
    std::vector<std::string> names;
    std::unordered_map<std::string, uint32_t> ids;
};

Log& log() {
    static Log* const instance = new Log;
    return *instance;
}

// The calling thread's ring, registered with the log on first use and marked ended when the
// thread ends (the log keeps it until it is drained). The pointer and the flag are trivially
// destructible, so they stay readable while the thread's other thread-locals are destroyed:
// a call made after the slot's end is not recorded, and counted as dropped.
thread_local ThreadCalls* t_calls = nullptr;
thread_local bool t_ended = false;
struct ThreadSlot {
    std::shared_ptr<ThreadCalls> calls;
    ~ThreadSlot() {
        if (calls) calls->ended.store(true, std::memory_order_release);
        t_calls = nullptr;
        t_ended = true;
    }
};
thread_local ThreadSlot t_slot;

// The calling thread's ring; null once the thread is ending. Throws std::bad_alloc.
ThreadCalls* thread_calls() {
    if (t_calls || t_ended) return t_calls;
    auto calls = std::make_shared<ThreadCalls>();
    Log& l = log();
    {
        std::lock_guard lock(l.mu);
        l.threads.push_back(calls);
    }
    t_calls = calls.get();
    t_slot.calls = std::move(calls);
    return t_calls;
}

// Takes every thread's calls (into `out` unless null) and forgets threads that ended; l.mu held.
void take_locked(Log& l, std::vector<LoggedApiCall>* out) {
    for (auto it = l.threads.begin(); it != l.threads.end();) {
        ThreadCalls& t = **it;
        const bool ended = t.ended.load(std::memory_order_acquire);
        Entry e{};
        while (t.ring.pop(&e, sizeof e, sizeof e) == sizeof e)
            if (out) out->push_back({e.name, e.start_ns, e.end_ns, t.thread});
        it = ended ? l.threads.erase(it) : it + 1;
    }
}

}  // namespace

uint32_t intern(std::string_view name) noexcept {
    Log& l = log();
    std::lock_guard lock(l.names_mu);
    try {
        if (const auto it = l.ids.find(std::string(name)); it != l.ids.end()) return it->second;
        // Every allocation first, so that the name is added to both or neither.
        std::string copy(name);
        l.names.reserve(l.names.size() + 1);
        const auto id = static_cast<uint32_t>(l.names.size());
        l.ids.emplace(std::string(name), id);
        l.names.push_back(std::move(copy));  // no allocation: reserved
        return id;
    } catch (const std::bad_alloc&) {
        return kUnknownName;
    }
}

std::string name_of(uint32_t id) {
    Log& l = log();
    std::lock_guard lock(l.names_mu);
    return id < l.names.size() ? l.names[id] : std::string("?");
}

void record(uint32_t name, uint64_t start_ns, uint64_t end_ns) noexcept {
    ThreadCalls* calls = nullptr;
    try {
        calls = thread_calls();
    } catch (const std::bad_alloc&) {  // no memory for the thread's ring
    }
    const Entry e{start_ns, end_ns, name, 0};
    // Relaxed: a statistic.
    if (!calls || !calls->ring.try_push(&e, sizeof e)) log().dropped.fetch_add(1, std::memory_order_relaxed);
}

bool attach() {
    Log& l = log();
    std::lock_guard lock(l.mu);
    if (l.attached) return false;
    l.attached = true;
    take_locked(l, nullptr);
    l.dropped.store(0, std::memory_order_relaxed);  // relaxed: a statistic
    g_api_calls_recording.store(true, std::memory_order_relaxed);
    return true;
}

void detach() {
    Log& l = log();
    std::lock_guard lock(l.mu);
    g_api_calls_recording.store(false, std::memory_order_relaxed);
    l.attached = false;
}

void drain(std::vector<LoggedApiCall>& out) {
    Log& l = log();
    std::lock_guard lock(l.mu);
    take_locked(l, &out);
}

uint64_t dropped() noexcept { return log().dropped.load(std::memory_order_relaxed); }  // relaxed: a statistic

}  // namespace api_call_log
}  // namespace zehal
