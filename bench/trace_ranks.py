"""Benchmarks of traces across ranks (figures in bench/RESULTS.md):

    python3 bench/trace_ranks.py merge --ranks 2 8 64 --records 1000000
        merge throughput (records/s) of synthetic rank files, serial and with a worker per core
    python3 bench/trace_ranks.py overhead --commands 20000 [--bytes 4096]
        time per copy + wait (4 KiB unless --bytes), untraced and traced with streaming on
        (rounds interleaved), and the cost of timing one Python API call
    python3 bench/trace_ranks.py app --spirv matrix_multiply.spv [--n 1024]
        an application's step (upload two n x n matrices, multiply them with the tiled kernel
        of tests/kernels/matrix_multiply.cl, download the product), untraced and traced
        with streaming on (rounds interleaved)
    mpiexec -n 4 python3 bench/trace_ranks.py align --seconds 60
        residual alignment error of ranks with injected clock offsets and drifts

Run with the package on PYTHONPATH (``zehal_site build/dev``) or installed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable

import numpy as np

_NAMES = ["CommandStart", "CommandEnd", "BytesMoved", "EngineOrdinal", "EngineIndex", "QueueId", "CommandType"]


def _synthetic_rank(path: str, rank: int, size: int, records: int) -> None:
    """A rank file of ``records`` tracer records (commands of 7 records each)."""
    from zehal import _zehal
    from zehal.clock_sync import LocalClock, Sample
    from zehal.rank_trace import RankTrace

    t = RankTrace(path, rank, size, "bench", LocalClock(0))
    base = 5 * 10**12  # ns of a clock 83 minutes after boot
    t.add_clock_sample(Sample(base, base + 1000 * rank, 50), "start")
    commands = records // len(_NAMES)
    step = 10_000
    for first in range(0, commands, step):
        n = min(step, commands - first)
        entries = np.zeros(n * len(_NAMES), dtype=_zehal.METRIC_ENTRY_DTYPE)
        entries["metric_index"] = np.tile(np.arange(len(_NAMES)), n)
        entries["timestamp"] = base + 1000 * np.repeat(np.arange(first, first + n), len(_NAMES))
        entries["value"] = np.tile([0, 0, 4096, 1, 0, 0, 0], n)
        t.add_entries(entries, _NAMES, dropped=0, now_ns=int(entries["timestamp"][-1]))
    t.add_clock_sample(Sample(base + 10**12, base + 10**12 + 1000 * rank + rank, 50), "end")
    t.finish()


def _copies(template: str, folder: str, size: int) -> None:
    """Rank files 0..size-1 from one rank's ``template``: its packets with a new head. The
    tracks keep the template's uuids: the merge's work does not depend on them."""
    from zehal import perfetto_writer as pw
    from zehal.rank_trace import rank_uuid
    from zehal.trace_merge import rank_file_name

    with open(template, "rb") as f:
        data = f.read()
    first = next(pw.iter_packets(data))
    body = data[len(pw.wrap_packet(first)) :]
    for rank in range(size):
        head = pw.Track(
            rank_uuid(0, 0),
            f"rank {rank}",
            pid=rank + 1,
            labels=("zehal.run=bench", f"zehal.rank={rank}", f"zehal.size={size}"),
        )
        with open(os.path.join(folder, rank_file_name(rank)), "wb") as f:
            f.write(pw.encode_track(head, 1))
            f.write(body)


def bench_merge(ranks: list[int], records: int) -> None:
    from zehal import timeline

    tmp = tempfile.mkdtemp(prefix="zehal-merge-")
    try:
        template = os.path.join(tmp, "template.pftrace")
        _synthetic_rank(template, 0, 1, records)
        print(f"rank file: {records} records, {os.path.getsize(template) / 2**20:.1f} MiB")
        print("| ranks | records | serial (1 process) | parallel (one per core) | speed-up |")
        print("|---|---|---|---|---|")
        for size in ranks:
            folder = os.path.join(tmp, f"r{size}")
            os.makedirs(folder)
            _copies(template, folder, size)
            rates = []
            for workers in (1, os.cpu_count() or 1):
                t0 = time.perf_counter()
                merged = timeline.merge(folder, os.path.join(tmp, "out.pftrace"), processes=workers)
                rates.append(size * records / (time.perf_counter() - t0))
                assert len(merged.ranks) == size
            print(f"| {size} | {size * records:,} | {rates[0] / 1e6:.2f} M rec/s | {rates[1] / 1e6:.2f} M rec/s "
                  f"| {rates[1] / rates[0]:.2f}× |")  # fmt: skip
            shutil.rmtree(folder)
    finally:
        shutil.rmtree(tmp)


def untraced_then_traced(measure: Callable[[], float], device: object, path: str) -> tuple[float, float]:
    """One round: ``measure()`` untraced, then again while a trace session of ``device``
    streams to ``path``."""
    from zehal import trace_session

    untraced = measure()
    session = trace_session.Session(path)
    session.record_device(device)
    traced = measure()
    session.finish()
    return untraced, traced


def bench_overhead(commands: int, rounds: int, nbytes: int = 4096, parts: bool = False) -> None:
    import zehal
    from zehal import timeline, trace_session

    device = zehal.default_device()
    host = zehal.Area.host().mmap(nbytes)
    dev = zehal.Area.device(device).mmap(nbytes)
    dma = zehal.Dma(device, 1, 0)

    def per_command() -> float:
        t0 = time.perf_counter()
        for _ in range(commands):
            dma.copy(dev, host).wait()
        return (time.perf_counter() - t0) / commands

    tmp = tempfile.mkdtemp(prefix="zehal-overhead-")
    untraced, traced = [], []
    tracer_only, stream_only = [], []  # the parts, with --parts
    try:
        per_command()  # warm up
        for k in range(rounds):
            plain, under_trace = untraced_then_traced(per_command, device, os.path.join(tmp, f"t{k}.pftrace"))
            untraced.append(plain)
            traced.append(under_trace)
            if parts:
                recorder = timeline.Recorder(device)  # a Python reader that keeps the raw data
                tracer_only.append(per_command())
                recorder.finish()
                session = trace_session.Session(os.path.join(tmp, f"s{k}.pftrace"))
                session.recorder = timeline.Recorder(device, stream=session.trace.stream)  # no API calls timed
                stream_only.append(per_command())
                session.finish()
    finally:
        dma.close()
        shutil.rmtree(tmp)
    if parts:
        for what, times in (("tracer on, Python reader", tracer_only), ("native stream, no API calls", stream_only)):
            print(f"{what}: {float(np.median(times)) * 1e6:.3f} µs per copy+wait")
    bench_api_calls(device)
    u, t = float(np.median(untraced)), float(np.median(traced))
    print(f"untraced: {u * 1e6:.3f} µs per copy+wait (rounds: {', '.join(f'{x * 1e6:.3f}' for x in untraced)})")
    print(f"traced, streaming: {t * 1e6:.3f} µs (rounds: {', '.join(f'{x * 1e6:.3f}' for x in traced)})")
    print(
        f"overhead: {(t / u - 1) * 100:+.1f}% (medians of {rounds} interleaved rounds of {commands} "
        f"copies of {nbytes} bytes)"
    )


def bench_app(spirv: str, n: int, iterations: int, rounds: int) -> None:
    """The tracing overhead on an application's step rather than on one tiny command: two
    n x n float uploads, the tiled multiplication, the product's download, then a wait (four
    traced commands), as the benchmarks tracing overheads are quoted on run them."""
    import zehal

    device = zehal.default_device()
    nbytes = n * n * 4
    rng = np.random.default_rng(1)
    hosts = [zehal.Area.host().mmap(nbytes) for _ in range(3)]
    devs = [zehal.Area.device(device).mmap(nbytes) for _ in range(3)]
    a, b = (np.frombuffer(h, dtype=np.float32) for h in hosts[:2])
    a[:], b[:] = rng.random(n * n, dtype=np.float32), rng.random(n * n, dtype=np.float32)
    with open(spirv, "rb") as f:
        kernel = zehal.Module(device, f.read()).kernel("matrix_multiply")
    dma = zehal.Dma(device, 0, 0)  # the compute engine: copies and the kernel in one queue's order

    def per_step() -> float:
        t0 = time.perf_counter()
        for _ in range(iterations):
            dma.copy(devs[0], hosts[0], request=False)
            dma.copy(devs[1], hosts[1], request=False)
            dma.launch(kernel, (n // 16, n // 16), group_size=(16, 16), args=(*devs, n, n, n), request=False)
            dma.copy(hosts[2], devs[2]).wait()
        return (time.perf_counter() - t0) / iterations

    tmp = tempfile.mkdtemp(prefix="zehal-app-")
    untraced, traced = [], []
    try:
        per_step()  # warm up (and check the product once)
        c = np.frombuffer(hosts[2], dtype=np.float32).reshape(n, n)
        expected = a.reshape(n, n) @ b.reshape(n, n)
        assert np.allclose(c, expected, rtol=1e-4, atol=1e-3), "the product is wrong"
        for k in range(rounds):
            plain, under_trace = untraced_then_traced(per_step, device, os.path.join(tmp, f"t{k}.pftrace"))
            untraced.append(plain)
            traced.append(under_trace)
    finally:
        dma.close()
        shutil.rmtree(tmp)
    u, t = float(np.median(untraced)), float(np.median(traced))
    print(f"untraced: {u * 1e6:.1f} µs per step (rounds: {', '.join(f'{x * 1e6:.1f}' for x in untraced)})")
    print(f"traced, streaming: {t * 1e6:.1f} µs (rounds: {', '.join(f'{x * 1e6:.1f}' for x in traced)})")
    print(
        f"overhead: {(t / u - 1) * 100:+.2f}% (medians of {rounds} interleaved rounds of {iterations} steps, "
        f"n = {n}: 3 copies of {nbytes} bytes and the multiplication)"
    )


def bench_api_calls(device: object, calls: int = 100_000) -> None:
    """The cost of timing a Python API call: ``Device.global_timestamps()`` bare and timed
    as while a trace runs (a stream recording the API calls)."""
    import timeit

    from zehal import _zehal
    from zehal.api_calls import ApiCalls

    tmp = tempfile.mkdtemp(prefix="zehal-api-calls-")
    bare, timed = [], []
    try:
        for k in range(3):
            bare.append(timeit.timeit(device.global_timestamps, number=calls) / calls)
            stream = _zehal.RankStream(os.path.join(tmp, f"calls{k}.pftrace"), 0)
            stream.start(None, 0.02, api_calls=True)
            api = ApiCalls()
            api.install()
            timed.append(timeit.timeit(device.global_timestamps, number=calls) / calls)
            api.uninstall()
            stream.close()
    finally:
        shutil.rmtree(tmp)
    print(
        "Device.global_timestamps(): "
        f"bare {', '.join(f'{x * 1e6:.2f}' for x in bare)} µs; "
        f"timed {', '.join(f'{x * 1e6:.2f}' for x in timed)} µs"
    )


def bench_align(seconds: float) -> None:
    from mpi4py import MPI
    from zehal.clock_sync import ClockModel, LocalClock, exchange

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    if "ZEHAL_TEST_CLOCK_SKEW" not in os.environ:
        # Up to 10 s apart, drifting by up to +-100 ppm.
        skews = ["0:0", "-10000000000:100", "7500000000:-100", "-3000000000:55", "9999999999:-73"]
        os.environ["ZEHAL_TEST_CLOCK_SKEW"] = ",".join(skews[k % len(skews)] for k in range(comm.Get_size()))
    clock, reference = LocalClock(rank), LocalClock(0)
    start = exchange(comm, clock)
    time.sleep(seconds)
    end = exchange(comm, clock)
    model = ClockModel(start, end)

    def unskewed(local: int) -> int:
        return (local - clock.offset_ns) * 1_000_000_000 // (1_000_000_000 + clock.drift_ppb)

    probes = np.linspace(start.local_ns, end.local_ns, 61).astype(np.int64).tolist()
    residual = max(abs(model.to_reference(t) - reference.local(unskewed(t))) for t in probes)
    rows = comm.gather((rank, clock.offset_ns, clock.drift_ppb, model.drift_ppb, residual, model.error_ns))
    if rank == 0:
        print(f"{seconds:g} s between the samples; residual = max over 61 moments of |aligned - rank 0's clock|")
        print("| rank | injected offset | injected drift | estimated drift | residual | reported bound |")
        print("|---|---|---|---|---|---|")
        for r, off, ppb, est, res, bound in rows:
            print(
                f"| {r} | {off / 1e9:+.3f} s | {ppb / 1000:+.0f} ppm | {est / 1000:+.3f} ppm | {res} ns | {bound} ns |"
            )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    m = sub.add_parser("merge")
    m.add_argument("--ranks", type=int, nargs="+", default=[2, 8, 64])
    m.add_argument("--records", type=int, default=1_000_000)
    o = sub.add_parser("overhead")
    o.add_argument("--commands", type=int, default=20_000)
    o.add_argument("--rounds", type=int, default=5)
    o.add_argument("--bytes", type=int, default=4096, help="bytes per copy")
    o.add_argument("--parts", action="store_true", help="also time the tracer alone and the stream without API calls")
    ap = sub.add_parser("app")
    ap.add_argument("--spirv", required=True, help="tests/kernels/matrix_multiply.cl built to SPIR-V")
    ap.add_argument("--n", type=int, default=1024, help="matrix order, a multiple of 16")
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    a = sub.add_parser("align")
    a.add_argument("--seconds", type=float, default=60.0)
    args = p.parse_args()
    if args.what == "merge":
        bench_merge(args.ranks, args.records)
    elif args.what == "overhead":
        bench_overhead(args.commands, args.rounds, args.bytes, args.parts)
    elif args.what == "app":
        bench_app(args.spirv, args.n, args.iterations, args.rounds)
    else:
        bench_align(args.seconds)


if __name__ == "__main__":
    main()
