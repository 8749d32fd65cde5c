"""Host clocks of MPI ranks aligned to rank 0's.

Each rank's host clock (``CLOCK_MONOTONIC_RAW``, the clock of zehal's synchronized
timestamps) runs with its own offset and rate. :func:`exchange` measures, with ping-pong
messages against rank 0, one *sample*: a moment of the rank's clock, rank 0's clock at that
moment, and an error bound (half the round trip of the fastest exchange: rank 0's reading
lies inside the round trip). A sample at the start and one at the end of a run give a
:class:`ClockModel`: the offset at each end and a linear drift between them, as Open MPI's
``mpisync`` does. A rank that stopped before its end sample keeps the start offset alone.

Test-only: ``ZEHAL_TEST_CLOCK_SKEW`` skews the clock that the tracer reads on each rank, so
tests can give ranks clocks seconds apart and drifting. Its value is a comma-separated list,
entry ``k`` for rank ``k``, each ``offset_ns:drift_ppm`` (an empty entry: no skew).
"""

from __future__ import annotations

import os
import time
from typing import Any, NamedTuple

__all__ = ["ENV_SKEW", "LocalClock", "Sample", "ClockModel", "exchange"]

#: Test-only environment variable: per-rank offset (ns) and drift (ppm) of the traced clock.
ENV_SKEW = "ZEHAL_TEST_CLOCK_SKEW"

_TAG = 0x7A51  # message tag of the clock exchange


def _skew_of(rank: int) -> tuple[int, int]:
    """(offset ns, drift in parts per billion) of ``rank`` from ``ZEHAL_TEST_CLOCK_SKEW``."""
    text = os.environ.get(ENV_SKEW, "")
    entries = text.split(",") if text else []
    if rank >= len(entries) or not entries[rank].strip():
        return 0, 0
    try:
        offset, drift = entries[rank].split(":")
        return int(offset), round(float(drift) * 1000)
    except ValueError:
        raise ValueError(f"{ENV_SKEW}: entry {rank} {entries[rank]!r} is not offset_ns:drift_ppm") from None


class LocalClock:
    """A rank's host clock in ns: ``CLOCK_MONOTONIC_RAW``, skewed where the test-only
    ``ZEHAL_TEST_CLOCK_SKEW`` says so. :meth:`local` maps a reading of the unskewed clock
    (a decoded device timestamp, say) to this clock."""

    def __init__(self, rank: int = 0) -> None:
        self.offset_ns, self.drift_ppb = _skew_of(rank)

    def local(self, raw_ns: int) -> int:
        """``raw_ns`` (CLOCK_MONOTONIC_RAW) on this clock."""
        if not self.offset_ns and not self.drift_ppb:
            return raw_ns
        return raw_ns + self.offset_ns + raw_ns * self.drift_ppb // 1_000_000_000

    def now(self) -> int:
        """This clock now."""
        return self.local(time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW))


class Sample(NamedTuple):
    """A moment ``local_ns`` of a rank's clock, ``reference_ns`` of rank 0's clock then,
    and ``error_ns``, a bound on how far ``reference_ns`` may be off."""

    local_ns: int
    reference_ns: int
    error_ns: int


def exchange(comm: Any, clock: LocalClock, rounds: int = 32) -> Sample:
    """One sample of this rank's clock against rank 0's, over communicator ``comm``.

    Collective: every rank of ``comm`` calls it. Rank 0 serves the other ranks in turn: it
    tells one to start, then answers its ``rounds`` pings; a rank keeps the ping with the
    shortest round trip.
    """
    import numpy as np

    if rounds < 1:
        raise ValueError("exchange: rounds must be at least 1")
    rank, size = comm.Get_rank(), comm.Get_size()
    buf = np.zeros(1, dtype=np.int64)
    if rank == 0:
        for peer in range(1, size):
            comm.Send(buf, dest=peer, tag=_TAG)
            for _ in range(rounds):
                comm.Recv(buf, source=peer, tag=_TAG)
                buf[0] = clock.now()
                comm.Send(buf, dest=peer, tag=_TAG)
        now = clock.now()
        comm.Barrier()
        return Sample(now, now, 0)
    comm.Recv(buf, source=0, tag=_TAG)
    best: Sample | None = None
    for _ in range(rounds):
        t1 = clock.now()
        comm.Send(buf, dest=0, tag=_TAG)
        comm.Recv(buf, source=0, tag=_TAG)
        t2 = clock.now()
        half = (t2 - t1 + 1) // 2
        if best is None or half < best.error_ns:
            best = Sample((t1 + t2) // 2, int(buf[0]), half)
    comm.Barrier()
    return best  # type: ignore[return-value]  # rounds >= 1: set


class ClockModel:
    """Maps a rank's clock to rank 0's: the offsets of a ``start`` and an optional ``end``
    sample, linear between them (and beyond, at the same rate)."""

    def __init__(self, start: Sample, end: Sample | None = None) -> None:
        self.start = start
        self.end = end if end is not None and end.local_ns > start.local_ns else None

    @property
    def offset_ns(self) -> int:
        """Rank 0's clock minus this rank's, at the start sample."""
        return self.start.reference_ns - self.start.local_ns

    @property
    def drift_ppb(self) -> int:
        """How much faster rank 0's clock runs, in parts per billion (0 without an end)."""
        if self.end is None:
            return 0
        end_offset = self.end.reference_ns - self.end.local_ns
        return (end_offset - self.offset_ns) * 1_000_000_000 // (self.end.local_ns - self.start.local_ns)

    @property
    def error_ns(self) -> int:
        """A bound on the error of a mapped time between the samples."""
        return max(self.start.error_ns, self.end.error_ns if self.end else 0)

    def to_reference(self, local_ns: int) -> int:
        """``local_ns`` of this rank's clock on rank 0's clock."""
        offset = self.offset_ns
        if self.end is None:
            return local_ns + offset
        s, e = self.start, self.end
        span = e.local_ns - s.local_ns
        change = (e.reference_ns - e.local_ns) - offset
        return local_ns + offset + change * (local_ns - s.local_ns) // span
