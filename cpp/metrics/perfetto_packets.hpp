// Perfetto TracePacket bytes, as python/zehal/perfetto_writer.py writes them: track
// descriptors and track events (slice begin and end, instants, counters) with debug
// annotations. Each function appends one whole packet, wrapped as field 1 of a Trace, so
// that a file of such packets is a Perfetto trace after any of them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace zehal::metrics::perfetto {

// TrackEvent.Type.
enum class EventKind : uint8_t { kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4 };

// A debug annotation's value: an integer or a string.
using ArgValue = std::variant<uint64_t, std::string>;
// Debug annotations, in the order they are written.
using Args = std::vector<std::pair<std::string_view, ArgValue>>;

// Appends the descriptor of track `uuid` named `name` below `parent` (0: none), a counter
// track when `counter`.
void append_track(std::string& out, uint32_t sequence_id, uint64_t uuid, std::string_view name, uint64_t parent,
                  bool counter);

// Appends the descriptor of process track `uuid` named `name`, of process `pid`, with the
// process labels `labels` ("key=value").
void append_process_track(std::string& out, uint32_t sequence_id, uint64_t uuid, std::string_view name, uint32_t pid,
                          const std::vector<std::string>& labels);

// Appends a track event at `ts_ns` (int64 on the wire, as two's complement) on `track`,
// named `name` (empty: none), with counter `value` (counters only) and `args`.
void append_event(std::string& out, uint32_t sequence_id, int64_t ts_ns, EventKind kind, uint64_t track,
                  std::string_view name, uint64_t value = 0, const Args& args = {});

}  // namespace zehal::metrics::perfetto
