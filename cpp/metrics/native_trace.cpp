#include "metrics/native_trace.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.hpp"
#include "common/clock_skew.hpp"
#include "common/mpi_clock_link.hpp"
#include "common/status.hpp"
#include "hal/registry.hpp"
#include "metrics/metric_group.hpp"
#include "metrics/rank_stream.hpp"
#include "metrics/tracer.hpp"

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
    std::mutex mu;                                 // guards what follows
    bool finished = false;                         // the file is complete: nothing more is added
    std::vector<std::shared_ptr<Tracer>> tracers;  // the devices' tracers the stream drains
    bool mpi_samples = false;                      // zehal's MPI library gave clock samples
    WatchClockSamples watch = nullptr;             // that library's, when the process has it
};

NativeTrace* g_trace = nullptr;  // set once by start_native_trace(), finished at exit

// Writes clock sample `s` into the file, as Python's trace writes its samples (the merge
// keeps the last sample of each kind).
void write_clock_sample(NativeTrace& t, const MpiClockSample& s) {
    std::string packet;
    perfetto::append_event(packet, t.rank + 1, s.local_ns, EventKind::kInstant, t.stream->track_uuid(0),
                           "zehal.clock_sync", 0,
                           {{"local_ns", static_cast<uint64_t>(s.local_ns)},
                            {"reference_ns", static_cast<uint64_t>(s.reference_ns)},
                            {"error_ns", static_cast<uint64_t>(s.error_ns)},
                            {"which", std::string(s.which)}});
    t.stream->write(packet);
}

// A clock sample of this process alone: no other rank is asked, so its clock is taken as
// rank 0's (true on one host, whose ranks share CLOCK_MONOTONIC_RAW).
void write_own_clock_sample(NativeTrace& t, const char* which) {
    const int64_t now = t.stream->local(host_now_ns());
    write_clock_sample(t, {now, now, 0, which});
}

// Where zehal's MPI library hands the samples it measured against rank 0: they replace the
// process's own.
void on_mpi_clock_sample(const MpiClockSample* sample) {
    NativeTrace& t = *g_trace;
    std::lock_guard lock(t.mu);
    if (t.finished) return;
    t.mpi_samples = true;
    write_clock_sample(t, *sample);
}

void finish_native_trace() {
    NativeTrace& t = *g_trace;
    bool mpi_samples = false;
    {
        std::lock_guard lock(t.mu);
        if (t.finished) return;
        t.finished = true;  // from now on the MPI library's samples are not written
        mpi_samples = t.mpi_samples;
    }
    if (t.watch) t.watch(nullptr);  // no more samples: the file is being finished
    t.stream->stop();               // disables and drains every device's tracer
    std::vector<std::shared_ptr<Tracer>> tracers;
    {
        std::lock_guard lock(t.mu);
        tracers.swap(t.tracers);
    }
    for (const auto& tracer : tracers) tracer->destroy();  // the devices' tracer slots are free again
    t.stream->close_command();
    if (!mpi_samples) write_own_clock_sample(t, "end");
    std::string packet;
    perfetto::append_event(packet, t.rank + 1, t.stream->local(host_now_ns()), EventKind::kInstant,
                           t.stream->track_uuid(0), "zehal.end");
    t.stream->write(packet);
    if (const int error = t.stream->close())
        std::fprintf(stderr, "zehal trace: %s: %s\n", t.path.c_str(), std::strerror(error));
}

// The groups Python's trace records too: the engines' commands and the export-memory writes.
std::vector<MetricGroupRef> traced_groups(const hal::DeviceRef& device) {
    std::vector<MetricGroupRef> all, chosen;
    if (metric_groups(device, &all) != ZE_RESULT_SUCCESS) return chosen;
    for (const MetricGroupRef& g : all)
        if (g->tracer_based() && (g->info().name == "EngineEvents" || (g->info().type_flags & hal::kGroupExportDmaBuf)))
            chosen.push_back(g);
    return chosen;
}

// Gives the tracer slot of device `label` to the program, which asks for a tracer of its own
// (a device has one): the trace's tracer of it is drained into the file and ended, and an
// instant on the process track says from when the device's records stop.
void yield_device(const Tracer* tracer, const std::string& label) {
    NativeTrace& t = *g_trace;
    std::shared_ptr<Tracer> ours;
    {
        std::lock_guard lock(t.mu);
        const auto it = std::find_if(t.tracers.begin(), t.tracers.end(),
                                     [tracer](const auto& x) { return x.get() == tracer; });
        if (it == t.tracers.end()) return;  // the trace is ending: it frees the slot itself
        ours = *it;
        t.tracers.erase(it);
    }
    t.stream->remove_tracer(ours.get());
    ours->destroy();
    std::string packet;
    perfetto::append_event(packet, t.rank + 1, t.stream->local(host_now_ns()), EventKind::kInstant,
                           t.stream->track_uuid(0), "device tracer handed to the program", 0, {{"device", label}});
    t.stream->write(packet);
}

// Streams what `device` (device `index` of `backend`) does from now on into the trace, with
// a tracer of the groups above; a device without a tracer is left out, one whose tracer is
// taken or cannot start is reported on stderr and left out. Runs when the registry probes
// the device's backend, before the program can use the device.
void trace_device(const hal::DeviceRef& device, std::string_view backend, uint32_t index) {
    NativeTrace& t = *g_trace;
    if (!device->properties().tracer) return;
    const std::string label = std::string(backend) + " device " + std::to_string(index);
    std::lock_guard lock(t.mu);
    if (t.finished) return;
    const std::vector<MetricGroupRef> groups = traced_groups(device);
    std::vector<const MetricGroup*> raw;
    for (const MetricGroupRef& g : groups) raw.push_back(g.get());
    std::shared_ptr<Tracer> tracer;
    ze_result_t r = groups.empty() ? ZE_RESULT_ERROR_UNSUPPORTED_FEATURE : activate(device, groups);
    if (r == ZE_RESULT_SUCCESS) r = Tracer::create(device, raw, nullptr, nullptr, &tracer);
    if (r == ZE_RESULT_SUCCESS) r = tracer->enable(true);
    // A sim device's synchronized timestamps carry the test-only clock skew itself.
    if (r == ZE_RESULT_SUCCESS) r = t.stream->add_tracer(tracer, device->backend_name() == "sim", label);
    if (r != ZE_RESULT_SUCCESS) {
        if (tracer) {
            tracer->disable(true);
            tracer->destroy();
        }
        const std::string_view why = result_name(r);
        std::fprintf(stderr, "zehal trace: %s is not traced (its tracer did not start: %.*s)\n", label.c_str(),
                     static_cast<int>(why.size()), why.data());
        return;
    }
    std::shared_ptr<DeviceMetrics> state;
    if (DeviceMetrics::of(device, &state) == ZE_RESULT_SUCCESS)
        state->set_tracer_yield([ours = tracer.get(), label] { yield_device(ours, label); });
    t.tracers.push_back(std::move(tracer));
    // Finished before the exit handlers of what the device's probe made (registered after the
    // one start() registers): the device is whole while its tracer is drained.
    std::atexit(&finish_native_trace);
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
    write_own_clock_sample(*t, "start");
    if (t->stream->start(nullptr, kPollNs, false, true) != ZE_RESULT_SUCCESS) {
        t->stream->close();
        std::remove(t->path.c_str());
        return false;  // another stream of this process records its API calls
    }
    g_trace = t.release();  // kept to the end of the process: the exit handler finishes it
    std::atexit(&finish_native_trace);
    hal::watch_devices(&trace_device);  // the devices probed already, and those probed later
    // zehal's MPI library, when the program runs with it (zehal trace preloads it).
    g_trace->watch = reinterpret_cast<WatchClockSamples>(::dlsym(RTLD_DEFAULT, kWatchClockSamples));
    if (g_trace->watch) g_trace->watch(&on_mpi_clock_sample);
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
