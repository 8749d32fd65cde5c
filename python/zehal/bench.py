"""``zehal bench``: every benchmark suite on one device, each figure beside a baseline
measured in the same run, as a table on the terminal and optionally as JSON.

Native suites (C++, ``zehal._zehal.benchmarks``): copy bandwidth, 64-byte request round
trip and area latency, timestamp queries, ring and tracer throughput, and on CUDA devices
zehal beside the raw driver API. The ``python`` suite measures, from Python, the round
trip of a 64-byte copy request (``Dma.copy`` + ``Request.wait``) beside a 64-byte
``ctypes.memmove`` (and, on CUDA devices where CuPy is installed, beside CuPy's
``memcpyAsync`` + ``synchronize``).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import platform
import sys
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from . import bench_compare

if TYPE_CHECKING:
    from ._zehal import Area, Device

Row = dict[str, Any]

SUITES = ("copy", "aml", "pool", "timestamps", "ring", "tracer", "cuda", "peer", "python")


def _row(
    suite: str, name: str, value: float, unit: str, baseline: float = 0.0, baseline_name: str = "", note: str = ""
) -> Row:
    """A row whose value and baseline are times (lower is better): ratio = baseline / value.
    ``note`` gives the known cause of a surprising ratio."""
    ratio = baseline / value if baseline and value else 0.0
    return {
        "suite": suite,
        "name": name,
        "value": value,
        "unit": unit,
        "baseline": baseline,
        "baseline_name": baseline_name,
        "ratio": ratio,
        "note": note,
    }


def _time_per_call_us(fn: Callable[[], object], iterations: int, repeats: int) -> float:
    """Microseconds per call of ``fn``: the best of ``repeats`` means over ``iterations``
    calls (the timeit convention: the minimum is the figure least disturbed by noise)."""
    return _interleaved_us([fn], iterations, repeats)[0]


def _interleaved_us(fns: list[Callable[[], object]], iterations: int, repeats: int) -> list[float]:
    """Microseconds per call of each of ``fns``, measured in interleaved rounds (each round
    times every function once over ``iterations`` calls), the best round of each: a slow
    moment of the machine falls on all of them, not on one side of a ratio."""
    for fn in fns:
        for _ in range(max(1, iterations // 10)):
            fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            start = time.perf_counter_ns()
            for _ in range(iterations):
                fn()
            best[k] = min(best[k], (time.perf_counter_ns() - start) / iterations)
    return [b / 1000.0 for b in best]


def _host_area_for(device: Device) -> Area:
    """A host area usable by ``device``: the default host area when ``device`` belongs to
    the default backend, else shared memory of ``device`` itself."""
    import zehal

    try:
        same_backend = zehal.default_device().backend == device.backend
    except zehal.Error:
        same_backend = False
    return zehal.Area.host() if same_backend else zehal.Area.shared(device)


# Fire-and-forget copies per barrier in the python suite's burst row.
_BURST = 8


def python_round_trip(device: Device | None = None, quick: bool = False) -> list[Row]:
    """64-byte copy request round trip from Python: ``Dma.copy`` host -> device then
    ``Request.wait``, beside ``ctypes.memmove`` of 64 bytes (and CuPy on CUDA devices);
    one fire-and-forget copy + ``barrier()``, and a burst of them per barrier beside the
    request."""
    import zehal

    device = device if device is not None else zehal.default_device()
    iterations, repeats = (200, 3) if quick else (5000, 5)
    rows: list[Row] = []

    src_area = _host_area_for(device)
    dst_area = zehal.Area.device(device)
    src = src_area.mmap(64)
    dst = dst_area.mmap(64)
    dma = zehal.Dma(device)
    # The baseline copies 64 bytes with ctypes.memmove between the same buffers where the
    # host can address both (the sim's device memory is host memory), else between two
    # host buffers of the same area as the source.
    if device.backend == "sim":
        base_dst, base_src, spare = dst.ptr, src.ptr, None
    else:
        spare = src_area.mmap(64)
        base_dst, base_src = spare.ptr, src.ptr
    try:

        def fire_and_barrier() -> None:
            dma.copy(dst, src, 64, request=False)
            dma.barrier()

        def fire_burst_and_barrier() -> None:
            for _ in range(_BURST):
                dma.copy(dst, src, 64, request=False)
            dma.barrier()

        # CuPy's round trip, where there is one, takes its turn in the same rounds.
        cupy_once = _cupy_round_trip(device)
        fns: list[Callable[[], object]] = [
            lambda: dma.copy(dst, src, 64).wait(),
            fire_and_barrier,
            lambda: ctypes.memmove(base_dst, base_src, 64),
            fire_burst_and_barrier,
        ]
        times = _interleaved_us(fns + ([cupy_once] if cupy_once else []), iterations, repeats)
        submit_wait, fire_barrier, memmove = times[:3]
        burst_per_copy = times[3] / _BURST
        cupy_us = times[4] if cupy_once else None
    finally:
        dma.barrier()
        if spare is not None:
            src_area.munmap(spare)
        dst_area.munmap(dst)
        src_area.munmap(src)

    memmove_name = "ctypes.memmove 64 B, same buffers" if spare is None else "ctypes.memmove 64 B, host buffers"
    rows.append(_row("python", "64 B request: Dma.copy + wait", submit_wait, "us", memmove, memmove_name))
    rows.append(_row("python", "64 B fire-and-forget copy + barrier", fire_barrier, "us", memmove, memmove_name))
    rows.append(
        _row(
            "python",
            f"64 B fire-and-forget copies, {_BURST} per barrier (per copy)",
            burst_per_copy,
            "us",
            submit_wait,
            "request: Dma.copy + wait",
        )
    )

    if cupy_us is not None:
        rows.append(
            _row(
                "python", "64 B request: Dma.copy + wait", submit_wait, "us", cupy_us, "cupy memcpyAsync + synchronize"
            )
        )
    rows.extend(_pool_rows(device, iterations, repeats))
    return rows


def _pool_rows(device: Device, iterations: int, repeats: int) -> list[Row]:
    """A pooled 1 MiB device ``mmap`` + ``close`` from Python, beside the unpooled area and,
    on CUDA devices where CuPy is installed, CuPy's ``MemoryPool`` ``malloc`` + free."""
    import zehal

    size = 1 << 20
    plain = zehal.Area.device(device)
    pool = zehal.Area.pool(plain)
    unpooled = _time_per_call_us(lambda: plain.mmap(size).close(), max(iterations // 20, 10), repeats)
    fns: list[Callable[[], object]] = [lambda: pool.mmap(size).close()]
    on_gpu: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
    if device.backend == "cuda":
        try:
            import cupy  # type: ignore[import-not-found]
        except ImportError:
            cupy = None
        if cupy is not None:
            # CuPy's pool takes its turn in the same rounds; its memory is freed as it goes.
            cupy_pool = cupy.cuda.MemoryPool()
            fns.append(lambda: cupy_pool.malloc(size))
            on_gpu = cupy.cuda.Device(0)
    with on_gpu:
        times = _interleaved_us(fns, iterations, repeats)
    pooled = times[0]
    rows = [_row("python", "pooled mmap+close 1 MiB", pooled, "us", unpooled, "unpooled Area.mmap+close")]
    if len(times) > 1:
        rows.append(_row("python", "pooled mmap+close 1 MiB", pooled, "us", times[1], "cupy MemoryPool malloc+free"))
    return rows


def _cupy_round_trip(device: Device) -> Callable[[], None] | None:
    """One 64-byte host -> device ``memcpyAsync`` + stream ``synchronize`` through CuPy, on
    CUDA devices where CuPy is installed; None elsewhere."""
    if device.backend != "cuda":
        return None
    try:
        import cupy  # type: ignore[import-not-found]
        import numpy as np
    except ImportError:
        return None
    runtime = cupy.cuda.runtime
    host = cupy.cuda.alloc_pinned_memory(64)
    np.frombuffer(host, dtype=np.uint8, count=64)[:] = 1
    dev = cupy.cuda.alloc(64)
    stream = cupy.cuda.Stream(non_blocking=True)

    def once() -> None:
        runtime.memcpyAsync(dev.ptr, host.ptr, 64, runtime.memcpyHostToDevice, stream.ptr)
        stream.synchronize()

    return once


def _native_suites() -> dict[str, Callable[..., list[Row]]]:
    from ._zehal import benchmarks as native

    return {
        "copy": lambda device, quick, max_bytes: native.copy_bandwidth(device, quick=quick, max_bytes=max_bytes),
        "aml": lambda device, quick, max_bytes: native.aml_latency(device, quick=quick),
        "pool": lambda device, quick, max_bytes: native.pool_latency(device, quick=quick),
        "timestamps": lambda device, quick, max_bytes: native.timestamp_query(device, quick=quick),
        "ring": lambda device, quick, max_bytes: native.ring_throughput(quick=quick),
        "tracer": lambda device, quick, max_bytes: native.tracer_throughput(device, quick=quick),
        "cuda": lambda device, quick, max_bytes: native.cuda_vs_raw(device, quick=quick),
        "peer": lambda device, quick, max_bytes: _peer_rows(native, device, quick, max_bytes),
        "python": lambda device, quick, max_bytes: python_round_trip(device, quick=quick),
    }


def _peer_rows(native: Any, device: Device, quick: bool, max_bytes: int | None) -> list[Row]:
    """Copies between ``device`` and the next device of its backend (none: no rows)."""
    import zehal

    devices = zehal.devices(device.backend)
    others = [d for d in devices if d != device]
    if not others:
        return []
    return native.peer_copy(device, others[0], quick=quick, max_bytes=max_bytes)


def run(
    device: Device | None = None,
    *,
    quick: bool = False,
    suites: Iterable[str] | None = None,
    max_bytes: int | None = None,
    errors: list[str] | None = None,
) -> list[Row]:
    """Runs ``suites`` (default: all) on ``device`` (default: the default device) and
    returns their rows. A suite the device cannot run (UnsupportedError) is skipped with
    a note appended to ``errors``; any other failure propagates."""
    import zehal

    device = device if device is not None else zehal.default_device()
    table = _native_suites()
    chosen = list(SUITES if suites is None else suites)
    for name in chosen:
        if name not in table:
            raise ValueError(f"unknown suite {name!r} (choose from {', '.join(SUITES)})")
    rows: list[Row] = []
    for name in chosen:
        try:
            rows.extend(table[name](device, quick, max_bytes))
        except zehal.UnsupportedError as e:
            if errors is not None:
                errors.append(f"{name}: skipped ({e})")
    return rows


def _fmt(value: float) -> str:
    if value == 0:
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def format_table(rows: list[Row]) -> str:
    """The rows as an aligned text table: suite, name, value, unit, baseline, ratio; a row
    with a note has a mark after its ratio, and the notes follow the table."""
    header = ("suite", "name", "value", "unit", "baseline", "baseline name", "ratio")
    notes: list[str] = []
    cells = [header]
    for r in rows:
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] else "-"
        note = r.get("note") or ""
        if note:
            if note not in notes:
                notes.append(note)
            ratio += f" [{notes.index(note) + 1}]"
        cells.append(
            (r["suite"], r["name"], _fmt(r["value"]), r["unit"], _fmt(r["baseline"]), r["baseline_name"] or "-", ratio)
        )
    widths = [max(len(str(c[i])) for c in cells) for i in range(len(header))]
    numeric = {2, 4, 6}
    lines = []
    for k, c in enumerate(cells):
        parts = [
            str(v).rjust(w) if i in numeric and k else str(v).ljust(w)
            for i, (v, w) in enumerate(zip(c, widths, strict=True))
        ]
        lines.append("  ".join(parts).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.extend(f"[{i + 1}] {note}" for i, note in enumerate(notes))
    return "\n".join(lines)


def device_description(device: Device) -> dict[str, Any]:
    """What a JSON report says of the device and the machine."""
    return {
        "backend": device.backend,
        "name": device.name,
        # JSON has no bytes: uuid_bytes is the text uuid already there.
        "properties": {k: v for k, v in device.properties.to_dict().items() if not isinstance(v, bytes)},
        "machine": platform.machine(),
        "python": platform.python_version(),
    }


def parse_device(spec: str | None) -> Device:
    """``None`` -> the default device; ``"sim"`` -> device 0 of that backend;
    ``"cuda:1"`` -> device 1 of that backend."""
    import zehal

    if spec is None:
        return zehal.default_device()
    backend, _, index = spec.partition(":")
    found = zehal.devices(backend)
    if not found:
        reason = next((b.reason for b in zehal.backends() if b.name == backend), "")
        raise SystemExit(f"zehal bench: backend {backend!r} has no device here{': ' + reason if reason else ''}")
    i = int(index) if index else 0
    if not 0 <= i < len(found):
        raise SystemExit(f"zehal bench: {backend} has {len(found)} device(s), no index {i}")
    return found[i]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``zehal bench``."""
    p.add_argument("--quick", action="store_true", help="short runs (a fraction of a second per suite)")
    p.add_argument("--json", metavar="PATH", help="also write the rows as JSON to PATH ('-': stdout)")
    p.add_argument("--device", metavar="BACKEND[:INDEX]", help="device to measure (default: the default device)")
    p.add_argument(
        "--suite",
        action="append",
        choices=SUITES,
        help="run only this suite (repeatable; default: all)",
    )
    p.add_argument("--max-bytes", type=int, help="largest copy of the copy suite (default 256 MiB)")
    p.add_argument(
        "--compare",
        metavar="BASE.json",
        help="print each figure beside the same figure of a run saved with --json, and the change",
    )


def run_from_args(args: argparse.Namespace) -> int:
    """Runs ``zehal bench`` with parsed arguments; returns the exit status."""
    import zehal

    base = None
    if args.compare:
        # Read before measuring: a wrong path should not cost a whole run.
        try:
            base = bench_compare.load_report(args.compare)
        except bench_compare.CompareError as e:
            print(f"zehal bench: --compare: {e}", file=sys.stderr)
            return 2
    device = parse_device(args.device)
    notes: list[str] = []
    rows = run(device, quick=args.quick, suites=args.suite, max_bytes=args.max_bytes, errors=notes)
    to_stdout = args.json == "-"
    out = sys.stderr if to_stdout else sys.stdout
    print(f"zehal {zehal.__version__} bench on {device.backend}: {device.name}", file=out)
    description = device_description(device)
    if base is None:
        print(format_table(rows), file=out)
    else:
        print(f"beside {args.compare} (zehal {base.get('version', '?')}):", file=out)
        print(bench_compare.format_comparison(bench_compare.compare(rows, base["rows"])), file=out)
        for warning in bench_compare.describe_difference(base, description, bool(args.quick)):
            print(warning, file=out)
    for note in notes:
        print(note, file=out)
    if args.json:
        report = {
            "version": zehal.__version__,
            "quick": bool(args.quick),
            "device": description,
            "rows": rows,
            "notes": notes,
        }
        if to_stdout:
            json.dump(report, sys.stdout, indent=2)
            print()
        else:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(report, f, indent=2)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m zehal.bench``: the same as ``zehal bench``."""
    p = argparse.ArgumentParser(prog="zehal bench", description=__doc__.splitlines()[0])
    add_arguments(p)
    return run_from_args(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
