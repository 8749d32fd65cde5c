"""Perfetto protobuf traces, written and read without a protobuf library.

A Perfetto trace file is a ``Trace`` message: a sequence of ``TracePacket`` messages, each
stored as field 1 (length-delimited). A file that ends after any whole packet is a valid
trace, so a writer can append packets and flush them as it goes: what was flushed survives
the writer's death. The field numbers below are those of Perfetto's ``.proto`` definitions
(``protos/perfetto/trace/``); the tests check the bytes against the ``perfetto`` package's
generated protobuf classes.

Only what zehal writes is encoded: track descriptors (a process per rank, tracks and
counter tracks below it), track events (slice begin and end, instants, counters) with debug
annotations, and the packet's timestamp and sequence id.
"""

from __future__ import annotations

import functools
import os
from typing import Any, BinaryIO, Callable, Iterator

__all__ = [
    "SLICE_BEGIN",
    "SLICE_END",
    "INSTANT",
    "COUNTER",
    "Event",
    "Track",
    "PacketWriter",
    "encode_event",
    "encode_track",
    "iter_packets",
    "decode_packet",
    "retime",
    "wrap_packet",
    "TruncatedError",
]

# TrackEvent.Type.
SLICE_BEGIN = 1
SLICE_END = 2
INSTANT = 3
COUNTER = 4

# Wire types.
_VARINT = 0
_LEN = 2

# Field numbers (perfetto/trace/trace.proto, trace_packet.proto, track_event/*.proto).
_TRACE_PACKET = 1  # Trace.packet
_P_TIMESTAMP = 8  # TracePacket.timestamp
_P_SEQUENCE_ID = 10  # TracePacket.trusted_packet_sequence_id
_P_TRACK_EVENT = 11  # TracePacket.track_event
_P_TRACK_DESCRIPTOR = 60  # TracePacket.track_descriptor
_TD_UUID = 1  # TrackDescriptor.uuid
_TD_NAME = 2  # TrackDescriptor.name
_TD_PROCESS = 3  # TrackDescriptor.process
_TD_PARENT = 5  # TrackDescriptor.parent_uuid
_TD_COUNTER = 8  # TrackDescriptor.counter (a CounterDescriptor; empty: plain counter)
_PD_PID = 1  # ProcessDescriptor.pid
_PD_NAME = 6  # ProcessDescriptor.process_name
_PD_LABELS = 8  # ProcessDescriptor.process_labels
_TE_ANNOTATIONS = 4  # TrackEvent.debug_annotations
_TE_TYPE = 9  # TrackEvent.type
_TE_TRACK = 11  # TrackEvent.track_uuid
_TE_NAME = 23  # TrackEvent.name
_TE_COUNTER = 30  # TrackEvent.counter_value
_DA_INT = 4  # DebugAnnotation.int_value
_DA_STRING = 6  # DebugAnnotation.string_value
_DA_NAME = 10  # DebugAnnotation.name


class TruncatedError(ValueError):
    """Bytes that end inside a packet, or that are not protobuf at all."""


# --- encoding ------------------------------------------------------------------------------


_SMALL = [bytes((v,)) for v in range(0x80)]  # the one-byte varints


def _varint(value: int) -> bytes:
    if 0 <= value < 0x80:
        return _SMALL[value]
    if value < 0:
        value &= (1 << 64) - 1  # int64 fields carry negative numbers as 64-bit two's complement
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint((field << 3) | wire)


def _int_field(field: int, value: int) -> bytes:
    return _key(field, _VARINT) + _varint(value)


def _bytes_field(field: int, data: bytes) -> bytes:
    return _key(field, _LEN) + _varint(len(data)) + data


def _str_field(field: int, text: str) -> bytes:
    return _bytes_field(field, text.encode("utf-8"))


_PACKET_KEY = _key(_TRACE_PACKET, _LEN)
_TIMESTAMP_KEY = _key(_P_TIMESTAMP, _VARINT)
_TRACK_EVENT_KEY = _key(_P_TRACK_EVENT, _LEN)
_COUNTER_KEY = _key(_TE_COUNTER, _VARINT)
_ANNOTATION_KEY = _key(_TE_ANNOTATIONS, _LEN)
_INT_KEY = _key(_DA_INT, _VARINT)


class Track:
    """A track: ``uuid`` unique in the trace, a ``name``, a ``parent`` track's uuid (0:
    none), whether it is a ``counter`` track; a process track has a ``pid`` and ``labels``."""

    __slots__ = ("uuid", "name", "parent", "counter", "pid", "labels")

    def __init__(
        self,
        uuid: int,
        name: str,
        parent: int = 0,
        counter: bool = False,
        pid: int | None = None,
        labels: tuple[str, ...] = (),
    ) -> None:
        self.uuid = uuid
        self.name = name
        self.parent = parent
        self.counter = counter
        self.pid = pid
        self.labels = tuple(labels)


class Event:
    """A track event: ``ts`` (ns), ``kind`` (SLICE_BEGIN, SLICE_END, INSTANT or COUNTER), its
    ``track`` uuid, a ``name`` (none on a slice end or a counter), a counter ``value`` and
    debug annotations ``args`` (name -> int or str)."""

    __slots__ = ("ts", "kind", "track", "name", "value", "args")

    def __init__(
        self,
        ts: int,
        kind: int,
        track: int,
        name: str = "",
        value: int = 0,
        args: dict[str, int | str] | None = None,
    ) -> None:
        self.ts = ts
        self.kind = kind
        self.track = track
        self.name = name
        self.value = value
        self.args = args or {}


def wrap_packet(body: bytes) -> bytes:
    """The Trace bytes of one packet whose TracePacket bytes are ``body``."""
    return _bytes_field(_TRACE_PACKET, body)


def encode_track(track: Track, sequence_id: int) -> bytes:
    """The Trace bytes of one packet describing ``track``."""
    desc = _int_field(_TD_UUID, track.uuid) + _str_field(_TD_NAME, track.name)
    if track.pid is not None:
        process = _int_field(_PD_PID, track.pid) + _str_field(_PD_NAME, track.name)
        for label in track.labels:
            process += _str_field(_PD_LABELS, label)
        desc += _bytes_field(_TD_PROCESS, process)
    if track.parent:
        desc += _int_field(_TD_PARENT, track.parent)
    if track.counter:
        desc += _bytes_field(_TD_COUNTER, b"")
    return wrap_packet(_int_field(_P_SEQUENCE_ID, sequence_id) + _bytes_field(_P_TRACK_DESCRIPTOR, desc))


# Bytes that repeat from event to event, made once: the head of a track event (type, track,
# name), an annotation's name, a packet's sequence id field.
_event_heads: dict[tuple[int, int, str], bytes] = {}
_annotation_names: dict[str, bytes] = {}
_sequence_fields: dict[int, bytes] = {}
_CACHE_LIMIT = 1 << 16  # entries per cache; past it, bytes are made each time


def _cached(cache: dict, key: Any, make: Callable[[], bytes]) -> bytes:
    value = cache.get(key)
    if value is None:
        value = make()
        if len(cache) < _CACHE_LIMIT:
            cache[key] = value
    return value


def encode_event(event: Event, sequence_id: int) -> bytes:
    """The Trace bytes of one packet holding ``event``."""
    kind, name = event.kind, event.name
    body = _cached(
        _event_heads,
        (kind, event.track, name),
        lambda: (
            _int_field(_TE_TYPE, kind)
            + _int_field(_TE_TRACK, event.track)
            + (_str_field(_TE_NAME, name) if name else b"")
        ),
    )
    if kind == COUNTER:
        body += _COUNTER_KEY + _varint(event.value)
    for key, value in event.args.items():
        ann = _cached(_annotation_names, key, functools.partial(_str_field, _DA_NAME, key))
        ann += _str_field(_DA_STRING, value) if isinstance(value, str) else _INT_KEY + _varint(value)
        body += _ANNOTATION_KEY + _varint(len(ann)) + ann
    packet = (
        _TIMESTAMP_KEY
        + _varint(event.ts)
        + _cached(_sequence_fields, sequence_id, lambda: _int_field(_P_SEQUENCE_ID, sequence_id))
        + _TRACK_EVENT_KEY
        + _varint(len(body))
        + body
    )
    return _PACKET_KEY + _varint(len(packet)) + packet


class PacketWriter:
    """Appends packets to a Perfetto trace file; :meth:`flush` hands them to the operating
    system, so a process killed afterwards leaves them in the file."""

    def __init__(self, path: str | os.PathLike, sequence_id: int) -> None:
        self.path = os.fspath(path)
        self.sequence_id = sequence_id
        self._file: BinaryIO = open(self.path, "wb", buffering=0)  # closed by close()
        self._pending: list[bytes] = []

    def track(self, track: Track) -> None:
        """Queues the descriptor of ``track``."""
        self._pending.append(encode_track(track, self.sequence_id))

    def event(self, event: Event) -> None:
        """Queues ``event``."""
        self._pending.append(encode_event(event, self.sequence_id))

    def flush(self) -> None:
        """Writes the queued packets with one system call."""
        if self._pending:
            self._file.write(b"".join(self._pending))
            self._pending.clear()

    def close(self) -> None:
        """Flushes and closes the file."""
        if not self._file.closed:
            self.flush()
            self._file.close()


# --- decoding ------------------------------------------------------------------------------


def _read_varint(data: bytes | memoryview, pos: int, end: int) -> tuple[int, int]:
    value = 0
    shift = 0
    while True:
        if pos >= end or shift > 63:
            raise TruncatedError("a varint runs past its message")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _fields(data: bytes | memoryview, pos: int, end: int) -> Iterator[tuple[int, int | bytes]]:
    """(field, value) of a message: an int for a varint, bytes for a length-delimited field."""
    while pos < end:
        key, pos = _read_varint(data, pos, end)
        field, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, pos = _read_varint(data, pos, end)
            yield field, value
        elif wire == _LEN:
            size, pos = _read_varint(data, pos, end)
            if pos + size > end:
                raise TruncatedError("a field runs past its message")
            yield field, bytes(data[pos : pos + size])
            pos += size
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise TruncatedError(f"wire type {wire} is not one a trace holds")
    if pos != end:
        raise TruncatedError("a field runs past its message")


def iter_packets(data: bytes) -> Iterator[bytes]:
    """The TracePacket bytes of a Trace; TruncatedError where the data ends inside one."""
    view = memoryview(data)
    pos, end = 0, len(data)
    while pos < end:
        key, pos = _read_varint(view, pos, end)
        if key != (_TRACE_PACKET << 3) | _LEN:
            raise TruncatedError(f"at byte {pos}: not a trace packet")
        size, pos = _read_varint(view, pos, end)
        if pos + size > end:
            raise TruncatedError(f"the last packet ends {pos + size - end} bytes past the end of the data")
        yield bytes(view[pos : pos + size])
        pos += size


def retime(packet: bytes, mapping: Callable[[int], int]) -> bytes:
    """``packet`` with its timestamp replaced by ``mapping(timestamp)``; every other field
    is kept byte for byte. A packet without a timestamp comes back as the same object."""
    end = len(packet)
    pos = 0
    while pos < end:
        start = pos
        key, pos = _read_varint(packet, pos, end)
        wire = key & 7
        if key == (_P_TIMESTAMP << 3) | _VARINT:
            ts, pos = _read_varint(packet, pos, end)
            return packet[:start] + _int_field(_P_TIMESTAMP, mapping(ts)) + packet[pos:]
        if wire == _VARINT:
            _, pos = _read_varint(packet, pos, end)
        elif wire == _LEN:
            size, pos = _read_varint(packet, pos, end)
            pos += size
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise TruncatedError(f"wire type {wire} is not one a trace holds")
    return packet


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _decode_track(data: bytes) -> Track:
    track = Track(0, "")
    for field, value in _fields(data, 0, len(data)):
        if field == _TD_UUID:
            track.uuid = value  # type: ignore[assignment]
        elif field == _TD_NAME:
            track.name = value.decode("utf-8")  # type: ignore[union-attr]
        elif field == _TD_PARENT:
            track.parent = value  # type: ignore[assignment]
        elif field == _TD_COUNTER:
            track.counter = True
        elif field == _TD_PROCESS:
            labels = []
            for f, v in _fields(value, 0, len(value)):  # type: ignore[arg-type]
                if f == _PD_PID:
                    track.pid = _signed(v)  # type: ignore[arg-type]
                elif f == _PD_LABELS:
                    labels.append(v.decode("utf-8"))  # type: ignore[union-attr]
            track.labels = tuple(labels)
    return track


def _decode_event(ts: int, data: bytes) -> Event:
    event = Event(ts, 0, 0)
    for field, value in _fields(data, 0, len(data)):
        if field == _TE_TYPE:
            event.kind = value  # type: ignore[assignment]
        elif field == _TE_TRACK:
            event.track = value  # type: ignore[assignment]
        elif field == _TE_NAME:
            event.name = value.decode("utf-8")  # type: ignore[union-attr]
        elif field == _TE_COUNTER:
            event.value = _signed(value)  # type: ignore[arg-type]
        elif field == _TE_ANNOTATIONS:
            name, arg = "", None  # type: str, int | str | None
            for f, v in _fields(value, 0, len(value)):  # type: ignore[arg-type]
                if f == _DA_NAME:
                    name = v.decode("utf-8")  # type: ignore[union-attr]
                elif f == _DA_INT:
                    arg = _signed(v)  # type: ignore[arg-type]
                elif f == _DA_STRING:
                    arg = v.decode("utf-8")  # type: ignore[union-attr]
            if arg is not None:
                event.args[name] = arg
    return event


def decode_packet(packet: bytes) -> tuple[int, Track | Event | None]:
    """(sequence id, the packet's Track or Event, or None for another kind of packet)."""
    ts, seq, track_event, descriptor = 0, 0, None, None
    for field, value in _fields(packet, 0, len(packet)):
        if field == _P_TIMESTAMP:
            ts = value  # type: ignore[assignment]
        elif field == _P_SEQUENCE_ID:
            seq = value  # type: ignore[assignment]
        elif field == _P_TRACK_EVENT:
            track_event = value
        elif field == _P_TRACK_DESCRIPTOR:
            descriptor = value
    if descriptor is not None:
        return seq, _decode_track(descriptor)  # type: ignore[arg-type]
    if track_event is not None:
        return seq, _decode_event(ts, track_event)  # type: ignore[arg-type]
    return seq, None
