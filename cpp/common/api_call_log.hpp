// The host API calls of this process while a trace records them (docs/tracing.md): each
// front end (the Python bindings, the C API) times its entry points with an ApiCallScope,
// which costs one relaxed load while nobody records. While a consumer is attached, a call's
// start and end (CLOCK_MONOTONIC_RAW ns) go into a ring of the calling thread: a lock-free
// single-producer single-consumer ring, so the calling threads never wait for each other
// or for the consumer. The consumer (a trace stream's drain thread) takes what every
// thread's ring holds. One log per copy of the layers: the core's serves the Python module
// and the C API; the Level Zero driver embeds a log of its own.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.hpp"

namespace zehal {

// A host API call taken from the log: the name it was interned as, its start and end
// (CLOCK_MONOTONIC_RAW ns) and its thread (pthread_self, as Python's threading.get_ident).
struct LoggedApiCall {
    uint32_t name = 0;
    uint64_t start_ns = 0;
    uint64_t end_ns = 0;
    uint64_t thread = 0;
};

// Whether a consumer is attached, so calls are recorded. Relaxed loads suffice: a call that
// starts while the flag changes is recorded or not, either is right, and the ring's own
// ordering publishes what is recorded.
extern std::atomic<bool> g_api_calls_recording;

namespace api_call_log {

// Bytes of each thread's ring: 21,845 calls, ~1 M calls/s per thread at a 20 ms drain.
inline constexpr size_t kRingBytes = size_t{512} << 10;

// The id of a name not known (when interning found no memory).
inline constexpr uint32_t kUnknownName = ~0u;

// The id of `name`, the same for equal names (kUnknownName when out of memory); thread-safe.
uint32_t intern(std::string_view name) noexcept;
// The name interned as `id` ("?" for an unknown id); thread-safe.
std::string name_of(uint32_t id);

// Records a call of `name` from `start_ns` to `end_ns` on the calling thread's ring
// (registered on its first call). A call that does not fit is counted in dropped().
void record(uint32_t name, uint64_t start_ns, uint64_t end_ns) noexcept;

// Attaches the one consumer and starts recording; discards what an earlier consumer left
// behind and zeroes dropped(). False when a consumer is attached already.
bool attach();
// Stops recording and detaches; calls that end later are discarded by the next attach().
void detach();
// Appends the calls recorded since the last drain to `out`, thread by thread, each
// thread's in completion order. Serialized with attach() and other drains.
void drain(std::vector<LoggedApiCall>& out);
// Calls lost since attach() because a thread's ring was full.
uint64_t dropped() noexcept;

}  // namespace api_call_log

// Times the scope it lives in as host API call `name` (an id from api_call_log::intern)
// when a consumer is attached at its start; nothing else otherwise.
class ApiCallScope {
public:
    explicit ApiCallScope(uint32_t name) noexcept
        : name_(name),
          start_ns_(g_api_calls_recording.load(std::memory_order_relaxed) ? host_now_ns() : 0) {}
    ApiCallScope(const ApiCallScope&) = delete;
    ApiCallScope& operator=(const ApiCallScope&) = delete;
    ~ApiCallScope() {
        if (start_ns_) api_call_log::record(name_, start_ns_, host_now_ns());
    }

private:
    const uint32_t name_;
    const uint64_t start_ns_;  // 0: not recorded
};

}  // namespace zehal

// Times the enclosing function, an entry point of the C API, as a host API call named for
// it (its name interned once, on its first call).
#define ZEHAL_TIMED_API_CALL()                                                           \
    static const uint32_t zehal_api_call_name = ::zehal::api_call_log::intern(__func__); \
    const ::zehal::ApiCallScope zehal_api_call_scope(zehal_api_call_name)
