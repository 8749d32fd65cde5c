"""MetricStreamer (docs/metrics.md, "Metric streamers and queries"): the sampled counters of a
time-based group as NumPy structured arrays; its errors, threads, and a CUDA run."""

from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pytest
import zehal
from conftest import cuda_device, run_python

MIN_PERIOD_NS = 10_000
RING_REPORTS = 1 << 16


def group(device, name):
    for g in device.metric_groups():
        if g.name == name:
            return g
    raise LookupError(name)


def streamer_of(device, name="EngineUtilization", **kwargs):
    g = group(device, name)
    zehal.activate_metric_groups(device, [g])
    return zehal.MetricStreamer(device, g, **kwargs)


def copies(device, n, nbytes):
    host = zehal.Area.host().mmap(nbytes)
    dev = zehal.Area.device(device).mmap(nbytes)
    with zehal.Dma(device) as dma:
        for _ in range(n):
            dma.copy(dev, host).wait()


def read_until(s, done, limit_s=20.0):
    """Reads `s` until done(all reports so far) holds; every report read, in order."""
    chunks = []
    deadline = time.monotonic() + limit_s
    while True:
        chunks.append(s.read())
        got = np.concatenate(chunks)
        if done(got):
            return got
        assert time.monotonic() < deadline, "the reports never came"
        time.sleep(0.001)


def assert_tiled(reports):
    """Reports without markers cover the device time since the open, one after the other."""
    assert np.all(reports["begin"] < reports["end"])
    assert np.array_equal(reports["end"][:-1], reports["begin"][1:])


def test_dtype_is_the_report_laid_out_by_metric(sim):
    with streamer_of(sim) as s:
        metrics = group(sim, "EngineUtilization").metrics
        assert s.dtype.names == ("begin", "end", *[m.name for m in metrics])
        assert s.dtype.itemsize == 32 + 8 * len(metrics)
        assert s.dtype.fields["begin"] == (np.dtype("<u8"), 16)
        assert s.dtype.fields["end"] == (np.dtype("<u8"), 24)
        by_type = {0: np.uint32, 1: np.uint64, 2: np.float32, 3: np.float64, 4: np.bool_}
        for k, m in enumerate(metrics):
            assert s.dtype.fields[m.name] == (np.dtype(by_type[m.result_type]), 32 + 8 * k)
        assert s.dtype["EngineBusy"] == np.float32
        assert s.dtype["StreamMarker"] == np.uint32
        reports = read_until(s, lambda r: len(r) >= 3)
        assert_tiled(reports)
        # A read's array lies over the reports as read: no field unpacked into another layout.
        deadline = time.monotonic() + 20
        direct = s.read()
        while len(direct) < 2:  # reports pile up between two reads
            assert time.monotonic() < deadline, "the reports never came"
            time.sleep(0.005)
            direct = s.read()
        assert direct.dtype == s.dtype
        assert direct.ndim == 1
        assert direct.strides == (s.dtype.itemsize,)
        assert not direct.flags.owndata


def test_open_read_close(sim):
    s = streamer_of(sim, period_ns=MIN_PERIOD_NS)
    assert not s.closed
    assert s.group == group(sim, "EngineUtilization")
    assert s.device == sim
    assert s.dropped == 0
    assert len(read_until(s, lambda r: len(r) > 0)) > 0
    s.close()
    assert s.closed
    s.close()  # idempotent
    for use in (s.read, lambda: s.dropped, lambda: s.period_ns, lambda: s.notify_every_n_reports):
        with pytest.raises(zehal.InvalidArgumentError) as info:
            use()
        assert info.value.result_name == "ZE_RESULT_ERROR_INVALID_NULL_HANDLE"
    assert "closed" in repr(s)


def test_reports_count_the_copies(sim):
    with streamer_of(sim, period_ns=100_000) as s:
        copies(sim, 5, 4096)
        # Each copy counts once, in the report whose window holds its completion.
        reports = read_until(s, lambda r: int(r["BytesMoved"].sum()) >= 5 * 4096)
        assert int(reports["BytesMoved"].sum()) == 5 * 4096
        assert int(reports["DataCommands"].sum()) == 5
        ticks_per_s = sim.properties.timer_hz
        window_ns = (reports["end"] - reports["begin"]) * 1_000_000_000 // ticks_per_s
        assert np.all(np.abs(reports["GpuTime"].astype(np.int64) - window_ns.astype(np.int64)) <= 1)
        assert np.all(reports["StreamMarker"] == 0)
        assert_tiled(reports)


def test_max_reports(sim):
    with streamer_of(sim, period_ns=MIN_PERIOD_NS) as s:
        assert len(s.read(0)) == 0
        # A read takes no more than asked, and leaves the rest for the next.
        parts = []
        deadline = time.monotonic() + 20
        while True:
            two = s.read(max_reports=2)
            assert len(two) <= 2
            parts.append(two)
            if len(two) == 2:
                rest = s.read()
                parts.append(rest)
                if len(rest):
                    break
            assert time.monotonic() < deadline, "the reports never came"
            time.sleep(0.005)
        assert_tiled(np.concatenate(parts))
        for bad in (-1, 1 << 32):
            with pytest.raises(zehal.InvalidArgumentError):
                s.read(bad)
        with pytest.raises(TypeError):
            s.read("2")


def test_a_full_ring_drops_new_reports_and_counts_them(sim):
    with streamer_of(sim, period_ns=MIN_PERIOD_NS) as s:
        deadline = time.monotonic() + 120
        while s.dropped == 0:
            assert time.monotonic() < deadline, "the ring never filled"
            time.sleep(0.05)
        # The ring keeps the oldest reports whole; the read returns them all the same.
        kept = s.read()
        assert len(kept) == RING_REPORTS
        assert_tiled(kept)
        later = read_until(s, lambda r: len(r) > 0)
        # The reports dropped leave a gap before the next one kept.
        assert later["begin"][0] > kept["end"][-1]
        assert s.dropped > 0


@pytest.mark.parametrize(
    ("asked", "used"),
    [((0, 0), (1_000_000, 1)), ((1, 5), (MIN_PERIOD_NS, 5)), ((250_000, 1 << 20), (250_000, RING_REPORTS))],
)
def test_period_and_report_count_are_corrected(sim, asked, used):
    with streamer_of(sim, period_ns=asked[0], notify_every_n_reports=asked[1]) as s:
        assert (s.period_ns, s.notify_every_n_reports) == used


def test_open_errors(sim):
    util, engine = group(sim, "EngineUtilization"), group(sim, "EngineEvents")
    with pytest.raises(zehal.NotReadyError, match="not activated"):
        zehal.MetricStreamer(sim, util)
    zehal.activate_metric_groups(sim, [engine])
    with pytest.raises(zehal.InvalidArgumentError, match="not time-based"):
        zehal.MetricStreamer(sim, engine)
    zehal.activate_metric_groups(sim, [util])
    with pytest.raises(zehal.InvalidArgumentError) as info:
        zehal.MetricStreamer(sim, None)
    assert info.value.result_name == "ZE_RESULT_ERROR_INVALID_NULL_HANDLE"
    with pytest.raises(TypeError):
        zehal.MetricStreamer(sim, "EngineUtilization")
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.MetricStreamer(sim, util, period_ns=-1)
    with pytest.raises(zehal.InvalidArgumentError, match="host-visible"):
        zehal.MetricStreamer(sim, util, notification=zehal.EventPool(sim, 1, host_visible=False).event(0))
    other = zehal.sim_device()
    with pytest.raises(zehal.InvalidArgumentError, match="another device"):
        zehal.MetricStreamer(other, util)
    # None of these took the device's streamer.
    with zehal.MetricStreamer(sim, util):
        with pytest.raises(zehal.ObjectInUseError, match="already open"):
            zehal.MetricStreamer(sim, util)
    # Closing gives the slot back.
    zehal.MetricStreamer(sim, util).close()


def test_max_reports_whose_index_closes_the_streamer():
    """The argument is converted before the streamer is used: an __index__ that closes it
    makes the read raise (closed), in a child process in case it crashed."""
    code = """
import zehal
d = zehal.sim_device()
g = [g for g in d.metric_groups() if g.name == "EngineUtilization"][0]
zehal.activate_metric_groups(d, [g])
s = zehal.MetricStreamer(d, g, period_ns=10_000)
class Closing:
    def __index__(self):
        s.close()
        return 5
try:
    s.read(Closing())
except zehal.InvalidArgumentError as e:
    print(e.result_name)
"""
    out = run_python(code, env={"ZEHAL_BACKEND": "sim"}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ZE_RESULT_ERROR_INVALID_NULL_HANDLE"


def test_device_none_is_the_default_device(sim_backend):
    default = zehal.default_device()
    util = group(default, "EngineUtilization")
    zehal.activate_metric_groups(default, [util])
    try:
        with zehal.MetricStreamer(None, util) as s:
            assert s.device == default
    finally:
        zehal.activate_metric_groups(default, [])


def test_dropping_an_open_streamer_frees_the_device(sim):
    s = streamer_of(sim)
    del s
    gc.collect()
    streamer_of(sim).close()


def test_lost_device(sim):
    util = group(sim, "EngineUtilization")
    zehal.activate_metric_groups(sim, [util])
    sim.lose()
    with pytest.raises(zehal.DeviceLostError):
        zehal.MetricStreamer(sim, util)


def test_notification_event(sim):
    ev = zehal.EventPool(sim, 1).event(0)
    with streamer_of(sim, period_ns=MIN_PERIOD_NS, notify_every_n_reports=4, notification=ev) as s:
        ev.synchronize(timeout=20)
        assert len(s.read()) >= 4


def test_readers_and_a_close_from_other_threads(sim):
    """Readers on several threads take every report once; a close from another thread ends
    them with InvalidArgumentError (closed), never a crash."""
    s = streamer_of(sim, period_ns=100_000)
    got: list[list[np.ndarray]] = [[] for _ in range(4)]
    errors: list[BaseException] = []
    go = threading.Event()

    def reader(k):
        go.wait()
        try:
            while True:
                got[k].append(s.read(max_reports=7))
        except zehal.InvalidArgumentError as e:
            if e.result_name != "ZE_RESULT_ERROR_INVALID_NULL_HANDLE":
                errors.append(e)
        except BaseException as e:  # noqa: BLE001 - collected for the assert
            errors.append(e)

    threads = [threading.Thread(target=reader, args=(k,), daemon=True) for k in range(4)]
    for th in threads:
        th.start()
    go.set()
    copies(sim, 20, 1024)
    deadline = time.monotonic() + 20
    while sum(len(a) for chunks in got for a in chunks) < 50 and time.monotonic() < deadline:
        time.sleep(0.001)
    closers = [threading.Thread(target=s.close, daemon=True) for _ in range(2)]
    for th in closers:
        th.start()
    for th in closers + threads:
        th.join(timeout=60)
        assert not th.is_alive()
    assert not errors
    assert s.closed
    reports = np.concatenate([a for chunks in got for a in chunks])
    reports = reports[np.argsort(reports["begin"], kind="stable")]
    # Every report once, none missing between the first and the last.
    assert_tiled(reports)


CUDA_BYTES = 256 << 20
CUDA_COPIES = 16


@pytest.mark.cuda
def test_cuda_counters_see_device_memory_written():
    gpu = cuda_device()
    try:
        activity = group(gpu, "GpuActivity")
    except LookupError:
        pytest.skip("no GpuActivity group (zehal info says why)")
    zehal.activate_metric_groups(gpu, [activity])
    src, dst = zehal.Area.device(gpu).mmap(CUDA_BYTES), zehal.Area.device(gpu).mmap(CUDA_BYTES)
    deadline = time.monotonic() + 60
    while True:  # PM sampling is one session per device: wait while another process samples
        try:
            s = zehal.MetricStreamer(gpu, activity)
            break
        except zehal.UnsupportedError as e:
            pytest.skip(f"this system does not let CUPTI sample: {e}")
        except zehal.Error as e:
            if e.result_name != "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE" or time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    with s:
        assert s.dtype["DramBytesWritten"] == np.uint64
        time.sleep(0.005)  # the first millisecond of a run is not counted: copy after it
        with zehal.Dma(gpu) as dma:
            for _ in range(CUDA_COPIES):
                dma.copy(dst, src).wait()
        _, after = gpu.global_timestamps()
        reports = read_until(s, lambda r: len(r) > 0 and int(r["end"][-1]) >= after, limit_s=30)
    written = int(reports["DramBytesWritten"].sum())
    # Every copy's bytes are written to device memory; the reports together cover the run.
    assert written >= CUDA_COPIES * CUDA_BYTES // 2
    assert np.all(reports["begin"] < reports["end"])
