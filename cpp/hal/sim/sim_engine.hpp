// An engine of the software device: a worker thread that runs the commands of the queues
// bound to it, in order within each queue, and signals their events.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/wait_word.hpp"
#include "hal/event.hpp"
#include "hal/host_event.hpp"
#include "hal/pointer_registry.hpp"
#include "hal/sim/sim_command_gate.hpp"
#include "hal/sim/sim_clock.hpp"
#include "hal/sim/sim_config.hpp"
#include "hal/sim/sim_trace.hpp"
#include "hal/sim/sim_trace_source.hpp"
#include "hal/timestamps.hpp"

namespace zehal::sim {

// Command kinds; copy, fill and barrier are numbered as CommandTrace::command. The engine
// runs the steps (an event reset, a timestamp write, a kernel timestamp query) itself, in
// queue order, and traces them as barriers: they move no data through the engine. A kernel
// runs its KernelWork and is traced as CommandTrace's kernel.
enum class CommandKind : uint32_t {
    copy = 0,
    fill = 1,
    barrier = 2,
    reset = 3,
    write_timestamp = 4,
    query_timestamps = 5,
    kernel = 6,
};

// True for the kinds the engine runs as steps.
inline bool is_step(CommandKind kind) noexcept {
    return kind >= CommandKind::reset && kind <= CommandKind::query_timestamps;
}

// What a kernel command runs on its engine's turn (SimLaunch, sim_module.hpp); destroyed
// with its command.
class KernelWork {
public:
    virtual ~KernelWork() = default;
    // Runs the kernel to completion: SUCCESS, or an error with `error` set when it faulted.
    virtual ze_result_t run(std::string* error) = 0;
};

// Longest fill pattern.
inline constexpr size_t kMaxPattern = 128;
// No export group: the destination is not exported memory.
inline constexpr uint32_t kNoExport = ~0u;

// One submitted command. Nodes are recycled through their queue's free list, so a steady
// stream of submissions allocates nothing.
struct Command {
    Command* next = nullptr;
    CommandKind kind = CommandKind::barrier;
    void* dst = nullptr;
    const void* src = nullptr;
    size_t size = 0;
    uint32_t pattern_size = 0;
    uint32_t export_group = kNoExport;  // export group whose memory dst is in
    alignas(16) unsigned char pattern[kMaxPattern];
    hal::EventRef signal;              // may be null
    std::vector<hal::EventRef> waits;  // HostEvents of the device; capacity kept on reuse
    // Steps: the event to reset, or the events whose kernel timestamps are written to dst
    // at `offsets` (empty: packed). Capacity kept on reuse.
    std::vector<hal::EventRef> events;
    std::vector<size_t> offsets;
    hal::TimestampReference ref{};  // sampled at submission, for timestamp events
    // The holds on the allocations of dst and src (hal::PointerRegistry::hold_range), given
    // back when the node is recycled: the memory is not freed before.
    hal::PointerRegistry::InFlight* holds[2] = {nullptr, nullptr};
    std::unique_ptr<KernelWork> work;  // a kernel command's, else null
    // dst or src is a peer device's memory: the copy or fill crosses the link, throttled at
    // SimConfig::link_bandwidth_bytes_per_s.
    bool peer_link = false;
};

// The commands of one queue, shared by the queue object and its engine (which keeps it
// until it is closed and empty, so work submitted before a queue goes away still runs).
struct QueueState {
    QueueState(uint64_t id, uint32_t ordinal, uint32_t index) : id(id), ordinal(ordinal), index(index) {}
    ~QueueState();
    QueueState(const QueueState&) = delete;
    QueueState& operator=(const QueueState&) = delete;

    const uint64_t id;  // device-unique
    const uint32_t ordinal;
    const uint32_t index;

    std::mutex mu;  // the list, the free list and `submitted`
    Command* head = nullptr;
    Command* tail = nullptr;
    Command* free_list = nullptr;
    // Commands waiting in the list. Written under mu; read without it by the engine to skip
    // empty queues (acquire: pairs with the release of the submitter's store).
    std::atomic<uint32_t> pending{0};
    // Commands submitted and finished (run, taken back or dropped). `submitted` is written
    // under mu and read by synchronizers without it (release/acquire).
    std::atomic<uint64_t> submitted{0};
    std::atomic<uint64_t> finished{0};
    WaitWord progress;  // bumped when commands finish and when the device is lost
    // Set when the queue object is gone (release: the engine may drop the state once it
    // also sees pending == 0).
    std::atomic<bool> closed{false};

    // A node from the free list or the heap (nullptr when the heap refuses). Caller holds mu.
    Command* take_node();
    // Back to the free list, dropping its references and its holds on memory (once the
    // command no longer touches it). Caller holds mu.
    void recycle(Command* c);
};

// What an engine needs of its device; owned by the device, which outlives its engines.
struct EngineContext {
    const SimConfig* config;
    const SimClock* clock;
    hal::EventDomain* domain;
    SimTrace* trace;
    const SimTraceSource* tracing;  // whether a tracer runs
    CommandGate* gate;              // counts the commands running (see SimDevice::free)
    std::function<void()> lose;     // loses the device (a kernel faulted)
};

// One engine: a thread (started with its first queue) running the queues bound to it
// round-robin, one command at a time; a command whose wait events are not all signalled
// holds back its own queue only.
class Engine {
public:
    Engine(const EngineContext& ctx, uint32_t ordinal, uint32_t index);
    // Stops the thread: runs what can still run, drops (signalling their events) commands
    // whose wait events never came.
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // Binds a queue (starting the thread on first use). False when no thread can start.
    bool bind(const std::shared_ptr<QueueState>& queue);
    // New work, a closed queue, a lost device or a signalled event: the thread re-scans.
    void wake() noexcept { wake_.fetch_add(1); }
    // The device was lost: wakes the thread and every synchronizer of its queues.
    void on_lost();

private:
    void run();
    // Scans each queue once: runs the first command ready in each. Sets *ran when one ran,
    // *blocked when a queue's first command waits for an event.
    void scan(std::vector<std::shared_ptr<QueueState>>& queues, bool* ran, bool* blocked);
    // The first command of `q` when its wait events are signalled (taken off the list).
    Command* take_ready(QueueState& q, bool* blocked);
    // Runs command `c` of `q`: its step or parts, the export-write record, the wait past its
    // end tick when aligned, then its event and the queue's count (finish).
    void execute(QueueState& q, Command* c);
    // Rewrites the packets in the ticks of `domain` (another sim device's, whose event the
    // command signals) from the host instants of the parts, start aligned as the engine's own
    // are: at most the domain's max_packets, the last spanning the parts beyond. Returns the
    // number of packets, and in *last_end the latest end tick (unmasked).
    uint32_t retime_packets(const hal::EventDomain& domain, uint64_t* last_end);
    // The work of a step command (is_step): the reset, or the timestamps written to memory.
    void run_step(const Command& c);
    // What running a command's parts gave: whether the throttle was cut short (device lost,
    // engine stopping), and the end ticks of the first and of the last part.
    struct Ran {
        bool aborted = false;
        uint64_t first_end = 0;
        uint64_t last_end = 0;
    };
    // Copies or fills each part (one per sub-device), throttled, recording its packet and
    // trace record. `aligned` starts parts on a tick boundary.
    Ran run_parts(QueueState& q, const Command& c, bool aligned);
    // Runs a kernel command's work, recording its packets (every part spans the kernel) and
    // trace records. A kernel that faults loses the device: aborted, no timestamps.
    Ran run_kernel(QueueState& q, const Command& c, bool aligned);
    // Waits until the clock has passed `end_ticks`: the device's own, or with `domain` that
    // domain's (another sim device's).
    void wait_past(uint64_t end_ticks, const hal::EventDomain* domain = nullptr);
    // Signals the command's event (with the first `packets` packets unless aborted; dropped
    // when the event's device is lost), recycles it, counts it.
    void finish(QueueState& q, Command* c, hal::HostEvent* event, bool aborted, uint32_t packets);
    // Drops every pending command of `q` (device lost or shut down); `signal` signals their
    // events (without timestamps).
    void drop_pending(QueueState& q, bool signal);
    // Waits until host time `deadline_ns` (the throttle), returning early when the device
    // is lost or the engine stops. False when it returned early.
    bool wait_until_ns(uint64_t deadline_ns);
    // Rebuilds `queues` when the bound set changed; removes closed, empty queues.
    void refresh(std::vector<std::shared_ptr<QueueState>>& queues, uint64_t* version);
    bool stopping() const noexcept { return stop_.load(std::memory_order_acquire); }

    const EngineContext ctx_;
    const uint32_t ordinal_;
    const uint32_t index_;
    const uint32_t parts_;  // packets per command: sub-devices, or 1
    const uint64_t kernel_mask_;

    WaitWord wake_;
    std::atomic<bool> stop_{false};  // release by the destructor, acquire by the thread

    std::mutex mu_;  // queues_, thread_
    std::vector<std::shared_ptr<QueueState>> queues_;
    // Bumped (release, under mu_) when queues_ changes; the thread compares (acquire)
    // before taking mu_ to copy the list.
    std::atomic<uint64_t> version_{0};
    std::thread thread_;

    std::vector<hal::KernelTimestampResult> packets_;  // scratch of the thread
    // Host instants (ns) each part started and ended at, beside packets_.
    struct Span {
        uint64_t start = 0;
        uint64_t end = 0;
    };
    std::vector<Span> spans_;
    // A queue waits for an event of another sim device, or of an IPC pool (which another
    // process may signal), whose signals do not wake this engine: it sleeps at most
    // kForeignEventPollNs between looks (the thread's own).
    bool waits_foreign_ = false;
    static constexpr uint64_t kForeignEventPollNs = 100'000;
};

}  // namespace zehal::sim
