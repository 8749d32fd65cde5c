"""MetricTracer (contract §5 and 8): lifecycle, read states, drops, threads and a stress run."""

from __future__ import annotations

import random
import threading
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


def tracer_of(device, *names, **kwargs):
    groups = [group(device, n) for n in names]
    zehal.activate_metric_groups(device, groups)
    return zehal.MetricTracer(device, groups, **kwargs)


def records(raw: bytes) -> np.ndarray:
    assert len(raw) % RECORD == 0
    return np.frombuffer(raw, dtype=_zehal.TRACE_RECORD_DTYPE)


def read_until_drained(t, limit_s: float = 20.0) -> bytes:
    chunks = []
    deadline = time.monotonic() + limit_s
    while True:
        try:
            chunks.append(t.read())
        except zehal.NotReadyError:
            return b"".join(chunks)
        assert time.monotonic() < deadline, "tracer never drained"


def copies(device, n=4, nbytes=4096):
    host = zehal.Area.host().mmap(nbytes)
    dev = zehal.Area.device(device).mmap(nbytes)
    with zehal.Dma(device) as dma:
        for _ in range(n):
            dma.copy(dev, host).wait()


@pytest.fixture
def quiet(sim_backend):
    return zehal.sim_device(async_records_per_s=0)


def test_create_errors(sim):
    engine, util = group(sim, "EngineEvents"), group(sim, "EngineUtilization")
    zehal.activate_metric_groups(sim, [engine])
    with pytest.raises(zehal.InvalidArgumentError) as info:
        zehal.MetricTracer(sim, [util])
    assert info.value.result_name == "ZE_RESULT_ERROR_INVALID_ARGUMENT"
    with pytest.raises(zehal.InvalidArgumentError) as info:
        zehal.MetricTracer(sim, [])
    assert info.value.result_name == "ZE_RESULT_ERROR_INVALID_SIZE"
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.MetricTracer(sim, [engine, engine])
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.MetricTracer(sim, [group(zehal.sim_device(), "EngineEvents")])
    with pytest.raises(zehal.NotReadyError):
        zehal.MetricTracer(sim, [group(sim, "AsyncEvents")])
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.MetricTracer(sim, [engine], notify_every_n_bytes=-1)
    with pytest.raises(TypeError):
        zehal.MetricTracer(sim, [engine], notify_every_n_bytes="x")
    t = zehal.MetricTracer(sim, [engine])
    with pytest.raises(zehal.ObjectInUseError) as info:
        zehal.MetricTracer(sim, [engine])
    assert info.value.result_name == "ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE"
    assert not t.enabled
    t.close()
    zehal.MetricTracer(sim, [engine]).close()


@pytest.mark.parametrize("asked,used", [(0, 65536), (1, 32), (32, 32), (33, 64), (1000, 1024), (2**32 - 1, 4 << 20)])
def test_notify_every_n_bytes_rounding(quiet, asked, used):
    with tracer_of(quiet, "EngineEvents", notify_every_n_bytes=asked) as t:
        assert t.notify_every_n_bytes == used


def test_read_states(quiet):
    t = tracer_of(quiet, "EngineEvents")
    with pytest.raises(zehal.NotReadyError):  # never enabled
        t.read()
    with pytest.raises(zehal.NotReadyError):
        t.read(1024)
    assert t.available == 0
    t.enable()
    assert t.enabled
    first = records(t.read())
    assert list(first["kind"]) == [_zehal.RECORD_CLOCK_SYNC, _zehal.RECORD_ENABLE]
    assert t.read() == b""  # enabled, nothing yet
    assert t.read(0) == b""
    t.disable()
    assert not t.enabled
    assert t.available > 0  # the disable record at least
    rest = records(t.read())
    assert rest["kind"][-1] == _zehal.RECORD_DISABLE
    with pytest.raises(zehal.NotReadyError):  # disabled and drained
        t.read()
    t.enable(synchronous=True)
    assert t.read()
    t.disable(synchronous=True)
    t.close()


def test_read_returns_whole_records_only(quiet):
    with tracer_of(quiet, "EngineEvents") as t:
        t.enable()
        copies(quiet, 2)
        t.disable()
        total = t.available
        assert total % RECORD == 0 and total >= (2 + 16 + 2) * RECORD
        assert t.read(10) == b""
        one = t.read(RECORD + 20)
        assert len(one) == RECORD
        rest = t.read(10**9)
        assert len(rest) == total - RECORD
        seq = records(one + rest)["sequence"]
        assert np.array_equal(seq, np.arange(len(seq), dtype=np.uint32))
        with pytest.raises(zehal.InvalidArgumentError):
            t.read(-1)


def test_engine_records_in_order(quiet):
    with tracer_of(quiet, "AsyncEvents", "EngineEvents") as t:
        names = [m.name for m in t.decodable_metrics]
        assert names[:2] == ["AsyncCounter", "AsyncPulse"] and names[2] == "CommandStart"
        t.enable()
        copies(quiet, 1, 8192)
        t.disable()
        recs = records(read_until_drained(t))
        samples = recs[recs["kind"] == _zehal.RECORD_SAMPLE].reshape(-1, 8)  # the copy, then Dma.close's barrier
        assert len(samples) >= 1
        for command in samples:
            assert list(command["metric"]) == list(range(2, 10))
        copy = samples[0]
        assert copy[names.index("BytesMoved") - 2]["value"] == 8192
        assert copy[names.index("CommandType") - 2]["value"] == 0
        assert copy[names.index("EngineOrdinal") - 2]["value"] == 1


def test_asynchronous_enable_and_disable(quiet):
    t = tracer_of(quiet, "EngineEvents")
    t.enable(synchronous=False)
    assert t.enabled
    deadline = time.monotonic() + 10
    got = b""
    while not got:  # reads show the change shortly after
        try:
            got = t.read()
        except zehal.NotReadyError:
            pass
        assert time.monotonic() < deadline
    t.disable(synchronous=False)
    assert not t.enabled
    rest = records(read_until_drained(t))
    assert rest["kind"][-1] == _zehal.RECORD_DISABLE
    t.close()


def test_close_rules_and_use_after_close(quiet):
    t = tracer_of(quiet, "EngineEvents")
    t.enable()
    with pytest.raises(zehal.ObjectInUseError):
        t.close()
    assert t.read() is not None  # still usable
    t.disable()
    t.close()
    assert t.closed
    t.close()  # idempotent
    for call in (t.read, t.enable, t.disable, lambda: t.available, lambda: t.dropped, lambda: t.notify_every_n_bytes):
        with pytest.raises(zehal.InvalidArgumentError) as info:
            call()
        assert info.value.result_name == "ZE_RESULT_ERROR_INVALID_NULL_HANDLE"
    assert not t.enabled
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.MetricDecoder(t)
    tracer_of(quiet, "EngineEvents").close()  # the device's slot is free again


def test_context_manager_disables_and_closes(quiet):
    with tracer_of(quiet, "EngineEvents") as t:
        t.enable()
    assert t.closed
    tracer_of(quiet, "EngineEvents").close()


def test_dropping_an_enabled_tracer_frees_the_device(sim_backend):
    d = zehal.sim_device(async_records_per_s=100_000)
    t = tracer_of(d, "AsyncEvents")
    t.enable()
    del t
    import gc

    gc.collect()
    tracer_of(d, "AsyncEvents").close()


def test_enable_on_lost_device(quiet):
    t = tracer_of(quiet, "EngineEvents")
    quiet.lose()
    with pytest.raises(zehal.DeviceLostError):
        t.enable()
    assert not t.enabled
    t.close()


def test_notification_event(sim):
    pool = zehal.EventPool(sim, 1)
    ev = pool.event(0)
    t = tracer_of(sim, "AsyncEvents", notify_every_n_bytes=100 * RECORD, notification=ev)
    assert not ev.query()
    t.enable()
    ev.synchronize(timeout=10)
    assert len(t.read()) >= 100 * RECORD
    ev.reset()
    ev.synchronize(timeout=10)
    assert t.available >= 100 * RECORD
    t.disable()
    t.close()


def test_host_ring_drops_are_counted_and_marked(sim_backend):
    d = zehal.sim_device(async_records_per_s=2_000_000)
    t = tracer_of(d, "AsyncEvents")
    t.enable()
    deadline = time.monotonic() + 10
    while t.dropped == 0:  # 4 MiB ring, nobody reading
        assert time.monotonic() < deadline
        time.sleep(0.01)
    t.disable()
    produced = t.produced
    recs = records(read_until_drained(t))
    lost = recs[recs["kind"] == _zehal.RECORD_DROPPED]["value"].sum()
    samples = np.count_nonzero(recs["kind"] == _zehal.RECORD_SAMPLE)
    assert lost == t.dropped > 0
    assert samples + lost == produced
    assert np.array_equal(recs["sequence"], np.arange(len(recs), dtype=np.uint32))
    t.close()


def test_async_burst_arrives_whole_through_a_smaller_ring(sim_backend):
    """A hardware buffer pre-filled with more records than the host ring holds: with a
    reader draining, every record arrives, in order, and nothing is lost."""
    burst = 200_000  # 6.4 MB of records through the 4 MiB ring
    d = zehal.sim_device(async_records_per_s=0, async_burst_records=burst, trace_buffer_bytes=2 * burst * RECORD)
    t = tracer_of(d, "AsyncEvents")
    t.enable()
    assert t.produced == burst
    chunks = []
    deadline = time.monotonic() + 20
    while sum(map(len, chunks)) < (burst + 2) * RECORD:  # the burst, the clock sync, the enable
        assert time.monotonic() < deadline
        chunks.append(t.read())
    t.disable()
    recs = records(b"".join(chunks) + read_until_drained(t))
    samples = recs[recs["kind"] == _zehal.RECORD_SAMPLE]
    assert len(samples) == burst and t.dropped == 0
    assert np.array_equal(samples[samples["metric"] == 0]["value"], np.arange(burst // 2))
    assert np.array_equal(recs["sequence"], np.arange(len(recs), dtype=np.uint32))
    t.close()


def test_stress_millions_of_records_accounted_exactly(sim_backend):
    """The asynchronous source produces millions of records in about two seconds while one
    reader drains: received + reported dropped == produced, sequences consistent."""
    d = zehal.sim_device(async_records_per_s=2_000_000)
    t = tracer_of(d, "AsyncEvents")
    samples = lost = n = 0
    expect_seq = 0
    seq_ok = True
    last_counter = -1
    counter_ok = True

    def take(raw):
        nonlocal samples, lost, n, expect_seq, seq_ok, last_counter, counter_ok
        r = records(raw)
        if not len(r):
            return
        seq = r["sequence"].astype(np.int64)
        seq_ok &= bool(seq[0] == expect_seq) and bool(np.all(np.diff(seq) == 1))
        expect_seq = (int(seq[-1]) + 1) & 0xFFFFFFFF
        is_sample = r["kind"] == _zehal.RECORD_SAMPLE
        samples += int(np.count_nonzero(is_sample))
        lost += int(r[r["kind"] == _zehal.RECORD_DROPPED]["value"].sum())
        counters = r[is_sample & (r["metric"] == 0)]["value"].astype(np.int64)
        if len(counters):
            counter_ok &= bool(counters[0] > last_counter) and bool(np.all(np.diff(counters) > 0))
            last_counter = int(counters[-1])
        n += len(r)

    t.enable()
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        raw = t.read()
        take(raw)
        if not raw:
            time.sleep(0.0002)
    t.disable()
    produced = t.produced
    take(read_until_drained(t))
    assert produced > 1_000_000
    assert seq_ok
    assert counter_ok
    assert lost == t.dropped
    assert samples + lost == produced
    t.close()


def test_concurrent_readers_get_every_record_once(sim_backend):
    d = zehal.sim_device(async_records_per_s=300_000)
    t = tracer_of(d, "AsyncEvents")
    t.enable()
    stop = threading.Event()
    got: list[list[np.ndarray]] = [[] for _ in range(4)]
    errors = []

    def reader(i):
        try:
            while True:
                try:
                    raw = t.read(1000 + 517 * i)
                except zehal.NotReadyError:
                    if stop.is_set():
                        return
                    continue
                got[i].append(records(raw).copy())
        except Exception as e:  # noqa: BLE001 - collected for the assert
            errors.append(e)

    threads = [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(4)]
    try:
        for th in threads:
            th.start()
        time.sleep(0.3)
        t.disable()
    finally:
        stop.set()
        for th in threads:
            th.join(timeout=60)
    assert not errors
    produced = t.produced
    allr = np.concatenate([np.concatenate(g) for g in got if g])
    allr = allr[np.argsort(allr["sequence"], kind="stable")]
    assert np.array_equal(allr["sequence"], np.arange(len(allr), dtype=np.uint32))
    samples = np.count_nonzero(allr["kind"] == _zehal.RECORD_SAMPLE)
    lost = allr[allr["kind"] == _zehal.RECORD_DROPPED]["value"].sum()
    assert samples + lost == produced
    t.close()


def test_concurrent_enablers_keep_the_stream_well_formed(quiet):
    t = tracer_of(quiet, "EngineEvents")
    errors = []
    chunks = []
    stop = threading.Event()

    def toggler(seed):
        rng = random.Random(seed)
        try:
            for _ in range(60):
                if rng.random() < 0.5:
                    t.enable(synchronous=rng.random() < 0.5)
                else:
                    t.disable(synchronous=rng.random() < 0.5)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    def reader():
        while not stop.is_set():
            try:
                chunks.append(t.read())
            except zehal.NotReadyError:
                time.sleep(0.0005)
            except Exception as e:  # noqa: BLE001 - collected for the assert
                errors.append(e)
                return

    r = threading.Thread(target=reader, daemon=True)
    threads = [threading.Thread(target=toggler, args=(i,), daemon=True) for i in range(4)]
    try:
        r.start()
        for th in threads:
            th.start()
        copies(quiet, 10, 256)
    finally:
        for th in threads:
            th.join(timeout=60)
        try:
            t.disable()
        finally:
            stop.set()
            r.join(timeout=60)
    recs = records(b"".join(chunks) + read_until_drained(t))
    assert not errors
    assert np.array_equal(recs["sequence"], np.arange(len(recs), dtype=np.uint32))
    on = False
    for kind in recs["kind"]:
        if kind == _zehal.RECORD_ENABLE:
            assert not on
            on = True
        elif kind == _zehal.RECORD_DISABLE:
            assert on
            on = False
        elif kind == _zehal.RECORD_SAMPLE:
            assert on
    assert not on
    t.close()


def test_read_releases_the_gil(sim):
    """A thread blocked in native tracer calls lets Python threads run."""
    t = tracer_of(sim, "AsyncEvents")
    t.enable()
    stop = threading.Event()
    ticks = 0

    def spin():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    th = threading.Thread(target=spin, daemon=True)
    th.start()
    try:
        for _ in range(200):
            t.read()
        t.disable()
    finally:
        stop.set()
        th.join(timeout=60)
    assert ticks > 0
    t.close()


def test_notification_from_a_pool_that_is_not_host_visible(sim):
    pool = zehal.EventPool(sim, 1, host_visible=False)
    assert pool.flags & 1 == 0
    with pytest.raises(zehal.InvalidArgumentError) as info:
        tracer_of(sim, "AsyncEvents", notification=pool.event(0))
    assert info.value.result_name == "ZE_RESULT_ERROR_INVALID_ARGUMENT"
    # Nothing was claimed: a tracer with a host-visible event can still be made.
    t = tracer_of(sim, "AsyncEvents", notification=zehal.EventPool(sim, 1).event(0))
    t.close()


def test_close_while_other_threads_call_the_tracer(sim):
    """close() from one thread while others are inside enable/disable/read without the
    GIL: they finish or raise InvalidArgumentError (closed), never touch freed memory."""
    for _ in range(20):
        t = tracer_of(sim, "AsyncEvents")
        go = threading.Event()
        errors = []

        def worker(k, t=t, go=go, errors=errors):  # this iteration's objects
            go.wait()
            try:
                for i in range(200):
                    if k == 0:
                        (t.enable if i % 2 else t.disable)(synchronous=True)
                    else:
                        t.read()
            except (zehal.InvalidArgumentError, zehal.NotReadyError):
                pass
            except Exception as e:  # noqa: BLE001 - collected for the assert
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(3)]
        try:
            for th in threads:
                th.start()
            go.set()
            for _ in range(1000):
                try:
                    t.close()
                    break
                except zehal.ObjectInUseError:
                    time.sleep(0.0002)
        finally:
            go.set()
            for th in threads:
                th.join(timeout=60)
        if not t.closed:
            t.disable()
            t.close()
        assert not errors
        t.close()  # idempotent
        with pytest.raises(zehal.InvalidArgumentError):
            t.read()


def test_lost_device_refuses_activation_tracers_and_enable(sim):
    t = tracer_of(sim, "EngineEvents")
    t.enable()
    sim.lose()
    with pytest.raises(zehal.DeviceLostError):
        zehal.activate_metric_groups(sim, [group(sim, "EngineEvents")])
    t.disable()
    with pytest.raises(zehal.DeviceLostError):
        t.enable()
    assert len(read_until_drained(t)) > 0  # what was gathered stays readable
    t.close()
    with pytest.raises(zehal.DeviceLostError):
        zehal.MetricTracer(sim, [group(sim, "EngineEvents")])


def test_two_threads_closing_at_once_both_return(sim):
    for _ in range(20):
        t = tracer_of(sim, "AsyncEvents")
        t.enable()
        t.disable()
        errors = []
        go = threading.Event()

        def closer(t=t, go=go, errors=errors):  # this iteration's objects
            go.wait()
            try:
                t.close()
            except Exception as e:  # noqa: BLE001 - collected for the assert
                errors.append(e)

        threads = [threading.Thread(target=closer, daemon=True) for _ in range(2)]
        try:
            for th in threads:
                th.start()
            go.set()
        finally:
            go.set()
            for th in threads:
                th.join(timeout=60)
        assert not errors
        assert t.closed
