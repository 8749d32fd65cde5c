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

import bisect
import concurrent.futures
import contextlib
import multiprocessing
import os
from typing import Any, NamedTuple, Sequence

import numpy as np

from .clock_sync import ClockModel, Sample
from .perfetto_writer import (
    INSTANT,
    Event,
    Track,
    TruncatedError,
    _read_varint,
    decode_packet,
    encode_event,
    encode_track,
    retime,
    wrap_packet,
)
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
    """A merged trace: the Perfetto ``data`` (empty when it went to a file) and a summary
    of each of its ``ranks``."""

    data: bytes
    ranks: list[RankSummary]


def _labels(track: Track) -> dict[str, str]:
    return dict(label.split("=", 1) for label in track.labels if "=" in label)


class _RankFile(NamedTuple):
    """A rank file read: its process track, its bytes, where each packet after the head
    starts and how long it is, and the packets naming ``zehal.`` (clock samples, the end
    marker), decoded."""

    head: Track
    data: bytes
    body: int  # where the packets after the head begin
    starts: list[int]
    lengths: list[int]
    marked: list[Any]


def _packet_bounds(data: bytes) -> tuple[list[int], list[int]]:
    """Where the TracePacket bytes of each packet of ``data`` start, and their lengths."""
    starts: list[int] = []
    lengths: list[int] = []
    pos, end = 0, len(data)
    packet_key = (1 << 3) | 2  # Trace.packet, length-delimited
    while pos < end:
        if data[pos] != packet_key:
            raise TruncatedError(f"at byte {pos}: not a trace packet")
        size = data[pos + 1] if pos + 1 < end else 0x80
        if size < 0x80:
            pos += 2
        else:
            size, pos = _read_varint(data, pos + 1, end)
        if pos + size > end:
            raise TruncatedError(f"the last packet ends {pos + size - end} bytes past the end of the data")
        starts.append(pos)
        lengths.append(size)
        pos += size
    return starts, lengths


def _read(path: str) -> _RankFile:
    """The rank file at ``path``; TraceFileError when it is not a whole rank trace."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TraceFileError(f"{path}: cannot read: {e.strerror}") from None
    try:
        starts, lengths = _packet_bounds(data)
        head = decode_packet(data[starts[0] : starts[0] + lengths[0]])[1] if starts else None
        if not _is_rank_head(head):
            raise TraceFileError(f"{path}: not a zehal rank trace (no rank process track at its start)")
        marked: list[Any] = []
        where = data.find(b"zehal.", starts[0] + lengths[0])
        while where >= 0:
            k = bisect.bisect_right(starts, where) - 1
            marked.append(decode_packet(data[starts[k] : starts[k] + lengths[k]])[1])
            where = data.find(b"zehal.", starts[k] + lengths[k])
    except (TruncatedError, UnicodeDecodeError) as e:
        raise TraceFileError(f"{path}: truncated or corrupt ({e})") from None
    assert isinstance(head, Track)  # _is_rank_head said so
    try:
        labels = _labels(head)
        int(labels["zehal.rank"]), int(labels["zehal.size"])
    except (KeyError, ValueError):
        raise TraceFileError(f"{path}: its process track lacks a valid zehal.rank or zehal.size") from None
    body = starts[0] + lengths[0]
    return _RankFile(head, data, body, starts[1:], lengths[1:], marked)


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


_MAX_VARINT = 10  # bytes of the longest varint (a 64-bit value)


def _retime_in_place(rf: _RankFile, model: ClockModel) -> tuple[bytes, int] | None:
    """The packets after the head with every timestamp mapped by ``model``, rewritten in
    place, and the number of events. Applies where zehal wrote the file: the timestamp
    first in each event packet and, mapped, a varint as long as before (so no packet
    changes size); None elsewhere."""
    buf = np.frombuffer(rf.data, dtype=np.uint8)
    starts = np.asarray(rf.starts, dtype=np.int64)
    lengths = np.asarray(rf.lengths, dtype=np.int64)
    is_event = buf[starts] == (8 << 3)  # TracePacket.timestamp, a varint
    first, room = starts[is_event] + 1, lengths[is_event] - 1  # where each timestamp starts
    if len(first) == 0:
        return rf.data[rf.body :], 0
    # Decode the varints byte column by byte column (zero bytes past the data).
    padded = np.concatenate([buf, np.zeros(_MAX_VARINT, dtype=np.uint8)])
    local = np.zeros(len(first), dtype=np.int64)
    last = np.full(len(first), -1, dtype=np.int64)  # index of each varint's last byte
    for k in range(9):  # up to 63 bits: the times of a clock
        byte = padded[first + k].astype(np.int64)
        open_ = last < 0
        local |= np.where(open_, (byte & 0x7F) << (7 * k), 0)
        last = np.where(open_ & (byte < 0x80), k, last)
        if not np.any(last < 0):
            break
    if np.any(last < 0) or np.any(last >= room):
        return None
    s = model.start
    mapped = local + (s.reference_ns - s.local_ns)
    if model.end is not None:
        # ClockModel.to_reference's integer arithmetic, where its products fit 63 bits.
        span = model.end.local_ns - s.local_ns
        change = (model.end.reference_ns - model.end.local_ns) - (s.reference_ns - s.local_ns)
        since = local - s.local_ns
        if abs(change) * int(np.abs(since).max()) >= 1 << 62:
            return None
        mapped += change * since // span
    needed = np.zeros(len(first), dtype=np.int64)  # last byte index of each mapped varint
    for k in range(1, 9):
        needed += mapped >= (1 << (7 * k))
    if np.any(mapped < 0) or np.any(needed != last):
        return None
    out = buf.copy()
    for k in range(int(last.max()) + 1):
        inside = k <= last
        digit = (mapped[inside] >> (7 * k)) & 0x7F
        out[first[inside] + k] = (digit | np.where(last[inside] > k, 0x80, 0)).astype(np.uint8)
    return out[rf.body :].tobytes(), int(len(first))


def _convert(path: str, model: ClockModel | None = None) -> tuple[bytes, RankSummary]:
    """One rank file on rank 0's clock (``model``: the rank's own estimate, else the one
    its samples give), as Perfetto bytes, and its summary. Packets are copied with only
    their timestamp rewritten."""
    rf = _read(path)
    head = rf.head
    labels = _labels(head)
    rank, size = int(labels["zehal.rank"]), int(labels["zehal.size"])
    if model is None:
        model = _model(path, rf.marked, rank)
    complete = any(isinstance(x, Event) and x.name == END for x in rf.marked)
    seq = rank + 1
    head.labels = head.labels + (() if complete else ("zehal.complete=no",))
    out = [encode_track(head, seq)]
    fast = _retime_in_place(rf, model)
    if fast is not None:
        out.append(fast[0])
        events = fast[1]
    else:
        events = 0
        for start, length in zip(rf.starts, rf.lengths, strict=True):
            packet = rf.data[start : start + length]
            moved = retime(packet, model.to_reference)
            events += moved is not packet  # only events carry a timestamp
            out.append(wrap_packet(moved))
    args: dict[str, int | str] = {
        "offset_ns": model.offset_ns,
        "drift_ppb": model.drift_ppb,
        "error_ns": model.error_ns,
        "samples": 2 if model.end is not None else 1,
    }
    start_ts = model.to_reference(model.start.local_ns)
    out.append(encode_event(Event(start_ts, INSTANT, head.uuid, ALIGNMENT, args=args), seq))
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


def _convert_to_file(path: str, part: str) -> tuple[str, RankSummary]:
    """Converts rank file ``path`` into the file ``part``; a worker's task."""
    data, summary = _convert(path)
    with open(part, "wb") as f:
        f.write(data)
    return part, summary


def merge_files(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    output: str | os.PathLike | None = None,
    processes: int | None = None,
) -> Merged:
    """Merges the rank files ``paths`` (or every ``*.pftrace`` of a folder) into one
    Perfetto trace, written to ``output`` (then the result's ``data`` is empty) or, for
    None, returned. Each file is converted in its own worker process (``processes`` of them;
    None: one per CPU, 1: in this process); a worker writes its part into a file beside the
    output, and the parts are joined by the kernel (``sendfile``)."""
    files, where = _inputs(paths)
    workers = min(processes or os.cpu_count() or 1, len(files))
    if output is None:
        tasks: Any = (_convert, files)
    else:
        out = os.fspath(output)
        tasks = (_convert_to_file, files, [f"{out}.part-{k}" for k in range(len(files))])
    try:
        if workers <= 1:
            parts = list(map(*tasks))
        else:
            context = multiprocessing.get_context("spawn")  # no fork of a process that runs threads
            with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
                parts = list(pool.map(*tasks))
        summaries = [s for _, s in parts]
        _check_run(summaries, where)
        order = sorted(range(len(parts)), key=lambda k: summaries[k].rank)
        if output is None:
            return Merged(b"".join(parts[k][0] for k in order), [summaries[k] for k in order])
        _join([parts[k][0] for k in order], out)
        return Merged(b"", [summaries[k] for k in order])
    finally:
        if output is not None:
            for part in tasks[2]:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(part)


def _join(parts: list[str], output: str) -> None:
    """Writes the files ``parts`` one after the other into ``output``, replacing it whole."""
    partial = output + ".partial"
    with open(partial, "wb") as out:
        for part in parts:
            with open(part, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                sent = 0
                while sent < size:
                    sent += os.sendfile(out.fileno(), f.fileno(), sent, size - sent)
    os.replace(partial, output)


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
