"""A merged Perfetto trace in the other formats users read: Chrome trace JSON (small traces,
``chrome://tracing``), OTF2 (Vampir and the Score-P tools, through the ``otf2`` package)
and a PNG picture of the tracks.
"""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple

from .perfetto_writer import COUNTER, INSTANT, SLICE_BEGIN, SLICE_END, Event, Track, decode_packet, iter_packets

__all__ = ["Process", "Slice", "load", "chrome_json", "write_otf2", "convert", "FORMATS"]

#: Output formats of ``zehal trace``.
FORMATS = ("perfetto", "json", "otf2")


class Slice(NamedTuple):
    """A slice of a track: ``name``, ``start`` and ``end`` ns, debug annotations ``args``."""

    name: str
    start: int
    end: int
    args: dict


class Process(NamedTuple):
    """One rank of a merged trace: its process ``track``, its other ``tracks`` in order, and
    per track uuid its ``slices``, ``counters`` [(ns, value)] and ``instants`` [Event]."""

    track: Track
    tracks: list[Track]
    slices: dict[int, list[Slice]]
    counters: dict[int, list[tuple[int, int]]]
    instants: dict[int, list[Event]]


def load(data: bytes) -> list[Process]:
    """The processes (ranks) of Perfetto ``data``, in the order of their process tracks."""
    processes: dict[int, Process] = {}
    owner: dict[int, Process] = {}
    open_slices: dict[int, list[Event]] = {}
    for packet in iter_packets(data):
        _, item = decode_packet(packet)
        if isinstance(item, Track):
            if item.pid is not None:
                process = Process(item, [], {}, {}, {})
                processes[item.uuid] = process
                owner[item.uuid] = process
            elif item.parent in owner:
                owner[item.uuid] = owner[item.parent]
                owner[item.uuid].tracks.append(item)
        elif isinstance(item, Event) and item.track in owner:
            process = owner[item.track]
            if item.kind == SLICE_BEGIN:
                open_slices.setdefault(item.track, []).append(item)
            elif item.kind == SLICE_END and open_slices.get(item.track):
                begin = open_slices[item.track].pop()
                process.slices.setdefault(item.track, []).append(Slice(begin.name, begin.ts, item.ts, begin.args))
            elif item.kind == COUNTER:
                process.counters.setdefault(item.track, []).append((item.ts, item.value))
            elif item.kind == INSTANT:
                process.instants.setdefault(item.track, []).append(item)
    return list(processes.values())


def chrome_json(processes: list[Process]) -> dict:
    """The Chrome trace event JSON (a dict) of ``processes``: a process per rank, a thread
    per track."""
    events: list[dict] = []
    for p in processes:
        pid = p.track.pid
        events.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": p.track.name}})
        labels = ",".join(p.track.labels)
        events.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_labels", "args": {"labels": labels}})
        tids = {p.track.uuid: 0}
        for k, t in enumerate(p.tracks, start=1):
            tids[t.uuid] = k
            events.append({"ph": "M", "pid": pid, "tid": k, "name": "thread_name", "args": {"name": t.name}})
        for uuid, slices in p.slices.items():
            for s in slices:
                events.append(
                    {
                        "ph": "X",
                        "pid": pid,
                        "tid": tids[uuid],
                        "name": s.name,
                        "ts": s.start / 1000.0,
                        "dur": (s.end - s.start) / 1000.0,
                        "args": s.args,
                    }  # fmt: skip
                )
        names = {t.uuid: t.name for t in p.tracks}
        for uuid, counters in p.counters.items():
            for ts, value in counters:
                events.append(
                    {
                        "ph": "C",
                        "pid": pid,
                        "tid": tids[uuid],
                        "name": names.get(uuid, "counter"),
                        "ts": ts / 1000.0,
                        "args": {"value": value},
                    }  # fmt: skip
                )
        for uuid, instants in p.instants.items():
            for e in instants:
                events.append(
                    {
                        "ph": "i",
                        "s": "t",
                        "pid": pid,
                        "tid": tids[uuid],
                        "name": e.name,
                        "ts": e.ts / 1000.0,
                        "args": e.args,
                    }  # fmt: skip
                )
    return {"traceEvents": events, "displayTimeUnit": "ns"}


def write_otf2(processes: list[Process], path: str) -> None:
    """Writes ``processes`` as an OTF2 archive in folder ``path`` (``traces.otf2`` inside):
    a location group per rank, a location per track, slices as enter/leave of regions,
    counters as metrics. Needs the ``otf2`` package (``pip install zehal[mpi]``)."""
    try:
        import otf2
    except ImportError:
        from . import _zehal

        _zehal._raise_result(0x78000003, "OTF2 output needs the otf2 package (pip install zehal[mpi])")
    with otf2.writer.open(path, timer_resolution=1_000_000_000) as trace:
        root = trace.definitions.system_tree_node("zehal run")
        regions: dict[str, Any] = {}
        metrics: dict[str, Any] = {}
        for p in processes:
            group = trace.definitions.location_group(p.track.name, system_tree_parent=root)
            for t in [p.track, *p.tracks]:
                timeline: list[tuple[int, int, Any]] = []  # (ns, order, action)
                for s in p.slices.get(t.uuid, []):
                    region = regions.setdefault(s.name, trace.definitions.region(s.name))
                    timeline.append((s.start, 1, ("enter", region)))
                    timeline.append((s.end, 0, ("leave", region)))
                for ts, value in p.counters.get(t.uuid, []):
                    metric = metrics.setdefault(t.name, trace.definitions.metric(t.name))
                    timeline.append((ts, 2, ("metric", metric, value)))
                for e in p.instants.get(t.uuid, []):
                    region = regions.setdefault(e.name, trace.definitions.region(e.name))
                    timeline.append((e.ts, 1, ("enter", region)))
                    timeline.append((e.ts, 3, ("leave", region)))
                if not timeline:
                    continue
                writer = trace.event_writer(t.name, group=group)
                for ts, _, action in sorted(timeline, key=lambda x: (x[0], x[1])):
                    if action[0] == "enter":
                        writer.enter(ts, action[1])
                    elif action[0] == "leave":
                        writer.leave(ts, action[1])
                    else:
                        writer.metric(ts, action[1], action[2])


def convert(perfetto_path: str | os.PathLike, output: str | os.PathLike, fmt: str) -> None:
    """Writes the merged Perfetto trace at ``perfetto_path`` to ``output`` in ``fmt`` (json
    or otf2)."""
    with open(perfetto_path, "rb") as f:
        processes = load(f.read())
    if fmt == "json":
        with open(output, "w", encoding="utf-8") as f:
            json.dump(chrome_json(processes), f)
    elif fmt == "otf2":
        write_otf2(processes, os.fspath(output))
    else:
        raise ValueError(f"convert: format {fmt!r} is not one of json, otf2")
