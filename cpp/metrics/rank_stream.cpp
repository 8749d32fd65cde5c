#include "metrics/rank_stream.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <system_error>

namespace zehal::metrics {
namespace {

using perfetto::EventKind;

constexpr int64_t kNone = -1;  // an absent field of a track key

// The command fields a CommandStart opens, as the tracer's metric names.
constexpr std::string_view kCommandFields[] = {"BytesMoved", "EngineOrdinal", "EngineIndex",
                                               "QueueId",    "CommandType",   "QueueDepth"};

std::optional<uint64_t> field(const std::map<std::string, uint64_t, std::less<>>& fields, std::string_view name) {
    const auto it = fields.find(name);
    return it == fields.end() ? std::nullopt : std::optional<uint64_t>(it->second);
}

int64_t key_of(const std::optional<uint64_t>& v) { return v ? static_cast<int64_t>(*v) : kNone; }

std::string command_name(const std::optional<uint64_t>& kind) {
    if (!kind) return "command";
    static constexpr const char* kNames[] = {"copy", "fill", "barrier", "kernel"};
    return *kind < 4 ? kNames[*kind] : "command " + std::to_string(*kind);
}

std::string engine_label(const std::optional<uint64_t>& ordinal, const std::optional<uint64_t>& index,
                         const std::optional<uint32_t>& sub) {
    std::string group = "engine";
    if (ordinal) group = *ordinal == 0 ? "compute" : *ordinal == 1 ? "copy" : "group " + std::to_string(*ordinal);
    std::string label = group + " engine " + (index ? std::to_string(*index) : "?");
    if (sub) label += " (sub-device " + std::to_string(*sub) + ")";
    return label;
}

// `name` led by a source's label, if it has one.
std::string labelled(const std::string& label, std::string name) { return label.empty() ? name : label + ": " + name; }

uint64_t monotonic_raw_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

RankStream::RankStream(const std::string& path, uint32_t rank, int64_t offset_ns, int64_t drift_ppb)
    : rank_(rank),
      sequence_id_(rank + 1),
      skew_{offset_ns, drift_ppb} {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), path);
}

RankStream::~RankStream() { close(); }

void RankStream::write(std::string_view packets) {
    std::lock_guard lock(mu_);
    pending_.append(packets);
    flush();
}

uint64_t RankStream::track(const Source& s, TrackKey key, const std::string& name, bool counter) {
    std::get<0>(key) = s.label;
    const auto it = tracks_.find(key);
    if (it != tracks_.end()) return it->second;
    const uint64_t uuid = track_uuid(static_cast<uint32_t>(tracks_.size() + 1));
    tracks_.emplace(std::move(key), uuid);
    perfetto::append_track(pending_, sequence_id_, uuid, labelled(s.label, name), track_uuid(0), counter);
    return uuid;
}

void RankStream::encode_entry(Source& s, const MetricEntry& e, const std::string& name) {
    const std::optional<uint32_t> sub = e.on_subdevice ? std::optional<uint32_t>(e.subdevice_id) : std::nullopt;
    const int64_t ts = s.on_rank_clock ? static_cast<int64_t>(e.timestamp) : local(e.timestamp);
    if (name == "CommandStart") {
        close_command_locked(s);
        s.command = Command{ts, std::nullopt, e.value, sub, {}};
        return;
    }
    if (s.command && name == "CommandEnd") {
        s.command->end = ts;
        return;
    }
    if (s.command &&
        std::find(std::begin(kCommandFields), std::end(kCommandFields), name) != std::end(kCommandFields)) {
        s.command->fields[name] = e.value;
        return;
    }
    const std::string where = sub ? " (sub-device " + std::to_string(*sub) + ")" : "";
    const uint64_t t = track(s, {{}, "metric", name, sub ? int64_t{*sub} : kNone, kNone, kNone}, name + where, false);
    perfetto::Args args{{"value", e.value}};
    if (name == "ExportWrite") {
        char word[16];
        std::snprintf(word, sizeof word, "0x%08" PRIx64, e.value & 0xFFFFFFFFu);
        args.emplace_back("first_word", std::string(word));
    }
    perfetto::append_event(pending_, sequence_id_, ts, EventKind::kInstant, t, name, 0, args);
}

void RankStream::encode_command(const Source& s, const Command& c) {
    const int64_t end = std::max(c.end.value_or(c.start), c.start);
    const auto ordinal = field(c.fields, "EngineOrdinal"), engine = field(c.fields, "EngineIndex");
    const auto queue = field(c.fields, "QueueId"), depth = field(c.fields, "QueueDepth");
    const std::string name = command_name(field(c.fields, "CommandType"));
    perfetto::Args args;
    for (std::string_view k : {"BytesMoved", "QueueId", "QueueDepth"})
        if (const auto v = field(c.fields, k)) args.emplace_back(k, *v);
    args.emplace_back("id", c.id);
    const std::string label = engine_label(ordinal, engine, c.subdevice);
    const int64_t sub = c.subdevice ? int64_t{*c.subdevice} : kNone;
    const uint64_t tracks[] = {
        track(s, {{}, "engine", "", key_of(ordinal), key_of(engine), sub}, label, false),
        track(s, {{}, "queue", "", key_of(queue), kNone, kNone}, queue ? "queue " + std::to_string(*queue) : "queue ?",
              false),
    };
    for (uint64_t t : tracks) {
        perfetto::append_event(pending_, sequence_id_, c.start, EventKind::kSliceBegin, t, name, 0, args);
        perfetto::append_event(pending_, sequence_id_, end, EventKind::kSliceEnd, t, {});
    }
    if (depth) {
        const uint64_t t = track(s, {{}, "depth", "", key_of(ordinal), key_of(engine), sub}, "queue depth " + label,
                                 true);
        perfetto::append_event(pending_, sequence_id_, end, EventKind::kCounter, t, {}, *depth);
    }
}

void RankStream::close_command_locked(Source& s) {
    if (!s.command) return;
    const Command c = std::move(*s.command);
    s.command.reset();
    encode_command(s, c);
}

void RankStream::encode_entries(Source& s, std::span<const MetricEntry> entries, const std::vector<std::string>& names,
                                uint64_t dropped, uint64_t now_ns) {
    for (const MetricEntry& e : entries)
        encode_entry(
            s, e, e.metric_index < names.size() ? names[e.metric_index] : "metric " + std::to_string(e.metric_index));
    if (s.dropped != dropped) {
        s.dropped = dropped;
        const uint64_t t = track(s, {{}, "dropped", "", kNone, kNone, kNone}, "dropped records", true);
        perfetto::append_event(pending_, sequence_id_, local(now_ns), EventKind::kCounter, t, {}, dropped);
    }
}

void RankStream::add_entries(std::span<const MetricEntry> entries, const std::vector<std::string>& names,
                             uint64_t dropped, uint64_t now_ns, bool on_rank_clock) {
    std::lock_guard lock(mu_);
    caller_.on_rank_clock = on_rank_clock;
    encode_entries(caller_, entries, names, dropped, now_ns);
    flush();
}

void RankStream::encode_api_call(std::string_view name, uint64_t start_ns, uint64_t end_ns, uint64_t thread) {
    auto [it, added] = api_tracks_.try_emplace(thread, 0);
    if (added) {
        char label[48];
        std::snprintf(label, sizeof label, "host API calls (thread %#" PRIx64 ")", thread);
        it->second = track(caller_, {{}, "api", "", static_cast<int64_t>(thread), kNone, kNone}, label, false);
    }
    const uint64_t t = it->second;
    perfetto::append_event(pending_, sequence_id_, local(start_ns), EventKind::kSliceBegin, t, name);
    perfetto::append_event(pending_, sequence_id_, local(end_ns), EventKind::kSliceEnd, t, {});
}

void RankStream::add_api_calls(std::span<const ApiCall> calls) {
    if (calls.empty()) return;
    std::lock_guard lock(mu_);
    for (const ApiCall& c : calls) encode_api_call(c.name, c.start_ns, c.end_ns, c.thread);
    flush();
}

void RankStream::drain_api_calls() {
    logged_.clear();
    api_call_log::drain(logged_);
    const uint64_t dropped = api_call_log::dropped();
    if (logged_.empty() && api_dropped_.value_or(0) == dropped) return;
    for (const LoggedApiCall& c : logged_)
        while (c.name >= api_names_.size()) api_names_.push_back(api_call_log::name_of(api_names_.size()));
    std::lock_guard lock(mu_);
    for (const LoggedApiCall& c : logged_) encode_api_call(api_names_[c.name], c.start_ns, c.end_ns, c.thread);
    if (api_dropped_.value_or(0) != dropped) {
        api_dropped_ = dropped;
        const uint64_t t = track(caller_, {{}, "api dropped", "", kNone, kNone, kNone}, "dropped host API calls", true);
        perfetto::append_event(pending_, sequence_id_, local(monotonic_raw_ns()), EventKind::kCounter, t, {}, dropped);
    }
    flush();
}

void RankStream::close_command() {
    std::lock_guard lock(mu_);
    close_command_locked(caller_);
    flush();
}

void RankStream::flush() {
    size_t done = 0;
    while (fd_ >= 0 && done < pending_.size()) {
        const ssize_t n = ::write(fd_, pending_.data() + done, pending_.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (!error_) error_ = n < 0 ? errno : EIO;
            break;
        }
        done += static_cast<size_t>(n);
    }
    pending_.clear();  // what could not be written is lost, and error_ says so
}

ze_result_t RankStream::make_source(const std::shared_ptr<Tracer>& tracer, bool on_rank_clock, const std::string& label,
                                    std::shared_ptr<Source>* out) {
    auto source = std::make_shared<Source>();
    if (ze_result_t r = Decoder::create(tracer, &source->decoder); r != ZE_RESULT_SUCCESS) return r;
    for (const MetricRef& m : source->decoder->metrics()) source->names.push_back(m->info().name);
    source->tracer = tracer;
    source->on_rank_clock = on_rank_clock;
    source->label = label;
    *out = std::move(source);
    return ZE_RESULT_SUCCESS;
}

ze_result_t RankStream::start(const std::shared_ptr<Tracer>& tracer, uint64_t poll_ns, bool on_rank_clock,
                              bool api_calls) {
    std::lock_guard lock(thread_mu_);
    if (thread_.joinable() || (!tracer && !api_calls)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    std::shared_ptr<Source> source;
    if (tracer) {
        if (ze_result_t r = make_source(tracer, on_rank_clock, {}, &source); r != ZE_RESULT_SUCCESS) return r;
    }
    if (api_calls && !api_call_log::attach()) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    sources_.clear();
    if (source) sources_.push_back(std::move(source));
    api_calls_ = api_calls;
    quit_ = false;
    try {
        thread_ = std::thread([this, poll_ns] { run(poll_ns); });
    } catch (const std::system_error&) {
        if (api_calls_) api_call_log::detach();
        api_calls_ = false;
        sources_.clear();
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t RankStream::add_tracer(const std::shared_ptr<Tracer>& tracer, bool on_rank_clock,
                                   const std::string& label) {
    if (!tracer) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    std::shared_ptr<Source> source;
    if (ze_result_t r = make_source(tracer, on_rank_clock, label, &source); r != ZE_RESULT_SUCCESS) return r;
    std::lock_guard lock(thread_mu_);
    if (!thread_.joinable() || quit_) return ZE_RESULT_ERROR_UNINITIALIZED;
    sources_.push_back(std::move(source));
    return ZE_RESULT_SUCCESS;
}

void RankStream::drain_source(Source& s) {
    std::lock_guard draining(s.drain_mu);
    size_t size = s.tracer->available();
    if (size == 0) return;
    std::vector<std::byte> raw(size);
    const ze_result_t r = s.tracer->read(&size, raw.data());
    if ((r != ZE_RESULT_SUCCESS && r != ZE_RESULT_WARNING_DROPPED_DATA) || size == 0) return;
    size_t raw_size = size;
    uint32_t sets = 0, count = 0;
    if (s.decoder->decode(&raw_size, raw.data(), {}, &sets, nullptr, &count, nullptr) != ZE_RESULT_SUCCESS) return;
    // One slot at least: a chunk of clock-sync records alone is decoded too, for the
    // clock reference it carries to the next chunk.
    std::vector<MetricEntry> entries(std::max<uint32_t>(count, 1));
    uint32_t slots = static_cast<uint32_t>(entries.size());
    raw_size = size;
    s.decoder->decode(&raw_size, raw.data(), {}, &sets, nullptr, &slots, entries.data());
    std::lock_guard lock(mu_);
    encode_entries(s, std::span(entries.data(), std::min(count, slots)), s.names, s.tracer->dropped(),
                   monotonic_raw_ns());
    flush();
}

void RankStream::drain_once() {
    if (api_calls_) drain_api_calls();
    std::vector<std::shared_ptr<Source>> sources;
    {
        std::lock_guard lock(thread_mu_);
        sources = sources_;
    }
    for (const auto& s : sources) drain_source(*s);
}

void RankStream::run(uint64_t poll_ns) {
    std::unique_lock lock(thread_mu_);
    while (!wake_.wait_for(lock, std::chrono::nanoseconds(poll_ns), [this] { return quit_; })) {
        lock.unlock();
        drain_once();
        lock.lock();
    }
}

void RankStream::stop() {
    std::lock_guard stopping(stop_mu_);  // one stop at a time: the second finds nothing to join
    {
        std::lock_guard lock(thread_mu_);
        if (!thread_.joinable()) return;
        quit_ = true;
    }
    wake_.notify_all();
    thread_.join();
    std::lock_guard lock(thread_mu_);
    if (api_calls_) {
        api_call_log::detach();  // calls that end from now on are not this stream's
        drain_api_calls();
        api_calls_ = false;
    }
    for (const auto& s : sources_) finish_source(*s);
    sources_.clear();
}

void RankStream::finish_source(Source& s) {
    s.tracer->disable(true);
    // Disabled and drained: read answers NOT_READY once the ring is empty.
    for (;;) {
        size_t size = 0;
        if (s.tracer->read(&size, nullptr) == ZE_RESULT_NOT_READY) break;
        drain_source(s);
    }
    std::lock_guard encoding(mu_);
    close_command_locked(s);  // nothing follows it: the tracer is drained
    flush();
}

void RankStream::remove_tracer(const Tracer* tracer) {
    std::shared_ptr<Source> source;
    {
        std::lock_guard lock(thread_mu_);
        const auto it = std::find_if(sources_.begin(), sources_.end(),
                                     [tracer](const auto& s) { return s->tracer.get() == tracer; });
        if (it == sources_.end()) return;
        source = *it;
        sources_.erase(it);
    }
    finish_source(*source);
}

int RankStream::close() {
    stop();
    std::lock_guard lock(mu_);
    if (fd_ >= 0) {
        flush();
        ::close(fd_);
        fd_ = -1;
    }
    return error_;
}

}  // namespace zehal::metrics
