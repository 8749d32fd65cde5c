// One rank's trace file, streamed as the tracers are drained (docs/tracing.md): a thread of
// its own reads each tracer, decodes the records and appends them as Perfetto packets, one
// write per drain, so the program's threads (and Python's interpreter lock) pay nothing
// for the encoding. Each command becomes a slice on the track of its engine and of its
// queue plus a queue-depth counter; other metrics become instants; each tracer's dropped
// count a counter track. A tracer added with a label (a device of several) gets tracks of
// its own, their names led by the label. Host API calls, given by the caller or taken from the process's
// API call log (common/api_call_log.hpp) by the same thread, become slices on a track per
// thread. Times are written on the rank's clock: the unskewed host ns plus a test-only
// offset and drift (ZEHAL_TEST_CLOCK_SKEW, read by the caller).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/api_call_log.hpp"
#include "common/clock_skew.hpp"
#include "metrics/decoder.hpp"
#include "metrics/perfetto_packets.hpp"
#include "metrics/tracer.hpp"

namespace zehal::metrics {

// A host API call: its name, start and end (unskewed host ns) and its thread.
struct ApiCall {
    std::string name;
    uint64_t start_ns = 0;
    uint64_t end_ns = 0;
    uint64_t thread = 0;
};

// Every public method is thread-safe. Write errors are kept and reported by close().
class RankStream {
public:
    // Creates (truncating) the file at `path` for rank `rank`: packets carry sequence id
    // rank + 1, tracks the uuids (rank + 1) << 32 | n with n from 1 on (0 is the process
    // track, which the caller writes). Throws std::system_error when the file cannot be made.
    RankStream(const std::string& path, uint32_t rank, int64_t offset_ns, int64_t drift_ppb);
    RankStream(const RankStream&) = delete;
    RankStream& operator=(const RankStream&) = delete;
    // Stops the drain thread and closes the file.
    ~RankStream();

    // The uuid of track `local` of this rank.
    uint64_t track_uuid(uint32_t local) const { return (uint64_t{rank_} + 1) << 32 | local; }
    // `raw_ns` (CLOCK_MONOTONIC_RAW) on this rank's clock.
    int64_t local(uint64_t raw_ns) const { return skew_.apply(raw_ns); }

    // Appends packets made by the caller, as they are.
    void write(std::string_view packets);
    // Encodes decoded `entries` (metric names by index: `names`) and, when it changed, the
    // tracer's `dropped` count at `now_ns` (unskewed); appends them. `on_rank_clock`: the
    // entries' times are already on this rank's clock (a device whose synchronized
    // timestamps carry the skew), else they are unskewed host ns.
    void add_entries(std::span<const MetricEntry> entries, const std::vector<std::string>& names, uint64_t dropped,
                     uint64_t now_ns, bool on_rank_clock = false);
    // Encodes `calls` as slices on their threads' tracks and appends them.
    void add_api_calls(std::span<const ApiCall> calls);
    // Appends the command of add_entries still open, if any (its end not seen yet: it ends
    // where it starts).
    void close_command();

    // Starts a thread that drains, every `poll_ns`, `tracer` (enabled by the caller; null:
    // none) and, with `api_calls`, the host API calls of this process (attaching to its
    // API call log, so they are recorded from now on); `on_rank_clock` as for add_entries,
    // for every record it reads. INVALID_ARGUMENT when already started or given nothing to
    // drain; HANDLE_OBJECT_IN_USE when another stream records the API calls; the decoder's
    // errors otherwise.
    ze_result_t start(const std::shared_ptr<Tracer>& tracer, uint64_t poll_ns, bool on_rank_clock,
                      bool api_calls = false);
    // Drains `tracer` (enabled by the caller) too, from the next turn of the running thread
    // on, onto tracks whose names start with `label` (a device's name among several);
    // `on_rank_clock` as for add_entries. UNINITIALIZED when the thread does not run
    // (never started, or stopped); INVALID_NULL_HANDLE for a null tracer; the decoder's
    // errors otherwise.
    ze_result_t add_tracer(const std::shared_ptr<Tracer>& tracer, bool on_rank_clock, const std::string& label);
    // Stops draining `tracer`: disables it (waiting), drains what it holds and writes its open
    // command, as stop() does for each tracer. Nothing when this stream does not drain it.
    void remove_tracer(const Tracer* tracer);
    // Stops the thread, the API call log's recording and every tracer (waiting), and drains
    // what is left; each tracer's open command is written. Nothing when not started.
    void stop();
    // Stops, closes the file; the errno of the first failed write, or 0.
    int close();

private:
    struct Command {
        int64_t start = 0;
        std::optional<int64_t> end;
        uint64_t id = 0;
        std::optional<uint32_t> subdevice;
        std::map<std::string, uint64_t, std::less<>> fields;
    };
    // Where records come from: a tracer the thread drains, or the caller (add_entries).
    struct Source {
        std::shared_ptr<Tracer> tracer;  // null for the caller's entries
        std::shared_ptr<Decoder> decoder;
        std::vector<std::string> names;  // metric names by decodable index
        bool on_rank_clock = false;
        std::string label;                // leads its tracks' names; empty: none
        std::optional<Command> command;   // under mu_: the command whose records are being read
        std::optional<uint64_t> dropped;  // under mu_: the dropped count last written
        std::mutex drain_mu;              // one reader of the tracer and its decoder at a time
    };
    // Track keys: source label, kind, metric name, then up to three numbers.
    using TrackKey = std::tuple<std::string, std::string, std::string, int64_t, int64_t, int64_t>;

    static ze_result_t make_source(const std::shared_ptr<Tracer>& tracer, bool on_rank_clock, const std::string& label,
                                   std::shared_ptr<Source>* out);
    uint64_t track(const Source& s, TrackKey key, const std::string& name, bool counter);
    void encode_entries(Source& s, std::span<const MetricEntry> entries, const std::vector<std::string>& names,
                        uint64_t dropped, uint64_t now_ns);
    void encode_entry(Source& s, const MetricEntry& e, const std::string& name);
    void encode_command(const Source& s, const Command& c);
    void close_command_locked(Source& s);
    void encode_api_call(std::string_view name, uint64_t start_ns, uint64_t end_ns, uint64_t thread);
    void flush();
    void drain_source(Source& s);
    void finish_source(Source& s);
    void drain_once();
    void drain_api_calls();
    void run(uint64_t poll_ns);

    const uint32_t rank_;
    const uint32_t sequence_id_;
    const ClockSkew skew_;

    // Encoding state and the file, under mu_.
    std::mutex mu_;
    int fd_ = -1;
    int error_ = 0;
    std::string pending_;
    std::map<TrackKey, uint64_t> tracks_;
    std::unordered_map<uint64_t, uint64_t> api_tracks_;  // thread -> its API call track, as tracks_ holds it
    Source caller_;                                      // the entries add_entries is given

    // The drain thread and what it reads, under thread_mu_ (set up by start(), ended by stop()).
    std::mutex stop_mu_;  // held through stop()
    std::mutex thread_mu_;
    std::condition_variable wake_;
    bool quit_ = false;
    std::vector<std::shared_ptr<Source>> sources_;  // the tracers drained
    bool api_calls_ = false;                        // attached to the API call log
    std::vector<LoggedApiCall> logged_;             // drained API calls, reused by the drain thread
    std::vector<std::string> api_names_;            // the log's names by id, as far as seen
    std::optional<uint64_t> api_dropped_;           // the log's dropped count last written
    std::thread thread_;
};

}  // namespace zehal::metrics
