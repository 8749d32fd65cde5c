"""Kernel and synchronized timestamps from Python (contract §3): NumPy structured arrays
without copies, the count argument, NOT_READY, ordering against the host clock, wrap
around, packets per sub-device, reset and resubmission, threads."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import zehal

FIELDS = ("global_start", "global_end", "context_start", "context_end")


def host_now() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)


def elapsed(start: int, end: int, bits: int) -> int:
    """contract §3: elapsed ticks with wrap-around at `bits` valid bits."""
    top = (1 << 64) - 1 if bits >= 64 else (1 << bits) - 1
    return end - start if end >= start else (top - start) + end + 1


class Copier:
    """Copies between two device buffers of `device`, signalling a given event."""

    def __init__(self, device, nbytes=1 << 16):
        self.area = zehal.Area.device(device)
        self.src = self.area.mmap(nbytes)
        self.dst = self.area.mmap(nbytes)
        self.dma = zehal.Dma(device)

    def copy(self, event):
        self.dma.copy(self.dst, self.src, signal=event, request=False)

    def close(self):
        self.dma.barrier()
        self.area.munmap(self.src)
        self.area.munmap(self.dst)


@pytest.fixture
def copier(device):
    if not device.properties.kernel_timestamps:
        pytest.skip("device without kernel timestamps")
    c = Copier(device)
    yield c
    c.close()


def signalled_event(device, copier, kind="kernel"):
    e = zehal.EventPool(device, 1, timestamps=kind).event(0)
    copier.copy(e)
    e.synchronize(timeout=30)
    return e


def test_dtype():
    dt = zehal.TIMESTAMP_DTYPE
    assert dt.names == FIELDS
    assert dt.itemsize == 32
    assert all(dt.fields[n][0] == np.dtype("<u8") for n in FIELDS)


def test_kernel_timestamps_array(device, copier):
    e = signalled_event(device, copier)
    ts = e.kernel_timestamps()
    assert isinstance(ts, np.ndarray)
    assert ts.dtype == zehal.TIMESTAMP_DTYPE and ts.dtype.names == FIELDS
    assert ts.ndim == 1 and len(ts) == e.packets >= 1
    # No copy: the array views memory it does not own itself (a capsule is its base).
    assert not ts.flags.owndata and ts.base is not None
    assert ts.flags.c_contiguous
    bits = device.properties.kernel_timestamp_valid_bits
    top = (1 << 64) - 1 if bits >= 64 else (1 << bits) - 1
    for p in ts:
        for f in FIELDS:
            assert int(p[f]) <= top
        g = elapsed(int(p["global_start"]), int(p["global_end"]), bits)
        c = elapsed(int(p["context_start"]), int(p["context_end"]), bits)
        assert 0 <= c <= g
    # The array stays valid after the event is reset (it owns its memory).
    e.reset()
    assert ts["global_end"].size == len(ts)


def test_count_argument(device, copier):
    mapped = device.properties.synchronized_timestamps
    e = signalled_event(device, copier, "mapped" if mapped else "kernel")
    n = e.packets
    assert len(e.kernel_timestamps(count=1)) == 1
    assert len(e.kernel_timestamps(count=n + 5)) == n  # corrected to the packet count
    assert len(e.kernel_timestamps(count=0)) == n  # 0 asks for every packet
    if mapped:
        assert len(e.synchronized_timestamps(count=0)) == n
    np.testing.assert_array_equal(e.kernel_timestamps(count=1), e.kernel_timestamps()[:1])
    with pytest.raises(zehal.InvalidArgumentError):
        e.kernel_timestamps(count=-1)


def test_not_ready_before_signal(device, copier):
    e = zehal.EventPool(device, 1, timestamps="mapped").event(0)
    with pytest.raises(zehal.NotReadyError):
        e.kernel_timestamps()
    with pytest.raises(zehal.NotReadyError):
        e.synchronized_timestamps()
    with pytest.raises(zehal.NotReadyError):
        _ = e.packets


def test_synchronized_needs_mapped_pool(device, copier):
    e = signalled_event(device, copier, "kernel")
    with pytest.raises(zehal.UnsupportedError):
        e.synchronized_timestamps()


def test_synchronized_between_host_reads(device, copier):
    if not device.properties.synchronized_timestamps:
        pytest.skip("device without synchronized timestamps")
    pool = zehal.EventPool(device, 1, timestamps="mapped")
    e = pool.event(0)
    for _ in range(1000):
        e.reset()
        before = host_now()
        copier.copy(e)
        e.synchronize(timeout=30)
        after = host_now()
        ts = e.synchronized_timestamps()
        for p in ts:
            assert before <= p["global_start"] <= p["global_end"] <= after
            assert p["context_start"] == p["global_start"]
            assert p["global_start"] <= p["context_end"] <= p["global_end"]


def test_reset_and_resubmit_not_earlier(device, copier):
    if not device.properties.synchronized_timestamps:
        pytest.skip("device without synchronized timestamps")
    e = zehal.EventPool(device, 1, timestamps="mapped").event(0)
    copier.copy(e)
    e.synchronize(timeout=30)
    first = e.synchronized_timestamps()
    e.reset()
    with pytest.raises(zehal.NotReadyError):
        e.synchronized_timestamps()
    copier.copy(e)
    e.synchronize(timeout=30)
    second = e.synchronized_timestamps()
    assert second["global_start"].min() >= first["global_end"].max()


def check_durations(d, copies, nbytes=1 << 20):
    """Runs `copies` timed copies on `d`; each kernel duration (with wrap-around) fits the
    host interval around it and matches the synchronized duration. Returns how many
    kernel timestamps wrapped (end < start)."""
    hz = d.properties.timer_hz
    bits = d.properties.kernel_timestamp_valid_bits
    tick_ns = 1e9 / hz
    c = Copier(d, nbytes=nbytes)
    wraps = 0
    try:
        e = zehal.EventPool(d, 1, timestamps="mapped").event(0)
        for _ in range(copies):
            e.reset()
            before = host_now()
            c.copy(e)
            e.synchronize(timeout=30)
            after = host_now()
            k = e.kernel_timestamps()[0]
            s = e.synchronized_timestamps()[0]
            start, end = int(k["global_start"]), int(k["global_end"])
            assert start < (1 << bits) and end < (1 << bits)
            wraps += end < start
            ns = elapsed(start, end, bits) * tick_ns
            assert 0 <= ns <= after - before + tick_ns
            assert before <= s["global_start"] <= s["global_end"] <= after
            assert abs(int(s["global_end"]) - int(s["global_start"]) - ns) <= 1
    finally:
        c.close()
    return wraps


def test_forced_wrap_at_32_bits(sim_backend):
    # A sim clock started just below 2^32 with 32 valid bits wraps during the first
    # (throttled, about 1 ms) copies.
    d = zehal.sim_device(start_ticks=(1 << 32) - 10_000, kernel_timestamp_valid_bits=32, bandwidth_bytes_per_s=1 << 30)
    check_durations(d, 10)
    _, ticks = d.global_timestamps()  # 64 valid bits: unmasked
    assert ticks > 1 << 32, "the clock never passed 2^32"


def test_frequent_wraps(sim_backend):
    # 12 valid bits at 19.2 MHz wrap every 213 us; a throttled 64 KiB copy takes about
    # 61 us, so about one copy in four straddles a wrap.
    d = zehal.sim_device(kernel_timestamp_valid_bits=12, bandwidth_bytes_per_s=1 << 30)
    assert check_durations(d, 60, nbytes=64 << 10) >= 1


def test_period_not_whole_ns(sim_backend):
    # 19.2 MHz: a tick is 52.083... ns; durations convert exactly per contract §3.
    d = zehal.sim_device(timer_hz=19_200_000, bandwidth_bytes_per_s=1 << 30)
    c = Copier(d, nbytes=1 << 20)
    try:
        e = zehal.EventPool(d, 1, timestamps="mapped").event(0)
        c.copy(e)
        e.synchronize(timeout=30)
        k = e.kernel_timestamps()[0]
        s = e.synchronized_timestamps()[0]
        ticks = elapsed(int(k["global_start"]), int(k["global_end"]), 32)
        assert ticks > 0  # a throttled 1 MiB copy spans many ticks
        expected_ns = ticks * 1e9 / 19_200_000
        assert abs((int(s["global_end"]) - int(s["global_start"])) - expected_ns) <= 1
    finally:
        c.close()


def test_packets_per_subdevice(sim_backend):
    d = zehal.sim_device(subdevices=2)
    c = Copier(d)
    try:
        e = zehal.EventPool(d, 1, timestamps="mapped").event(0)
        c.copy(e)
        e.synchronize(timeout=30)
        assert e.packets == 2
        ts = e.synchronized_timestamps()
        assert len(ts) == 2
        assert np.all(ts["global_start"] <= ts["global_end"])
        assert len(e.kernel_timestamps(count=1)) == 1
    finally:
        c.close()


def test_threads_query_one_event(device, copier):
    kind = "mapped" if device.properties.synchronized_timestamps else "kernel"
    e = signalled_event(device, copier, kind)
    expected = e.kernel_timestamps()
    errors: list[BaseException] = []

    def reader():
        try:
            for _ in range(300):
                np.testing.assert_array_equal(e.kernel_timestamps(), expected)
                if kind == "mapped":
                    assert len(e.synchronized_timestamps()) == len(expected)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(daemon=True, target=reader) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
