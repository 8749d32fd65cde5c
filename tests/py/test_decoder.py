"""MetricDecoder (contract §5.4 and 8): entries as NumPy structured arrays, subsets, sets,
timestamps, and random or truncated input."""

from __future__ import annotations

import gc
import random
import time

import numpy as np
import pytest
import zehal
from zehal import _zehal

RECORD = _zehal.RECORD_SIZE


def group(device, name):
    for g in device.metric_groups():
        if g.name == name:
            return g
    raise LookupError(name)


def tracer_of(device, *names):
    groups = [group(device, n) for n in names]
    zehal.activate_metric_groups(device, groups)
    return zehal.MetricTracer(device, groups)


def read_until_drained(t) -> bytes:
    chunks = []
    while True:
        try:
            chunks.append(t.read())
        except zehal.NotReadyError:
            return b"".join(chunks)


def traced_copies(device, n, nbytes=4096):
    """Raw data of `n` copies, with the host window of each."""
    t = tracer_of(device, "EngineEvents")
    dec = zehal.MetricDecoder(t)
    host = zehal.Area.host().mmap(nbytes)
    dev = zehal.Area.device(device).mmap(nbytes)
    dma = zehal.Dma(device)
    windows = []
    t.enable()
    for _ in range(n):
        before = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
        dma.copy(dev, host).wait()
        windows.append((before, time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)))
    t.disable()
    raw = read_until_drained(t)
    t.close()
    return raw, dec, windows


def record_bytes(*recs) -> bytes:
    a = np.zeros(len(recs), dtype=_zehal.TRACE_RECORD_DTYPE)
    for i, (kind, metric, ticks, value, sub) in enumerate(recs):
        a[i] = (kind, 32, metric, ticks, value, sub, i)
    return a.tobytes()


def test_entries_are_a_structured_array_with_host_timestamps(device):
    if not device.properties.tracer:
        pytest.skip(f"{device.backend} device without a tracer")
    raw, dec, windows = traced_copies(device, 50)
    names = [m.name for m in dec.decodable_metrics]
    assert names[:2] == ["CommandStart", "CommandEnd"]
    entries, counts = dec.decode(raw)
    assert isinstance(entries, np.ndarray)
    assert entries.dtype == _zehal.METRIC_ENTRY_DTYPE
    assert entries.dtype.names == ("value", "timestamp", "metric_index", "on_subdevice", "subdevice_id")
    assert entries.dtype["value"] == np.uint64 and entries.dtype["timestamp"] == np.uint64
    assert entries.dtype["metric_index"] == np.uint32 and entries.dtype["on_subdevice"] == np.bool_
    assert counts == [len(entries)]
    starts = entries[entries["metric_index"] == 0]
    ends = entries[entries["metric_index"] == 1]
    assert len(starts) >= 50
    for k, (before, after) in enumerate(windows):
        assert before <= starts["timestamp"][k] <= ends["timestamp"][k] <= after
    moved = entries[entries["metric_index"] == names.index("BytesMoved")]["value"]
    assert np.all(moved[:50] == 4096)
    assert not entries["on_subdevice"].any()


def test_metric_subsets(sim):
    raw, dec, _ = traced_copies(sim, 3)
    metrics = dec.decodable_metrics
    by_name = {m.name: m for m in metrics}
    entries, counts = dec.decode(raw, [by_name["QueueDepth"], by_name["BytesMoved"]])
    assert set(entries["metric_index"]) == {0, 1}
    assert np.all(entries[entries["metric_index"] == 1]["value"][:3] == 4096)
    assert counts == [len(entries)]
    with pytest.raises(zehal.InvalidArgumentError):
        dec.decode(raw, [by_name["BytesMoved"], by_name["BytesMoved"]])
    with pytest.raises(zehal.InvalidArgumentError):
        dec.decode(raw, [group(sim, "AsyncEvents").metrics[0]])
    with pytest.raises(zehal.InvalidArgumentError):
        dec.decode(raw, [])
    with pytest.raises(TypeError):
        dec.decode(raw, ["BytesMoved"])


def test_bad_raw_arguments(sim):
    raw, dec, _ = traced_copies(sim, 1)
    entries, counts = dec.decode(b"")  # no data: no entries
    assert len(entries) == 0 and counts == [0]
    with pytest.raises(zehal.InvalidArgumentError):
        dec.decode(raw[:-3])  # truncated
    with pytest.raises(TypeError):
        dec.decode("not bytes")
    with pytest.raises(ValueError):
        dec.decode(np.frombuffer(raw, dtype=np.uint8)[::2])  # not contiguous
    # Any contiguous buffer works: bytes, bytearray, memoryview, NumPy arrays.
    expected = dec.decode(raw)[0]
    for view in (
        bytearray(raw),
        memoryview(raw),
        np.frombuffer(raw, dtype=np.uint8),
        np.frombuffer(raw, dtype=_zehal.TRACE_RECORD_DTYPE),
    ):
        assert np.array_equal(dec.decode(view)[0], expected)


def test_decoder_outlives_its_tracer_and_device(sim_backend):
    d = zehal.sim_device(async_records_per_s=0)
    raw, dec, _ = traced_copies(d, 2)
    del d
    gc.collect()
    entries, counts = dec.decode(raw)
    assert len(entries) >= 16
    assert dec.decodable_metrics[2].name == "BytesMoved"
    dec.close()
    assert dec.closed
    dec.close()
    with pytest.raises(zehal.InvalidArgumentError):
        dec.decode(raw)
    with pytest.raises(zehal.InvalidArgumentError):
        dec.decodable_metrics  # noqa: B018


def test_one_set_per_subdevice(sim_backend):
    d = zehal.sim_device(subdevices=2, async_records_per_s=0)
    raw, dec, _ = traced_copies(d, 4)
    assert dec.sets == 2
    entries, counts = dec.decode(raw)
    assert len(counts) == 2 and all(c > 0 for c in counts)
    assert sum(counts) == len(entries)
    assert entries["on_subdevice"].all()
    assert np.all(entries["subdevice_id"][: counts[0]] == 0)
    assert np.all(entries["subdevice_id"][counts[0] :] == 1)


def test_crafted_ticks_before_the_sync_and_across_the_wrap(sim_backend):
    d = zehal.sim_device(timestamp_valid_bits=32, async_records_per_s=0)
    t = tracer_of(d, "EngineEvents")
    dec = zehal.MetricDecoder(t)
    host = 5_000_000_000
    wrap = 1 << 32
    raw = record_bytes(
        (_zehal.RECORD_CLOCK_SYNC, 0, 1000, host, _zehal.ROOT_DEVICE),
        (_zehal.RECORD_SAMPLE, 0, 990, 1, _zehal.ROOT_DEVICE),
        (_zehal.RECORD_SAMPLE, 0, 1192, 2, _zehal.ROOT_DEVICE),
        (_zehal.RECORD_CLOCK_SYNC, 0, wrap - 10, host + 10**9, _zehal.ROOT_DEVICE),
        (_zehal.RECORD_SAMPLE, 0, 5, 3, _zehal.ROOT_DEVICE),
        (_zehal.RECORD_DROPPED, 0, 5, 7, _zehal.ROOT_DEVICE),
        (_zehal.RECORD_EXPORT_WRITE, 3, 6, 0xAB, _zehal.ROOT_DEVICE),
    )
    entries, counts = dec.decode(raw)
    assert list(entries["value"]) == [1, 2, 3, 0xAB]
    assert list(entries["timestamp"]) == [host - 520, host + 10_000, host + 10**9 + 781, host + 10**9 + 833]
    t.close()


def test_thousands_of_random_and_truncated_strings_never_crash(sim):
    raw, dec, _ = traced_copies(sim, 5)
    rng = random.Random(7)
    outcomes = set()
    for i in range(3000):
        if i % 3 == 0:
            data = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 200)))
        elif i % 3 == 1:
            data = raw[: rng.randint(1, len(raw))]
        else:
            b = bytearray(raw)
            for _ in range(3):
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            data = bytes(b[: rng.randint(1, len(b))])
        try:
            entries, counts = dec.decode(data)
            assert sum(counts) == len(entries)
            assert np.all(entries["metric_index"] < len(dec.decodable_metrics))
            outcomes.add("ok")
        except zehal.InvalidArgumentError:
            outcomes.add("invalid")
    assert outcomes == {"ok", "invalid"}


def test_close_while_another_thread_decodes(sim):
    """close() from one thread while another decodes without the GIL: the decode ends
    normally or raises InvalidArgumentError (closed), never touching freed memory."""
    import threading

    raw, _, _ = traced_copies(sim, 20)
    for _ in range(30):
        t = tracer_of(sim, "EngineEvents")
        dec = zehal.MetricDecoder(t)
        t.close()
        errors = []
        go = threading.Event()

        def worker(dec=dec, go=go, errors=errors):  # this iteration's objects
            go.wait()
            try:
                for _ in range(50):
                    dec.decode(raw)
            except zehal.InvalidArgumentError:
                pass
            except Exception as e:  # noqa: BLE001 - collected for the assert
                errors.append(e)

        th = threading.Thread(target=worker, daemon=True)
        try:
            th.start()
            go.set()
            time.sleep(0.0005)
            dec.close()
        finally:
            go.set()
            th.join(timeout=60)
        assert not errors
        assert dec.closed


def test_corrupt_data_raises_with_the_whole_records_before_it(sim):
    raw, dec, _ = traced_copies(sim, 2)
    whole, counts = dec.decode(raw)
    assert len(whole) > 0
    assert np.frombuffer(raw, dtype=_zehal.TRACE_RECORD_DTYPE)["kind"][-1] == _zehal.RECORD_DISABLE
    for bad in (raw + b"\x01\x00", raw + b"\x01\x00\x00\x00" + b"\x00" * 28, raw[:-3]):
        with pytest.raises(zehal.InvalidArgumentError) as info:
            dec.decode(bad)
        err = info.value
        assert err.result_name == "ZE_RESULT_ERROR_INVALID_ARGUMENT"
        # The raw data ends with the disable record, not an entry: every entry survives.
        assert np.array_equal(err.entries, whole)
        assert err.counts_per_set == counts
        assert err.consumed % _zehal.RECORD_SIZE == 0 and err.consumed <= len(bad)


def test_a_chunk_of_clock_records_only_carries_its_reference(sim_backend):
    """Decoding in chunks: a chunk holding only a clock-sync record sets the reference that
    the next chunk's samples are timed by (contract §5.4)."""
    d = zehal.sim_device(timer_hz=1_000_000_000, timestamp_valid_bits=64, async_records_per_s=0)
    t = tracer_of(d, "EngineEvents")
    dec = zehal.MetricDecoder(t)
    sync = record_bytes((_zehal.RECORD_CLOCK_SYNC, 0, 1_000, 2_000_000_000, _zehal.ROOT_DEVICE))
    sample = record_bytes((_zehal.RECORD_SAMPLE, 0, 1_500, 9, _zehal.ROOT_DEVICE))
    entries, _ = dec.decode(sync)
    assert len(entries) == 0
    entries, _ = dec.decode(sample)
    assert list(entries["value"]) == [9]
    assert list(entries["timestamp"]) == [2_000_000_500]
    t.close()


def test_input_rewritten_by_another_thread_never_corrupts(sim_backend):
    """decode() reads its input once: a thread flipping the sub-device field of the NumPy
    input while decode runs without the GIL changes nothing but the values decoded."""
    import threading

    d = zehal.sim_device(subdevices=2, async_records_per_s=0)
    t = tracer_of(d, "EngineEvents")
    dec = zehal.MetricDecoder(t)
    n = 20_000
    recs = np.zeros(n + 1, dtype=_zehal.TRACE_RECORD_DTYPE)
    recs[0] = (_zehal.RECORD_CLOCK_SYNC, 32, 0, 10, 1_000, _zehal.ROOT_DEVICE, 0)
    for i in range(1, n + 1):
        recs[i] = (_zehal.RECORD_SAMPLE, 32, 0, 10 + i, i, i % 2, i)
    stop = threading.Event()

    def flip():
        while not stop.is_set():
            recs["subdevice"][1:] ^= 1

    th = threading.Thread(target=flip, daemon=True)
    th.start()
    try:
        for _ in range(30):
            entries, counts = dec.decode(recs)
            assert len(entries) == sum(counts) == n
    finally:
        stop.set()
        th.join()
    t.close()
