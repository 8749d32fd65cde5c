// Field numbers are those of Perfetto's .proto files (protos/perfetto/trace/).
#include "metrics/perfetto_packets.hpp"

namespace zehal::metrics::perfetto {
namespace {

constexpr uint32_t kVarint = 0;
constexpr uint32_t kLen = 2;

constexpr uint32_t kTracePacket = 1;       // Trace.packet
constexpr uint32_t kTimestamp = 8;         // TracePacket.timestamp
constexpr uint32_t kSequenceId = 10;       // TracePacket.trusted_packet_sequence_id
constexpr uint32_t kTrackEvent = 11;       // TracePacket.track_event
constexpr uint32_t kTrackDescriptor = 60;  // TracePacket.track_descriptor
constexpr uint32_t kTdUuid = 1;            // TrackDescriptor.uuid
constexpr uint32_t kTdName = 2;            // TrackDescriptor.name
constexpr uint32_t kTdParent = 5;          // TrackDescriptor.parent_uuid
constexpr uint32_t kTdProcess = 3;         // TrackDescriptor.process
constexpr uint32_t kTdCounter = 8;         // TrackDescriptor.counter
constexpr uint32_t kPdPid = 1;             // ProcessDescriptor.pid
constexpr uint32_t kPdName = 6;            // ProcessDescriptor.process_name
constexpr uint32_t kPdLabels = 8;          // ProcessDescriptor.process_labels
constexpr uint32_t kTeAnnotation = 4;      // TrackEvent.debug_annotations
constexpr uint32_t kTeType = 9;            // TrackEvent.type
constexpr uint32_t kTeTrack = 11;          // TrackEvent.track_uuid
constexpr uint32_t kTeName = 23;           // TrackEvent.name
constexpr uint32_t kTeCounter = 30;        // TrackEvent.counter_value
constexpr uint32_t kDaInt = 4;             // DebugAnnotation.int_value
constexpr uint32_t kDaString = 6;          // DebugAnnotation.string_value
constexpr uint32_t kDaName = 10;           // DebugAnnotation.name

void varint(std::string& out, uint64_t v) {
    while (v > 0x7F) {
        out.push_back(static_cast<char>((v & 0x7F) | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}

void key(std::string& out, uint32_t field, uint32_t wire) { varint(out, (uint64_t{field} << 3) | wire); }

void int_field(std::string& out, uint32_t field, uint64_t v) {
    key(out, field, kVarint);
    varint(out, v);
}

void bytes_field(std::string& out, uint32_t field, std::string_view data) {
    key(out, field, kLen);
    varint(out, data.size());
    out.append(data);
}

// Appends `body` as field 1 of a Trace.
void wrap(std::string& out, const std::string& body) { bytes_field(out, kTracePacket, body); }

}  // namespace

void append_track(std::string& out, uint32_t sequence_id, uint64_t uuid, std::string_view name, uint64_t parent,
                  bool counter) {
    std::string desc;
    int_field(desc, kTdUuid, uuid);
    bytes_field(desc, kTdName, name);
    if (parent) int_field(desc, kTdParent, parent);
    if (counter) bytes_field(desc, kTdCounter, {});
    std::string packet;
    int_field(packet, kSequenceId, sequence_id);
    bytes_field(packet, kTrackDescriptor, desc);
    wrap(out, packet);
}

void append_process_track(std::string& out, uint32_t sequence_id, uint64_t uuid, std::string_view name, uint32_t pid,
                          const std::vector<std::string>& labels) {
    std::string process;
    int_field(process, kPdPid, pid);
    bytes_field(process, kPdName, name);
    for (const std::string& label : labels) bytes_field(process, kPdLabels, label);
    std::string desc;
    int_field(desc, kTdUuid, uuid);
    bytes_field(desc, kTdName, name);
    bytes_field(desc, kTdProcess, process);
    std::string packet;
    int_field(packet, kSequenceId, sequence_id);
    bytes_field(packet, kTrackDescriptor, desc);
    wrap(out, packet);
}

void append_event(std::string& out, uint32_t sequence_id, int64_t ts_ns, EventKind kind, uint64_t track,
                  std::string_view name, uint64_t value, const Args& args) {
    std::string body;
    int_field(body, kTeType, static_cast<uint64_t>(kind));
    int_field(body, kTeTrack, track);
    if (!name.empty()) bytes_field(body, kTeName, name);
    if (kind == EventKind::kCounter) int_field(body, kTeCounter, value);
    std::string annotation;
    for (const auto& [arg_name, arg] : args) {
        annotation.clear();
        bytes_field(annotation, kDaName, arg_name);
        if (const auto* text = std::get_if<std::string>(&arg))
            bytes_field(annotation, kDaString, *text);
        else
            int_field(annotation, kDaInt, std::get<uint64_t>(arg));
        bytes_field(body, kTeAnnotation, annotation);
    }
    std::string packet;
    int_field(packet, kTimestamp, static_cast<uint64_t>(ts_ns));
    int_field(packet, kSequenceId, sequence_id);
    bytes_field(packet, kTrackEvent, body);
    wrap(out, packet);
}

}  // namespace zehal::metrics::perfetto
