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

The device's records and the host API calls are encoded by native code
(:class:`zehal._zehal.RankStream`): a thread of its own drains the tracer into the file
without the interpreter's lock, so a traced program's threads do not wait for the encoding.
This module writes the rare packets: the process track, the clock samples and the end marker.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from . import _zehal
from .clock_sync import LocalClock, Sample
from .perfetto_writer import INSTANT, Event, Track, encode_event, encode_track

__all__ = ["RankTrace", "CLOCK_SYNC", "END", "rank_uuid"]

#: Name of the instants that hold clock samples (args local_ns, reference_ns, error_ns).
CLOCK_SYNC = "zehal.clock_sync"
#: Name of the instant a rank writes when it finishes.
END = "zehal.end"


def rank_uuid(rank: int, local: int) -> int:
    """The uuid of track ``local`` of ``rank``: unique across the ranks of a run."""
    return ((rank + 1) << 32) | local


class RankTrace:
    """The streamed trace of rank ``rank`` of ``size`` in run ``run_id``, written to ``path``.

    Thread-safe: the native stream serializes what the tracer's drain thread, the API-call
    flusher and the main thread add.
    """

    def __init__(self, path: str | os.PathLike, rank: int, size: int, run_id: str, clock: LocalClock) -> None:
        self.rank = rank
        self.clock = clock
        self._sequence_id = rank + 1
        self.stream = _zehal.RankStream(os.fspath(path), rank, clock.offset_ns, clock.drift_ppb)
        self.process = rank_uuid(rank, 0)
        labels = (
            f"zehal.run={run_id}",
            f"zehal.rank={rank}",
            f"zehal.size={size}",
            f"host={socket.gethostname()}",
            f"pid={os.getpid()}",
        )
        self.stream.write(encode_track(Track(self.process, f"rank {rank}", pid=rank + 1, labels=labels), rank + 1))

    @property
    def path(self) -> str:
        """The file written."""
        return str(self.stream.path)

    def add_entries(self, entries: Any, names: list[str], dropped: int, now_ns: int) -> None:
        """Adds decoded tracer ``entries`` (a ``METRIC_ENTRY_DTYPE`` array; metric names
        ``names``), the tracer's count of ``dropped`` records at ``now_ns`` (unskewed host
        ns), and flushes. The device's own records come through :meth:`stream_tracer`; this
        is for entries decoded elsewhere."""
        self.stream.add_entries(entries, names, dropped, now_ns)

    def add_api_calls(self, calls: list[tuple[str, int, int, int]]) -> None:
        """Adds host API calls ``(name, start ns, end ns, thread id)`` (unskewed host ns),
        each a slice on the track of its thread, and flushes."""
        if calls:
            self.stream.add_api_calls(calls)

    def add_clock_sample(self, sample: Sample, which: str) -> None:
        """Writes clock sample ``sample`` (``which``: "start" or "end") and flushes."""
        args: dict[str, int | str] = {
            "local_ns": sample.local_ns,
            "reference_ns": sample.reference_ns,
            "error_ns": sample.error_ns,
            "which": which,
        }
        self.stream.write(
            encode_event(Event(sample.local_ns, INSTANT, self.process, CLOCK_SYNC, args=args), self._sequence_id)
        )

    def finish(self) -> None:
        """Stops the stream's drain (if any), writes the last command and the end marker, and
        closes the file."""
        self.stream.stop()
        self.stream.close_command()
        self.stream.write(encode_event(Event(self.clock.now(), INSTANT, self.process, END), self._sequence_id))
        self.stream.close()
