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

uint64_t RankStream::track(const TrackKey& key, const std::string& name, bool counter) {
    const auto it = tracks_.find(key);
    if (it != tracks_.end()) return it->second;
    const uint64_t uuid = track_uuid(static_cast<uint32_t>(tracks_.size() + 1));
    tracks_.emplace(key, uuid);
    perfetto::append_track(pending_, sequence_id_, uuid, name, track_uuid(0), counter);
    return uuid;
}

void RankStream::encode_entry(const MetricEntry& e, const std::string& name, bool on_rank_clock) {
    const std::optional<uint32_t> sub = e.on_subdevice ? std::optional<uint32_t>(e.subdevice_id) : std::nullopt;
    const int64_t ts = on_rank_clock ? static_cast<int64_t>(e.timestamp) : local(e.timestamp);
    if (name == "CommandStart") {
        close_command_locked();
        command_ = Command{ts, std::nullopt, e.value, sub, {}};
        return;
    }
    if (command_ && name == "CommandEnd") {
        command_->end = ts;
        return;
    }
    if (command_ && std::find(std::begin(kCommandFields), std::end(kCommandFields), name) != std::end(kCommandFields)) {
        command_->fields[name] = e.value;
        return;
    }
    const std::string where = sub ? " (sub-device " + std::to_string(*sub) + ")" : "";
    const uint64_t t = track({"metric", name, sub ? int64_t{*sub} : kNone, kNone, kNone}, name + where, false);
    perfetto::Args args{{"value", e.value}};
    if (name == "ExportWrite") {
        char word[16];
        std::snprintf(word, sizeof word, "0x%08" PRIx64, e.value & 0xFFFFFFFFu);
        args.emplace_back("first_word", std::string(word));
    }
    perfetto::append_event(pending_, sequence_id_, ts, EventKind::kInstant, t, name, 0, args);
}

void RankStream::encode_command(const Command& c) {
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
        track({"engine", "", key_of(ordinal), key_of(engine), sub}, label, false),
        track({"queue", "", key_of(queue), kNone, kNone}, queue ? "queue " + std::to_string(*queue) : "queue ?", false),
    };
    for (uint64_t t : tracks) {
        perfetto::append_event(pending_, sequence_id_, c.start, EventKind::kSliceBegin, t, name, 0, args);
        perfetto::append_event(pending_, sequence_id_, end, EventKind::kSliceEnd, t, {});
    }
    if (depth) {
        const uint64_t t = track({"depth", "", key_of(ordinal), key_of(engine), sub}, "queue depth " + label, true);
        perfetto::append_event(pending_, sequence_id_, end, EventKind::kCounter, t, {}, *depth);
    }
}

void RankStream::close_command_locked() {
    if (!command_) return;
    const Command c = std::move(*command_);
    command_.reset();
    encode_command(c);
}

void RankStream::add_entries(std::span<const MetricEntry> entries, const std::vector<std::string>& names,
                             uint64_t dropped, uint64_t now_ns, bool on_rank_clock) {
    std::lock_guard lock(mu_);
    for (const MetricEntry& e : entries)
        encode_entry(e,
                     e.metric_index < names.size() ? names[e.metric_index] : "metric " + std::to_string(e.metric_index),
                     on_rank_clock);
    if (dropped_ != dropped) {
        dropped_ = dropped;
        const uint64_t t = track({"dropped", "", kNone, kNone, kNone}, "dropped records", true);
        perfetto::append_event(pending_, sequence_id_, local(now_ns), EventKind::kCounter, t, {}, dropped);
    }
    flush();
}

void RankStream::encode_api_call(std::string_view name, uint64_t start_ns, uint64_t end_ns, uint64_t thread) {
    auto [it, added] = api_tracks_.try_emplace(thread, 0);
    if (added) {
        char label[48];
        std::snprintf(label, sizeof label, "host API calls (thread %#" PRIx64 ")", thread);
        it->second = track({"api", "", static_cast<int64_t>(thread), kNone, kNone}, label, false);
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
        const uint64_t t = track({"api dropped", "", kNone, kNone, kNone}, "dropped host API calls", true);
        perfetto::append_event(pending_, sequence_id_, local(monotonic_raw_ns()), EventKind::kCounter, t, {}, dropped);
    }
    flush();
}

void RankStream::close_command() {
    std::lock_guard lock(mu_);
    close_command_locked();
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

ze_result_t RankStream::start(const std::shared_ptr<Tracer>& tracer, uint64_t poll_ns, bool on_rank_clock,
                              bool api_calls) {
    std::lock_guard lock(thread_mu_);
    if (thread_.joinable() || (!tracer && !api_calls)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    std::shared_ptr<Decoder> decoder;
    if (tracer) {
        if (ze_result_t r = Decoder::create(tracer, &decoder); r != ZE_RESULT_SUCCESS) return r;
    }
    if (api_calls && !api_call_log::attach()) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    names_.clear();
    if (decoder)
        for (const MetricRef& m : decoder->metrics()) names_.push_back(m->info().name);
    tracer_ = tracer;
    decoder_ = std::move(decoder);
    on_rank_clock_ = on_rank_clock;
    api_calls_ = api_calls;
    quit_ = false;
    try {
        thread_ = std::thread([this, poll_ns] { run(poll_ns); });
    } catch (const std::system_error&) {
        if (api_calls_) api_call_log::detach();
        api_calls_ = false;
        tracer_.reset();
        decoder_.reset();
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

void RankStream::drain_once() {
    if (api_calls_) drain_api_calls();
    if (!tracer_) return;
    size_t size = tracer_->available();
    if (size == 0) return;
    std::vector<std::byte> raw(size);
    const ze_result_t r = tracer_->read(&size, raw.data());
    if ((r != ZE_RESULT_SUCCESS && r != ZE_RESULT_WARNING_DROPPED_DATA) || size == 0) return;
    size_t raw_size = size;
    uint32_t sets = 0, count = 0;
    if (decoder_->decode(&raw_size, raw.data(), {}, &sets, nullptr, &count, nullptr) != ZE_RESULT_SUCCESS) return;
    // One slot at least: a chunk of clock-sync records alone is decoded too, for the
    // clock reference it carries to the next chunk.
    std::vector<MetricEntry> entries(std::max<uint32_t>(count, 1));
    uint32_t slots = static_cast<uint32_t>(entries.size());
    raw_size = size;
    decoder_->decode(&raw_size, raw.data(), {}, &sets, nullptr, &slots, entries.data());
    add_entries(std::span(entries.data(), std::min(count, slots)), names_, tracer_->dropped(), monotonic_raw_ns(),
                on_rank_clock_);
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
    if (tracer_) {
        tracer_->disable(true);
        // Disabled and drained: read answers NOT_READY once the ring is empty.
        for (;;) {
            size_t size = 0;
            if (tracer_->read(&size, nullptr) == ZE_RESULT_NOT_READY) break;
            drain_once();
        }
    }
    tracer_.reset();
    decoder_.reset();
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
