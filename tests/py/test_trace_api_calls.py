"""Host API calls in traces: the Python API's methods timed natively (``_zehal._TimedMethod``)
and written by the trace stream's own thread, with nothing of Python on the way."""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys
import threading

import pytest
import zehal
from test_trace_mpi import mpirun, parse, parse_bytes, processes_of
from zehal import _zehal, timeline
from zehal.api_calls import ApiCalls
from zehal.clock_sync import LocalClock
from zehal.rank_trace import RankTrace


def _api_tracks(path) -> dict[str, list]:
    (rank,) = processes_of(parse(path)).values()
    return {name: calls for name, calls in rank["slices"].items() if name.startswith("host API calls")}


@pytest.fixture
def copy_operands(sim):
    return sim, zehal.Area.host().mmap(4096), zehal.Area.device(sim).mmap(4096)


def test_methods_are_timed_natively_while_tracing(tmp_path, copy_operands):
    d, host, dev = copy_operands
    with timeline.record(tmp_path / "t.pftrace", device=d):
        timed = vars(zehal.Dma)["copy"]
        assert isinstance(timed, _zehal._TimedMethod) and timed.api_name == "Dma.copy"
        assert isinstance(vars(zehal.Request)["wait"], _zehal._TimedMethod)
        # The calls go to the stream's native thread: no Python thread drains them.
        assert [t.name for t in threading.enumerate() if t.name.startswith("zehal")] == []
        with zehal.Dma(d, 1, 0) as dma:
            dma.copy(dev, host).wait()
    assert not isinstance(vars(zehal.Dma)["copy"], _zehal._TimedMethod)
    (calls,) = _api_tracks(tmp_path / "t.pftrace").values()
    assert [c[2] for c in calls if c[2] in ("Dma.copy", "Request.wait")] == ["Dma.copy", "Request.wait"]


def test_a_timed_method_behaves_as_the_method(sim_backend):
    api = ApiCalls()
    original = vars(zehal.Device)["global_timestamps"]
    d = zehal.sim_device()
    api.install()
    try:
        timed = vars(zehal.Device)["global_timestamps"]
        assert timed.__wrapped__ is getattr(original, "__func__", original)
        assert timed.__name__ == "global_timestamps" and timed.__doc__ == timed.__wrapped__.__doc__
        host, ticks = d.global_timestamps()  # called through an instance
        assert host > 0 and ticks >= 0
        assert len(zehal.Device.global_timestamps(d)) == 2  # through the class, self first
        bound = d.global_timestamps
        assert len(bound()) == 2
        with pytest.raises(TypeError):
            d.global_timestamps(1, 2, 3)  # the method's own argument errors come through
        other = zehal.Area.host().mmap(64)
        with pytest.raises(zehal.InvalidArgumentError):
            zehal.Area.host().munmap(other)  # zehal's errors too
        with pytest.raises(TypeError, match="callable"):
            _zehal._TimedMethod("x", 3)
    finally:
        api.uninstall()
    assert vars(zehal.Device)["global_timestamps"] is original


def test_each_thread_has_its_own_track_and_failed_calls_count(tmp_path, sim_backend):
    d = zehal.sim_device()
    with timeline.record(tmp_path / "t.pftrace", device=d):
        idents = []
        together = threading.Barrier(2)  # both alive at once, so their idents differ

        def work() -> None:
            together.wait()
            idents.append(threading.get_ident())
            for _ in range(5):
                d.global_timestamps()

        threads = [threading.Thread(target=work) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with pytest.raises(TypeError):
            d.global_timestamps("bad")
    tracks = _api_tracks(tmp_path / "t.pftrace")
    for ident in idents:
        (calls,) = [c for name, c in tracks.items() if name == f"host API calls (thread {ident:#x})"]
        assert [c[2] for c in calls] == ["Device.global_timestamps"] * 5
        assert all(c[0] <= c[1] for c in calls)
    main = tracks[f"host API calls (thread {threading.get_ident():#x})"]
    assert "Device.global_timestamps" in [c[2] for c in main]  # the call that raised


def test_a_stream_records_api_calls_without_a_tracer(tmp_path, sim_backend):
    d = zehal.sim_device()
    trace = RankTrace(tmp_path / "r.pftrace", 0, 1, "run", LocalClock(0))
    trace.stream.start(None, 0.01, api_calls=True)
    api = ApiCalls()
    api.install()
    try:
        for _ in range(3):
            d.global_timestamps()
    finally:
        api.uninstall()
    trace.finish()
    (calls,) = _api_tracks(tmp_path / "r.pftrace").values()
    assert [c[2] for c in calls] == ["Device.global_timestamps"] * 3


def test_one_stream_records_api_calls_at_a_time(tmp_path):
    first = _zehal.RankStream(str(tmp_path / "a.pftrace"), 0)
    second = _zehal.RankStream(str(tmp_path / "b.pftrace"), 1)
    with pytest.raises(ValueError, match="api_calls"):
        second.start(None)  # nothing to drain
    first.start(None, api_calls=True)
    with pytest.raises(zehal.ObjectInUseError):
        second.start(None, api_calls=True)
    first.close()
    second.start(None, api_calls=True)  # free again
    second.close()


def test_c_api_calls_of_a_python_program_are_on_its_tracks(tmp_path, sim_backend):
    """The Python module and the C API share one core, so one log: a Python program that
    calls the C API (through ctypes) gets those calls in its trace too."""
    path = os.path.join(zehal.get_library_dir(), "libzehal.so")
    if not os.path.exists(path):
        pytest.skip("libzehal.so is not beside the package")
    capi = ctypes.CDLL(path)
    count = ctypes.c_uint32(0)
    with timeline.record(tmp_path / "c.pftrace", device=zehal.sim_device()):
        assert capi.zehal_device_count(b"sim", ctypes.byref(count)) == 0 and count.value >= 1
    assert capi.zehal_device_count(b"sim", ctypes.byref(count)) == 0  # untraced: not recorded
    (calls,) = _api_tracks(tmp_path / "c.pftrace").values()
    assert [c[2] for c in calls if c[2].startswith("zehal_")] == ["zehal_device_count"]


# --- programs without Python's trace: the Level Zero driver's entry points --------------------

# A Level Zero program on zehal's driver that never imports zehal: the driver traces it.
LEVEL_ZERO_PROGRAM = """
import ctypes
ze = ctypes.CDLL("libze_loader.so.1")
assert ze.zeInit(0) == 0, "zeInit"
count, driver = ctypes.c_uint32(1), ctypes.c_void_p()
assert ze.zeDriverGet(ctypes.byref(count), ctypes.byref(driver)) == 0 and count.value == 1
count = ctypes.c_uint32(0)
assert ze.zeDeviceGet(driver, ctypes.byref(count), None) == 0 and count.value >= 1
print("ok")
"""

_needs_loader = pytest.mark.skipif(
    ctypes.util.find_library("ze_loader") is None, reason="no Level Zero loader installed"
)


def _level_zero_env(output) -> dict[str, str]:
    env = dict(os.environ)
    env.update(ZE_ENABLE_ALT_DRIVERS=zehal.ze_driver_path(), ZEHAL_BACKEND="sim")
    for k in ("_ZEHAL_TRACE_ACTIVE_PID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"):
        env.pop(k, None)
    env.pop("ZEHAL_TRACE_OUTPUT", None)
    if output is not None:
        env["ZEHAL_TRACE_OUTPUT"] = str(output)
    return env


@_needs_loader
def test_a_level_zero_program_records_the_driver_calls(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", LEVEL_ZERO_PROGRAM],
        env=_level_zero_env(tmp_path / "ze.pftrace"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    merged = timeline.merge(tmp_path / "ze.pftrace.ranks")
    (summary,) = merged.ranks
    assert summary.complete  # the end marker, written at exit
    (rank,) = processes_of(parse_bytes(merged.data)).values()
    assert rank["labels"]["pid"] != str(os.getpid())
    (calls,) = [c for name, c in rank["slices"].items() if name.startswith("host API calls")]
    names = [c[2] for c in calls]
    for api in ("zeInit", "zeDriverGet", "zeDeviceGet"):
        assert api in names
    assert all(c[0] <= c[1] for c in calls)


@_needs_loader
def test_zehal_trace_merges_a_native_program(tmp_path):
    program = tmp_path / "ze_program.py"
    program.write_text(LEVEL_ZERO_PROGRAM)
    # Started through a shell, the command is not a Python one to zehal trace.
    out = subprocess.run(
        [sys.executable, "-m", "zehal", "trace", "-o", "run.pftrace", "--", "sh", "-c", f"{sys.executable} {program}"],
        cwd=tmp_path,
        env=_level_zero_env(None),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    (rank,) = processes_of(parse(tmp_path / "run.pftrace")).values()
    (calls,) = [c for name, c in rank["slices"].items() if name.startswith("host API calls")]
    assert "zeDeviceGet" in [c[2] for c in calls]


@_needs_loader
def test_the_ranks_of_a_native_program_under_mpi_are_one_run(tmp_path):
    program = tmp_path / "ze_program.py"
    program.write_text(LEVEL_ZERO_PROGRAM)
    env = {k: v for k, v in _level_zero_env(None).items() if k in ("ZE_ENABLE_ALT_DRIVERS", "ZEHAL_BACKEND")}
    out = mpirun(
        2,
        ["-x", "ZE_ENABLE_ALT_DRIVERS", sys.executable, "-m", "zehal", "trace", "-o", "run.pftrace", "--"]
        + ["sh", "-c", f"{sys.executable} {program}"],
        cwd=tmp_path,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    # Each rank wrote its file; the launcher's job id names their one run.
    merged = timeline.merge(tmp_path / "run.pftrace.ranks")
    assert [s.rank for s in merged.ranks] == [0, 1] and all(s.complete for s in merged.ranks)
    assert merged.ranks[0].run == merged.ranks[1].run
    for rank in processes_of(parse_bytes(merged.data)).values():
        (calls,) = [c for name, c in rank["slices"].items() if name.startswith("host API calls")]
        assert "zeDeviceGet" in [c[2] for c in calls]


@_needs_loader
def test_no_trace_starts_without_the_variable(tmp_path):
    """A Level Zero program run without zehal trace writes nothing."""
    out = subprocess.run(
        [sys.executable, "-c", LEVEL_ZERO_PROGRAM],
        cwd=tmp_path,
        env=_level_zero_env(None),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert list(tmp_path.iterdir()) == []
