#include "metrics/native_trace.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.hpp"
#include "common/clock_skew.hpp"
#include "metrics/rank_stream.hpp"

namespace zehal::metrics {
namespace {

using perfetto::EventKind;

constexpr const char* kOutputVariable = "ZEHAL_TRACE_OUTPUT";
constexpr const char* kActiveVariable = "_ZEHAL_TRACE_ACTIVE_PID";  // the process traced (timeline.py's too)
constexpr const char* kRunVariable = "ZEHAL_TRACE_RUN";             // the run id `zehal trace` gives its command
constexpr uint64_t kPollNs = 20'000'000;                            // the stream's drain period, as Python's trace

// The first of `variables` that is set, as a number; `absent` when none is.
unsigned long number_from(std::initializer_list<const char*> variables, unsigned long absent) {
    for (const char* var : variables)
        if (const char* text = std::getenv(var); text && *text) return std::strtoul(text, nullptr, 10);
    return absent;
}

// 64-bit FNV-1a of `text`, as 16 hex digits: a run id from the launcher's job id.
std::string run_id_of(const std::string& text) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
    char out[17];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
    return out;
}

// The run id every rank of one launch agrees on without talking: `zehal trace`'s, else the
// MPI launcher's job id; a process of its own otherwise.
std::string run_id() {
    if (const char* run = std::getenv(kRunVariable); run && *run) return run;
    const char* step = std::getenv("SLURM_STEP_ID");
    for (const char* var : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "SLURM_JOB_ID"})
        if (const char* job = std::getenv(var); job && *job)
            return run_id_of(std::string(var) + "=" + job + "/" + (step ? step : ""));
    return run_id_of(std::to_string(getpid()) + "@" + std::to_string(host_now_ns()));
}

// The trace of this process: its stream, and what its end needs.
struct NativeTrace {
    std::unique_ptr<RankStream> stream;
    uint32_t rank = 0;
    std::string path;
};

NativeTrace* g_trace = nullptr;  // set once by start_native_trace(), finished at exit

// A clock sample of this process alone: no other rank is asked, so its clock is taken as
// rank 0's (true on one host, whose ranks share CLOCK_MONOTONIC_RAW).
void write_clock_sample(NativeTrace& t, const char* which) {
    const int64_t now = t.stream->local(host_now_ns());
    std::string packet;
    perfetto::append_event(packet, t.rank + 1, now, EventKind::kInstant, t.stream->track_uuid(0), "zehal.clock_sync", 0,
                           {{"local_ns", static_cast<uint64_t>(now)},
                            {"reference_ns", static_cast<uint64_t>(now)},
                            {"error_ns", uint64_t{0}},
                            {"which", std::string(which)}});
    t.stream->write(packet);
}

void finish_native_trace() {
    NativeTrace& t = *g_trace;
    t.stream->stop();
    t.stream->close_command();
    write_clock_sample(t, "end");
    std::string packet;
    perfetto::append_event(packet, t.rank + 1, t.stream->local(host_now_ns()), EventKind::kInstant,
                           t.stream->track_uuid(0), "zehal.end");
    t.stream->write(packet);
    if (const int error = t.stream->close())
        std::fprintf(stderr, "zehal trace: %s: %s\n", t.path.c_str(), std::strerror(error));
}

bool start(const char* output) {
    const auto rank = static_cast<uint32_t>(
        number_from({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}, 0));
    const auto size = static_cast<uint32_t>(number_from({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}, 1));
    const std::string folder = std::string(output) + ".ranks";
    if (::mkdir(folder.c_str(), 0755) != 0 && errno != EEXIST) {
        std::fprintf(stderr, "zehal trace: cannot make %s: %s\n", folder.c_str(), std::strerror(errno));
        return false;
    }
    char name[32];
    std::snprintf(name, sizeof name, "/rank-%05u.pftrace", rank);
    auto t = std::make_unique<NativeTrace>();
    t->rank = rank;
    t->path = folder + name;
    const ClockSkew skew = test_clock_skew();
    try {
        t->stream = std::make_unique<RankStream>(t->path, rank, skew.offset_ns, skew.drift_ppb);
    } catch (const std::system_error& e) {
        std::fprintf(stderr, "zehal trace: cannot write %s: %s\n", t->path.c_str(), e.code().message().c_str());
        return false;
    }
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    std::string head;
    perfetto::append_process_track(head, rank + 1, t->stream->track_uuid(0), "rank " + std::to_string(rank), rank + 1,
                                   {"zehal.run=" + run_id(), "zehal.rank=" + std::to_string(rank),
                                    "zehal.size=" + std::to_string(size), std::string("host=") + host,
                                    "pid=" + std::to_string(getpid())});
    t->stream->write(head);
    write_clock_sample(*t, "start");
    if (t->stream->start(nullptr, kPollNs, false, true) != ZE_RESULT_SUCCESS) {
        t->stream->close();
        std::remove(t->path.c_str());
        return false;  // another stream of this process records its API calls
    }
    g_trace = t.release();  // kept to the end of the process: the exit handler finishes it
    std::atexit(&finish_native_trace);
    return true;
}

}  // namespace

bool start_native_trace() noexcept {
    const char* output = std::getenv(kOutputVariable);
    if (!output || !*output) return false;
    const std::string pid = std::to_string(getpid());
    if (const char* active = std::getenv(kActiveVariable); active && pid == active) return false;
    try {
        ::setenv(kActiveVariable, pid.c_str(), 1);
        return start(output);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "zehal trace: the trace of process %s did not start: %s\n", pid.c_str(), e.what());
        return false;
    }
}

}  // namespace zehal::metrics
