"""EventPool and Event: creation, bad input, query/synchronize/signal/reset, timeouts,
threads, close and context managers."""

from __future__ import annotations

import threading

import pytest
import zehal

INVALID_NULL_HANDLE = 0x78000005


def test_pool_basics(device):
    pool = zehal.EventPool(device, 4)
    assert pool.count == 4 and len(pool) == 4
    assert pool.device == device
    assert pool.timestamps is None
    assert pool.flags == 1  # HOST_VISIBLE
    events = [pool.event(i) for i in range(4)]
    assert all(isinstance(e, zehal.Event) for e in events)
    assert pool[2] is not None
    assert all(e.timestamps is None for e in events)
    assert "EventPool" in repr(pool)


def test_pool_default_device():
    pool = zehal.EventPool()
    assert pool.count == 1
    assert pool.device == zehal.default_device()


@pytest.mark.parametrize("kind,flag", [("kernel", 4), ("mapped", 8)])
def test_pool_timestamp_flags(device, kind, flag):
    if not device.properties.kernel_timestamps:
        with pytest.raises(zehal.UnsupportedError):
            zehal.EventPool(device, 1, timestamps=kind)
        return
    pool = zehal.EventPool(device, 2, timestamps=kind)
    assert pool.flags == 1 | flag
    assert pool.timestamps == kind
    assert pool.event(1).timestamps == kind


def test_pool_bad_input(device):
    with pytest.raises(zehal.InvalidArgumentError) as info:
        zehal.EventPool(device, 0)
    assert info.value.result_name == "ZE_RESULT_ERROR_INVALID_SIZE"
    with pytest.raises(zehal.InvalidArgumentError) as info:
        zehal.EventPool(device, -3)
    assert info.value.result_name == "ZE_RESULT_ERROR_INVALID_SIZE"
    with pytest.raises(zehal.InvalidArgumentError) as info:
        zehal.EventPool(device, 1, timestamps="bogus")
    assert info.value.result_name == "ZE_RESULT_ERROR_INVALID_ENUMERATION"
    with pytest.raises(TypeError):
        zehal.EventPool(device, 1, "kernel")  # timestamps is keyword-only
    with pytest.raises(TypeError):
        zehal.EventPool("not a device", 1)
    pool = zehal.EventPool(device, 2)
    for bad in (2, 1000, -1):
        with pytest.raises(zehal.InvalidArgumentError):
            pool.event(bad)
    # The pool is still usable after bad input.
    pool.event(1).signal()
    assert pool.event(1).query()


def test_query_signal_reset(device):
    e = zehal.EventPool(device, 1).event(0)
    assert e.query() is False
    e.signal()
    assert e.query() is True
    e.signal()  # signalling twice is harmless
    assert e.query() is True
    e.reset()
    assert e.query() is False
    e.reset()
    assert e.query() is False


def test_events_of_a_pool_are_independent(device):
    pool = zehal.EventPool(device, 3)
    pool.event(1).signal()
    assert [pool.event(i).query() for i in range(3)] == [False, True, False]


def test_synchronize(device):
    e = zehal.EventPool(device, 1).event(0)
    with pytest.raises(zehal.NotReadyError) as info:
        e.synchronize(timeout=0.01)
    assert info.value.result_name == "ZE_RESULT_NOT_READY"
    with pytest.raises(zehal.NotReadyError):
        e.synchronize(timeout=0)
    e.signal()
    assert e.synchronize() is None
    assert e.synchronize(timeout=0) is None
    assert e.synchronize(timeout=float("inf")) is None


def test_synchronize_bad_timeout(device):
    e = zehal.EventPool(device, 1).event(0)
    for bad in (-1.0, float("nan"), float("-inf")):
        with pytest.raises(zehal.InvalidArgumentError):
            e.synchronize(timeout=bad)
    with pytest.raises(TypeError):
        e.synchronize(timeout="soon")


def test_synchronize_wakes_on_signal_from_another_thread(device):
    e = zehal.EventPool(device, 1).event(0)
    started = threading.Event()

    def signaller():
        started.wait()
        e.signal()

    t = threading.Thread(daemon=True, target=signaller)
    t.start()
    started.set()
    e.synchronize(timeout=30)  # generous: only guards against a hang
    t.join()
    assert e.query()


def test_synchronize_releases_the_gil(device):
    # The signalling thread needs the GIL to run Python code; if synchronize held it,
    # the wait could only end by timing out (NotReadyError).
    e = zehal.EventPool(device, 1).event(0)
    progress = []

    def worker():
        for i in range(1000):
            progress.append(i)
        e.signal()

    t = threading.Thread(daemon=True, target=worker)
    t.start()
    e.synchronize(timeout=30)
    t.join()
    assert len(progress) == 1000


def test_many_waiters(device):
    e = zehal.EventPool(device, 1).event(0)
    woke = []
    lock = threading.Lock()

    def waiter():
        e.synchronize(timeout=30)
        with lock:
            woke.append(True)

    threads = [threading.Thread(daemon=True, target=waiter) for _ in range(8)]
    for t in threads:
        t.start()
    e.signal()
    for t in threads:
        t.join()
    assert len(woke) == 8


def test_concurrent_signal_reset_query(device):
    pool = zehal.EventPool(device, 4)
    errors: list[BaseException] = []

    def worker(i):
        try:
            e = pool.event(i % 4)
            for _ in range(500):
                e.signal()
                e.query()
                e.reset()
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(daemon=True, target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_close_and_context_manager(device):
    with zehal.EventPool(device, 2) as pool:
        kept = pool.event(0)
        assert not pool.closed
    assert pool.closed
    with pytest.raises(zehal.InvalidArgumentError) as info:
        pool.event(0)
    assert info.value.code == INVALID_NULL_HANDLE
    with pytest.raises(zehal.InvalidArgumentError):
        _ = pool.count
    pool.close()  # idempotent
    assert "closed" in repr(pool)
    # An event taken before close keeps its pool alive and stays usable.
    kept.signal()
    kept.synchronize(timeout=5)
    assert kept.query()


def test_event_outlives_its_pool_object(device):
    e = zehal.EventPool(device, 1).event(0)
    import gc

    gc.collect()
    e.signal()
    assert e.query()


def test_timestamps_need_a_timestamp_pool(device):
    e = zehal.EventPool(device, 1).event(0)
    e.signal()
    with pytest.raises(zehal.UnsupportedError):
        e.kernel_timestamps()
    with pytest.raises(zehal.UnsupportedError):
        e.synchronized_timestamps()


def test_lost_device_fails_waits(sim):
    e = zehal.EventPool(sim, 1).event(0)
    sim.lose()
    with pytest.raises(zehal.DeviceLostError):
        e.synchronize(timeout=1)


def test_signalled_by_a_copy(device):
    area = zehal.Area.device(device)
    src, dst = area.mmap(4096), area.mmap(4096)
    pool = zehal.EventPool(device, 1)
    e = pool.event(0)
    dma = zehal.Dma(device)
    dma.copy(dst, src, signal=e, request=False)
    e.synchronize(timeout=30)
    assert e.query()
    dma.barrier()
    area.munmap(src)
    area.munmap(dst)


def test_pool_that_is_not_host_visible(device):
    pool = zehal.EventPool(device, 2, host_visible=False)
    assert pool.flags & 1 == 0
    assert zehal.EventPool(device, 1).flags & 1 == 1
    if device.properties.kernel_timestamps:
        assert zehal.EventPool(device, 1, timestamps="kernel", host_visible=False).flags == 4
    with pytest.raises(TypeError):
        zehal.EventPool(device, 1, host_visible="no")
