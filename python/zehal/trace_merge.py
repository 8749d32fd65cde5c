"""One timeline from the per-rank files of a run (:mod:`zehal.rank_trace`).

Each rank's file is read, checked and rewritten on rank 0's clock on its own: in parallel
processes (:func:`merge_files`, ``zehal trace --merge DIR``) or on the ranks themselves
(:func:`merge_over_mpi`, where an exclusive prefix sum of the parts' sizes gives each rank
the place of its part in the merged file, which it writes itself). Nothing goes through
rank 0 but sizes.

A merge refuses, naming the file: a file that ends inside a packet or is not a rank trace,
two files of one rank, files of different runs, and a run with a rank's file missing.
A rank that stopped early (no end marker) is merged with what it flushed, its clock mapped
by its start offset alone, and its process labelled ``zehal.complete=no``.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
from typing import Any, NamedTuple, Sequence

from .clock_sync import ClockModel, Sample
from .perfetto_writer import (
    INSTANT,
    Event,
    Track,
    TruncatedError,
    decode_packet,
    encode_event,
    encode_track,
    retime,
    wrap_packet,
)
from .perfetto_writer import iter_packets as _iter_packets
from .rank_trace import CLOCK_SYNC, END

__all__ = ["TraceFileError", "RankSummary", "Merged", "merge_files", "merge_over_mpi", "ALIGNMENT"]

#: Name of the instant the merge writes on each rank's process track: the clock estimate
#: (args offset_ns, drift_ppb, error_ns, samples).
ALIGNMENT = "zehal.clock_alignment"


class TraceFileError(ValueError):
    """A merge input that is malformed, missing or from another run; names the file."""


class RankSummary(NamedTuple):
    """What the merge learnt of one rank: its file, run, rank, number of ranks, whether it
    finished, its clock estimate and how many events it held."""

    path: str
    run: str
    rank: int
    size: int
    complete: bool
    offset_ns: int
    drift_ppb: int
    error_ns: int
    events: int


class Merged(NamedTuple):
    """A merged trace: the Perfetto ``data`` and a summary of each of its ``ranks``."""

    data: bytes
    ranks: list[RankSummary]


def _labels(track: Track) -> dict[str, str]:
    return dict(label.split("=", 1) for label in track.labels if "=" in label)


def _read(path: str) -> tuple[Track, list[bytes], list[Any]]:
    """The process track of a rank file, its other packets (bytes), and the tracks and
    events among them that the merge looks into (those naming ``zehal.``); TraceFileError
    when the file is not a whole rank trace."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TraceFileError(f"{path}: cannot read: {e.strerror}") from None
    packets: list[bytes] = []
    marked: list[Any] = []
    head: Any = None
    try:
        for packet in _iter_packets(data):
            if head is None:
                head = decode_packet(packet)[1]
                if not _is_rank_head(head):
                    break
                continue
            packets.append(packet)
            if b"zehal." in packet:  # a clock sample or the end marker: the rest need no decoding
                marked.append(decode_packet(packet)[1])
    except (TruncatedError, UnicodeDecodeError) as e:
        raise TraceFileError(f"{path}: truncated or corrupt ({e})") from None
    if not _is_rank_head(head):
        raise TraceFileError(f"{path}: not a zehal rank trace (no rank process track at its start)")
    try:
        labels = _labels(head)
        int(labels["zehal.rank"]), int(labels["zehal.size"])
    except (KeyError, ValueError):
        raise TraceFileError(f"{path}: its process track lacks a valid zehal.rank or zehal.size") from None
    return head, packets, marked


def _is_rank_head(item: Any) -> bool:
    return isinstance(item, Track) and item.pid is not None and "zehal.run" in _labels(item)


def _model(path: str, items: list[Any], rank: int) -> ClockModel:
    samples: dict[str, Sample] = {}
    for x in items:
        if isinstance(x, Event) and x.name == CLOCK_SYNC:
            a = x.args
            try:
                samples[str(a["which"])] = Sample(int(a["local_ns"]), int(a["reference_ns"]), int(a["error_ns"]))
            except (KeyError, ValueError):
                raise TraceFileError(f"{path}: a clock sample lacks its fields") from None
    if "start" not in samples:
        if rank == 0:
            return ClockModel(Sample(0, 0, 0))
        raise TraceFileError(f"{path}: rank {rank} has no clock sample: its times cannot be aligned")
    return ClockModel(samples["start"], samples.get("end"))


def _convert(path: str, model: ClockModel | None = None) -> tuple[bytes, RankSummary]:
    """One rank file on rank 0's clock (``model``: the rank's own estimate, else the one
    its samples give), as Perfetto bytes, and its summary. Packets are copied with only
    their timestamp rewritten."""
    head, packets, marked = _read(path)
    labels = _labels(head)
    rank, size = int(labels["zehal.rank"]), int(labels["zehal.size"])
    if model is None:
        model = _model(path, marked, rank)
    complete = any(isinstance(x, Event) and x.name == END for x in marked)
    seq = rank + 1
    head.labels = head.labels + (() if complete else ("zehal.complete=no",))
    to_ref = model.to_reference
    out = [encode_track(head, seq)]
    events = 0
    for packet in packets:
        moved = retime(packet, to_ref)
        events += moved is not packet  # only events carry a timestamp
        out.append(wrap_packet(moved))
    args: dict[str, int | str] = {
        "offset_ns": model.offset_ns,
        "drift_ppb": model.drift_ppb,
        "error_ns": model.error_ns,
        "samples": 2 if model.end is not None else 1,
    }
    out.append(encode_event(Event(to_ref(model.start.local_ns), INSTANT, head.uuid, ALIGNMENT, args=args), seq))
    summary = RankSummary(
        path, labels["zehal.run"], rank, size, complete, model.offset_ns, model.drift_ppb, model.error_ns, events
    )
    return b"".join(out), summary


def _check_run(summaries: Sequence[RankSummary], where: str) -> None:
    """TraceFileError unless the summaries are every rank of one run, each once."""
    first = summaries[0]
    by_rank: dict[int, RankSummary] = {}
    for s in summaries:
        if s.run != first.run:
            raise TraceFileError(
                f"{s.path}: from run {s.run}, but {first.path} is from run {first.run} (two runs mixed)"
            )
        if s.size != first.size:
            raise TraceFileError(f"{s.path}: says {s.size} ranks, but {first.path} says {first.size}")
        if s.rank in by_rank:
            raise TraceFileError(f"{s.path}: rank {s.rank} again (also {by_rank[s.rank].path})")
        by_rank[s.rank] = s
    for rank in range(first.size):
        if rank not in by_rank:
            raise TraceFileError(f"{where}: {rank_file_name(rank)} is missing (rank {rank} of {first.size})")


def rank_file_name(rank: int) -> str:
    """The name of ``rank``'s file in the folder of a run's rank files."""
    return f"rank-{rank:05d}.pftrace"


def _inputs(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> tuple[list[str], str]:
    if isinstance(paths, (str, os.PathLike)) and os.path.isdir(paths):
        folder = os.fspath(paths)
        found = sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".pftrace"))
        if not found:
            raise TraceFileError(f"{folder}: holds no rank trace (*.pftrace)")
        return found, folder
    if isinstance(paths, (str, os.PathLike)):
        raise TraceFileError(f"{os.fspath(paths)}: not a folder of rank traces")
    listed = [os.fspath(p) for p in paths]
    if not listed:
        raise TraceFileError("merge: no input files")
    return listed, os.path.dirname(listed[0]) or "."


def merge_files(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    output: str | os.PathLike | None = None,
    processes: int | None = None,
) -> Merged:
    """Merges the rank files ``paths`` (or every ``*.pftrace`` of a folder) into one
    Perfetto trace, written to ``output`` unless None; each file is converted in its own
    worker process (``processes`` of them; None: one per CPU, 1: in this process)."""
    files, where = _inputs(paths)
    workers = min(processes or os.cpu_count() or 1, len(files))
    if workers <= 1:
        parts = [_convert(p) for p in files]
    else:
        context = multiprocessing.get_context("spawn")  # no fork of a process that runs threads
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
            parts = list(pool.map(_convert, files))
    summaries = [s for _, s in parts]
    _check_run(summaries, where)
    order = sorted(range(len(parts)), key=lambda k: summaries[k].rank)
    data = b"".join(parts[k][0] for k in order)
    if output is not None:
        with open(output, "wb") as f:
            f.write(data)
    return Merged(data, [summaries[k] for k in order])


def merge_over_mpi(comm: Any, path: str, model: ClockModel, output: str) -> RankSummary:
    """Collective over ``comm``: each rank converts its own file ``path`` with its clock
    ``model`` and writes the result at its place in ``output``. Returns its summary."""
    data, summary = _convert(path, model)
    summaries = comm.allgather(summary)
    _check_run(summaries, os.path.dirname(path) or ".")
    offset = comm.exscan(len(data)) or 0
    total = comm.allreduce(len(data))
    if comm.Get_rank() == 0:
        with open(output, "wb") as f:
            f.truncate(total)
    comm.Barrier()
    fd = os.open(output, os.O_WRONLY)
    try:
        view = memoryview(data)
        while view:
            written = os.pwrite(fd, view, offset)
            view, offset = view[written:], offset + written
    finally:
        os.close(fd)
    comm.Barrier()
    return summary
