"""One rank's trace, streamed to a Perfetto file as the tracer is drained.

The file starts with the rank's process track, whose labels name the run, the rank and the
number of ranks (``zehal.run=…``, ``zehal.rank=…``, ``zehal.size=…``); the merge checks
them. Below it: one track per engine and per queue (each command a slice on both), a queue
depth counter per engine, a dropped-records counter for the device, a track per other
device event (instants), a track per thread of host API calls (slices), and the clock
samples of :mod:`zehal.clock_sync` as instants named ``zehal.clock_sync`` on the process
track. A rank that finishes writes an instant named ``zehal.end``; a file without it comes
from a rank that stopped early, and holds what the rank flushed until then.

Times in the file are on the rank's own clock (:class:`zehal.clock_sync.LocalClock`); the
merge maps them to rank 0's.
"""

from __future__ import annotations

import os
import socket
import threading
from typing import Any

from .clock_sync import LocalClock, Sample
from .perfetto_writer import COUNTER, INSTANT, SLICE_BEGIN, SLICE_END, Event, PacketWriter, Track

__all__ = ["RankTrace", "CLOCK_SYNC", "END", "rank_uuid"]

#: Name of the instants that hold clock samples (args local_ns, reference_ns, error_ns).
CLOCK_SYNC = "zehal.clock_sync"
#: Name of the instant a rank writes when it finishes.
END = "zehal.end"

_COMMAND_NAMES = {0: "copy", 1: "fill", 2: "barrier", 3: "kernel"}
_ENGINE_GROUPS = {0: "compute", 1: "copy"}
_COMMAND_FIELDS = ("BytesMoved", "EngineOrdinal", "EngineIndex", "QueueId", "CommandType", "QueueDepth")


def rank_uuid(rank: int, local: int) -> int:
    """The uuid of track ``local`` of ``rank``: unique across the ranks of a run."""
    return ((rank + 1) << 32) | local


def _engine_label(ordinal: int | None, index: int | None, sub: int | None) -> str:
    group = _ENGINE_GROUPS.get(ordinal, f"group {ordinal}") if ordinal is not None else "engine"
    label = f"{group} engine {index if index is not None else '?'}"
    return label + (f" (sub-device {sub})" if sub is not None else "")


class RankTrace:
    """The streamed trace of rank ``rank`` of ``size`` in run ``run_id``, written to ``path``.

    Thread-safe: the tracer's reader thread adds records while the main thread adds clock
    samples.
    """

    def __init__(self, path: str | os.PathLike, rank: int, size: int, run_id: str, clock: LocalClock) -> None:
        self.rank = rank
        self.clock = clock
        self._lock = threading.Lock()
        self._writer = PacketWriter(path, sequence_id=rank + 1)
        self._tracks: dict[Any, int] = {}
        self._command: dict[str, Any] | None = None
        self._dropped = -1
        self.process = rank_uuid(rank, 0)
        labels = (
            f"zehal.run={run_id}",
            f"zehal.rank={rank}",
            f"zehal.size={size}",
            f"host={socket.gethostname()}",
            f"pid={os.getpid()}",
        )
        self._writer.track(Track(self.process, f"rank {rank}", pid=rank + 1, labels=labels))
        self._writer.flush()

    @property
    def path(self) -> str:
        """The file written."""
        return self._writer.path

    def _track(self, key: Any, name: str, counter: bool = False) -> int:
        uuid = self._tracks.get(key)
        if uuid is None:
            uuid = rank_uuid(self.rank, len(self._tracks) + 1)
            self._tracks[key] = uuid
            self._writer.track(Track(uuid, name, parent=self.process, counter=counter))
        return uuid

    def add_entries(self, entries: Any, names: list[str], dropped: int, now_ns: int) -> None:
        """Adds decoded tracer ``entries`` (metric names ``names``), the tracer's count of
        ``dropped`` records at ``now_ns`` (unskewed host ns), and flushes."""
        values = entries["value"].tolist()
        stamps = entries["timestamp"].tolist()
        index = entries["metric_index"].tolist()
        on_sub = entries["on_subdevice"].tolist()
        sub_id = entries["subdevice_id"].tolist()
        local = self.clock.local
        with self._lock:
            for k in range(len(values)):
                i = index[k]
                name = names[i] if i < len(names) else f"metric {i}"
                sub = sub_id[k] if on_sub[k] else None
                ts = local(stamps[k])
                if name == "CommandStart":
                    self._close_command()
                    self._command = {"start": ts, "id": values[k], "subdevice": sub}
                elif self._command is not None and name == "CommandEnd":
                    self._command["end"] = ts
                elif self._command is not None and name in _COMMAND_FIELDS:
                    self._command[name] = values[k]
                else:
                    where = f" (sub-device {sub})" if sub is not None else ""
                    track = self._track(("metric", name, sub), name + where)
                    args: dict[str, int | str] = {"value": values[k]}
                    if name == "ExportWrite":
                        args["first_word"] = f"0x{values[k] & 0xFFFFFFFF:08x}"
                    self._writer.event(Event(ts, INSTANT, track, name, args=args))
            if dropped != self._dropped:
                self._dropped = dropped
                track = self._track("dropped", "dropped records", counter=True)
                self._writer.event(Event(local(now_ns), COUNTER, track, value=dropped))
            self._writer.flush()

    def _close_command(self) -> None:
        command, self._command = self._command, None
        if command is None:
            return
        start = command["start"]
        end = max(command.get("end", start), start)
        ordinal, engine, sub = command.get("EngineOrdinal"), command.get("EngineIndex"), command.get("subdevice")
        kind = command.get("CommandType")
        name = _COMMAND_NAMES.get(kind, f"command {kind}") if kind is not None else "command"
        fields = ("BytesMoved", "QueueId", "QueueDepth", "id")
        args: dict[str, int | str] = {k: command[k] for k in fields if k in command}
        label = _engine_label(ordinal, engine, sub)
        queue = command.get("QueueId")
        for track in (
            self._track(("engine", ordinal, engine, sub), label),
            self._track(("queue", queue), f"queue {queue}" if queue is not None else "queue ?"),
        ):
            self._writer.event(Event(start, SLICE_BEGIN, track, name, args=args))
            self._writer.event(Event(end, SLICE_END, track))
        if "QueueDepth" in command:
            track = self._track(("depth", ordinal, engine, sub), "queue depth " + label, counter=True)
            self._writer.event(Event(end, COUNTER, track, value=command["QueueDepth"]))

    def add_api_calls(self, calls: list[tuple[str, int, int, int]]) -> None:
        """Adds host API calls ``(name, start ns, end ns, thread id)`` (unskewed host ns),
        each a slice on the track of its thread, and flushes."""
        if not calls:
            return
        local = self.clock.local
        with self._lock:
            for name, start, end, thread in calls:
                track = self._track(("api", thread), f"host API calls (thread {thread:#x})")
                self._writer.event(Event(local(start), SLICE_BEGIN, track, name))
                self._writer.event(Event(local(end), SLICE_END, track))
            self._writer.flush()

    def add_clock_sample(self, sample: Sample, which: str) -> None:
        """Writes clock sample ``sample`` (``which``: "start" or "end") and flushes."""
        args: dict[str, int | str] = {
            "local_ns": sample.local_ns,
            "reference_ns": sample.reference_ns,
            "error_ns": sample.error_ns,
            "which": which,
        }
        with self._lock:
            self._writer.event(Event(sample.local_ns, INSTANT, self.process, CLOCK_SYNC, args=args))
            self._writer.flush()

    def finish(self) -> None:
        """Writes the last command and the end marker, and closes the file."""
        with self._lock:
            self._close_command()
            self._writer.event(Event(self.clock.now(), INSTANT, self.process, END))
            self._writer.close()
