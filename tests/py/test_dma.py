"""DMA engines and requests from Python (contract §2.4 and 8): round trips across every pair
of kinds, both operators, fire-and-forget and barriers, waits and cancels, keep-alive of
operands, the GIL released in waits, threads, errors, and NumPy data moved by a copy."""

from __future__ import annotations

import gc
import sys
import threading
import time
import weakref

import numpy as np
import pytest
import zehal
from conftest import check_one_parameter_calls


def host_area(device):
    # Host memory of the device's backend: Area.host() maps that of the default backend.
    if device.backend == zehal.default_device().backend:
        return zehal.Area.host()
    return zehal.Area.shared(device)


def fill(dma, buf, data: bytes, staging_area):
    """Writes `data` into `buf` of any kind (through a host staging buffer)."""
    with staging_area.mmap(len(data)) as s:
        memoryview(s)[:] = data
        dma.copy(buf, s).wait()


def read(dma, buf, staging_area) -> bytes:
    with staging_area.mmap(buf.nbytes) as s:
        dma.copy(s, buf).wait()
        return bytes(memoryview(s))


def test_round_trips_across_every_pair(device):
    dma = zehal.Dma(device)
    host = host_area(device)
    areas = {"host": host, "device": zehal.Area.device(device), "shared": zehal.Area.shared(device)}
    rng = np.random.default_rng(1)
    for src_kind, src_area in areas.items():
        for dst_kind, dst_area in areas.items():
            for op in ("copy_1D", "memcpy"):
                data = rng.integers(0, 256, 40_000, dtype=np.uint8).tobytes()
                src = src_area.mmap(len(data))
                dst = dst_area.mmap(len(data))
                fill(dma, src, data, host)
                fill(dma, dst, bytes(len(data)), host)
                request = dma.copy(dst, src, op=op)
                request.wait()
                assert request.done
                assert read(dma, dst, host) == data, (src_kind, dst_kind, op)
                src.close()
                dst.close()
    dma.close()


def test_numpy_write_is_what_a_copy_moves(device):
    with zehal.Dma(device) as dma:
        src = host_area(device).mmap(1 << 16)
        dst = zehal.Area.device(device).mmap(1 << 16)
        back = zehal.Area.shared(device).mmap(1 << 16)
        a = np.frombuffer(src, dtype=np.float64)
        a[:] = np.linspace(0.0, 1.0, a.size)
        dma.copy(dst, src).wait()
        dma.copy(back, dst).wait()
        np.testing.assert_array_equal(np.frombuffer(back, dtype=np.float64), a)


def test_fire_and_forget_then_barrier(device):
    """As AML's own test: 128 fire-and-forget copies of 1 KiB, a barrier, every byte checked."""
    chunk, count = 1024, 128
    with zehal.Dma(device) as dma:
        src = host_area(device).mmap(chunk * count)
        dev = zehal.Area.device(device).mmap(chunk * count)
        back = zehal.Area.shared(device).mmap(chunk * count)
        data = np.random.default_rng(2).integers(0, 256, chunk * count, dtype=np.uint8)
        np.frombuffer(src, np.uint8)[:] = data
        for i in range(count):
            op = "copy_1D" if i % 2 else "memcpy"
            assert dma.copy(dev, src, chunk, op=op, request=False, dst_offset=i * chunk, src_offset=i * chunk) is None
        dma.barrier()
        for i in range(count):
            dma.copy(back, dev, chunk, request=False, dst_offset=i * chunk, src_offset=i * chunk)
        dma.barrier()
        assert dma.pending == 0
        np.testing.assert_array_equal(np.frombuffer(back, np.uint8), data)


def test_copy_1d_with_layouts_and_memcpy_of_one_mib(device):
    n = 1 << 20
    with zehal.Dma(device) as dma:
        src = host_area(device).mmap(n)
        dev = zehal.Area.device(device).mmap(n)
        back = zehal.Area.shared(device).mmap(n)
        data = np.random.default_rng(3).integers(0, 2**31, n // 4, dtype=np.uint32)
        np.frombuffer(src, np.uint32)[:] = data
        dma.copy(zehal.Layout.dense(dev, 4, n // 4), zehal.Layout.dense(src, 4, n // 4)).wait()
        dma.copy(back, dev, op="memcpy").wait()
        np.testing.assert_array_equal(np.frombuffer(back, np.uint32), data)


def test_request_flags_wait_and_cancel():
    sim = zehal.sim_device(bandwidth_bytes_per_s=32 << 20)  # 2 MiB take ~60 ms
    big = 2 << 20
    with zehal.Dma(sim) as dma:
        src = zehal.Area.shared(sim).mmap(big + 4096)
        dst = zehal.Area.shared(sim).mmap(big + 4096)
        memoryview(src)[:] = b"\x5a" * (big + 4096)
        memoryview(dst)[:] = bytes(big + 4096)
        first = dma.copy(dst, src, big, op="memcpy")
        second = dma.copy(zehal.Layout.dense(dst, 1, big + 4096), zehal.Layout.dense(src, 1, big + 4096), 4096)
        assert second.flags == zehal.Request.FLAGS_PENDING and not second.done
        with pytest.raises(zehal.NotReadyError):
            second.wait(timeout=0)
        second.cancel()  # queued behind the big copy: removed
        assert second.done and second.cancelled and second.flags == zehal.Request.FLAGS_DONE
        second.wait()  # returns at once
        second.cancel()  # done: nothing to do
        first.wait(timeout=30)
        first.wait()  # idempotent
        assert first.done and not first.cancelled
        dma.barrier()
        assert bytes(memoryview(dst)[:16]) == b"\x5a" * 16
        assert bytes(memoryview(dst)[big : big + 4096]) == bytes(4096)  # the cancelled copy never ran
        with pytest.raises(zehal.InvalidArgumentError):
            first.wait(timeout=-1)


def test_wait_arguments_are_parsed_as_python_parses_them():
    # Request.wait is a method of its own: its timeout is read as a float argument would be.
    import inspect

    assert str(inspect.signature(zehal.Request.wait)) == "(self, /, timeout=None)"
    sim = zehal.sim_device(bandwidth_bytes_per_s=32 << 20)  # 2 MiB take ~60 ms
    big = 2 << 20
    with zehal.Dma(sim) as dma:
        src = zehal.Area.shared(sim).mmap(big)
        dst = zehal.Area.shared(sim).mmap(big)
        slow = dma.copy(dst, src)
        with pytest.raises(zehal.NotReadyError):
            slow.wait(0)  # by position, an int
        with pytest.raises(zehal.NotReadyError):
            slow.wait(timeout=np.float32(0.0))
        with pytest.raises(TypeError, match="number of seconds or None"):
            slow.wait("1")
        check_one_parameter_calls(slow.wait, "timeout", 1, "seconds")
        with pytest.raises(zehal.InvalidArgumentError):
            slow.wait(float("nan"))
        with pytest.raises(TypeError):
            zehal.Request.wait(dma)  # self of another class
        slow.wait(timeout=None)
        slow.wait(float("inf"))
        assert slow.done


def test_cancel_in_flight_waits(sim):
    throttled = zehal.sim_device(bandwidth_bytes_per_s=64 << 20)
    with zehal.Dma(throttled) as dma:
        src = zehal.Area.shared(throttled).mmap(4 << 20)
        dst = zehal.Area.device(throttled).mmap(4 << 20)
        r = dma.copy(dst, src)
        time.sleep(0.01)  # let it start; cancel then waits for it (or takes it back if not)
        r.cancel()
        assert r.done


def test_barrier_after_the_newest_copy_was_cancelled(sim):
    """The newest copy cancelled before it ran: a barrier still waits for the copies before it."""
    throttled = zehal.sim_device(bandwidth_bytes_per_s=64 << 20)
    with zehal.Dma(throttled) as dma:
        size = 4 << 20  # ~60 ms at 64 MiB/s
        src = zehal.Area.shared(throttled).mmap(size)
        dst = zehal.Area.shared(throttled).mmap(size)
        memoryview(src)[:] = b"\x5a" * size
        dma.copy(dst, src, request=False)
        last = dma.copy(dst, src, 4096)
        last.cancel()
        dma.barrier()
        assert dma.pending == 0
        assert bytes(memoryview(dst)[size - 16 :]) == b"\x5a" * 16  # the first copy completed
        assert last.done


def test_barrier_then_wait(device):
    with zehal.Dma(device) as dma:
        src = zehal.Area.shared(device).mmap(1 << 16)
        dst = zehal.Area.device(device).mmap(1 << 16)
        requests = [dma.copy(dst, src) for _ in range(16)]
        dma.barrier()
        assert all(r.done and r.flags == zehal.Request.FLAGS_DONE for r in requests)
        for r in requests:
            r.wait()


def test_a_pending_request_keeps_its_buffers_alive():
    sim = zehal.sim_device(bandwidth_bytes_per_s=16 << 20)
    dma = zehal.Dma(sim)
    big_src = zehal.Area.shared(sim).mmap(4 << 20)
    big_dst = zehal.Area.device(sim).mmap(4 << 20)
    dma.copy(big_dst, big_src, request=False)  # ~250 ms of copy ahead of the next ones
    src = zehal.Area.shared(sim).mmap(4096)
    dst = zehal.Area.device(sim).mmap(4096)
    watch = [weakref.ref(src), weakref.ref(dst)]
    r = dma.copy(dst, src)
    del src, dst  # the request holds them while pending
    gc.collect()
    assert not r.done
    assert all(w() is not None for w in watch)
    r.wait()
    del r
    gc.collect()
    assert all(w() is None for w in watch)  # released once done

    # Fire-and-forget copies, and requests dropped before their copy: the engine holds them.
    src = zehal.Area.shared(sim).mmap(4096)
    dst = zehal.Area.device(sim).mmap(4096)
    watch = [weakref.ref(src), weakref.ref(dst)]
    dma.copy(big_dst, big_src, request=False)
    dma.copy(dst, src, request=False)
    dropped = dma.copy(src, dst)
    del src, dst, dropped
    gc.collect()
    assert all(w() is not None for w in watch)
    dma.barrier()
    gc.collect()
    assert all(w() is None for w in watch)
    dma.close()


def test_dropping_an_engine_waits_for_its_copies():
    sim = zehal.sim_device(bandwidth_bytes_per_s=64 << 20)
    dma = zehal.Dma(sim)
    src = zehal.Area.shared(sim).mmap(2 << 20)
    dst = zehal.Area.shared(sim).mmap(2 << 20)
    memoryview(src)[:] = b"\x33" * (2 << 20)
    dma.copy(dst, src, request=False)
    watch = weakref.ref(src)
    keep = np.frombuffer(dst, np.uint8)  # dst stays; src goes with the engine
    del dma, src
    gc.collect()
    assert watch() is None  # released only after the engine waited for the copy
    assert keep[-1] == 0x33


def test_buffer_close_waits_for_its_copies():
    sim = zehal.sim_device(bandwidth_bytes_per_s=64 << 20)
    with zehal.Dma(sim) as dma:
        src = zehal.Area.shared(sim).mmap(2 << 20)
        dst = zehal.Area.device(sim).mmap(2 << 20)
        r = dma.copy(dst, src)
        src.close()  # waits for the copy reading it
        assert r.done


def test_waits_release_the_gil():
    sim = zehal.sim_device(bandwidth_bytes_per_s=32 << 20)  # ~120 ms for 4 MiB
    with zehal.Dma(sim) as dma:
        src = zehal.Area.shared(sim).mmap(4 << 20)
        dst = zehal.Area.device(sim).mmap(4 << 20)
        ticks = []
        stop = threading.Event()

        def count():
            while not stop.is_set():
                ticks.append(1)
                time.sleep(0.001)

        t = threading.Thread(target=count)
        t.start()
        time.sleep(0.005)
        before = len(ticks)
        dma.copy(dst, src).wait()
        during_wait = len(ticks) - before
        dma.copy(dst, src, request=False)
        before = len(ticks)
        dma.barrier()
        during_barrier = len(ticks) - before
        dma.copy(dst, src, request=False)
        before = len(ticks)
        dst.close()  # waits for the copy into it
        during_close = len(ticks) - before
        stop.set()
        t.join()
        assert during_wait > 0  # the other thread ran while this one waited
        assert during_barrier > 0
        assert during_close > 0


def test_eight_threads_on_one_engine(device):
    chunk, per_thread, threads = 4096, 32, 8
    size = chunk * per_thread * threads
    with zehal.Dma(device) as dma:
        src = zehal.Area.shared(device).mmap(size)
        mid = zehal.Area.device(device).mmap(size)
        back = zehal.Area.shared(device).mmap(size)
        data = np.random.default_rng(4).integers(0, 256, size, dtype=np.uint8)
        np.frombuffer(src, np.uint8)[:] = data
        errors = []

        def work(t):
            try:
                for i in range(per_thread):
                    off = (t * per_thread + i) * chunk
                    dma.copy(mid, src, chunk, op="memcpy", dst_offset=off, src_offset=off).wait()
                    r = dma.copy(back, mid, chunk, request=bool(i % 2), dst_offset=off, src_offset=off)
                    if i % 8 == 7:
                        dma.barrier()
                    if r is not None and i % 4 == 1:
                        r.wait()
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        dma.barrier()
        assert not errors
        np.testing.assert_array_equal(np.frombuffer(back, np.uint8), data)


def test_copy_errors(device):
    with zehal.Dma(device) as dma:
        a = zehal.Area.shared(device).mmap(4096)
        b = zehal.Area.device(device).mmap(1024)
        with pytest.raises(zehal.InvalidArgumentError):
            dma.copy(b, a)  # destination smaller than the source
        with pytest.raises(zehal.InvalidArgumentError):
            dma.copy(b, a, 2048, op="memcpy")
        with pytest.raises(zehal.InvalidArgumentError):
            dma.copy(b, a, 1024, src_offset=4000)  # past the end
        with pytest.raises(zehal.InvalidArgumentError):
            dma.copy(b, a, 0)  # nothing to copy
        with pytest.raises(zehal.InvalidArgumentError) as info:
            dma.copy(a, a, 100, op="memcpy", dst_offset=10)  # overlap
        assert info.value.aml_errno == 4  # AML_EDOM
        assert info.value.result_name == "ZE_RESULT_ERROR_OVERLAPPING_REGIONS"
        with pytest.raises(zehal.InvalidArgumentError):
            dma.copy(b, a, 16, op="copy_2D")
        with pytest.raises(zehal.InvalidArgumentError):
            dma.copy(zehal.Layout.dense(a, 4, (16, 16)), zehal.Layout.dense(a, 4, 256))  # not 1-D
        with pytest.raises(TypeError):
            dma.copy(b, 16)  # neither a Buffer, a Layout nor host memory
        with pytest.raises(zehal.InvalidArgumentError):
            dma.copy(b, a, -5)
        a.close()
        with pytest.raises(zehal.InvalidArgumentError):
            dma.copy(b, a, 16)  # closed buffer
        peer = zehal.Area.device(zehal.sim_device()).mmap(64)
        with pytest.raises(zehal.InvalidArgumentError):
            dma.copy(b, peer, 65)  # past the end of a peer device's buffer
        dma.copy(b, b, 512, op="memcpy", src_offset=512).wait()  # still usable
    with pytest.raises(zehal.InvalidArgumentError):
        dma.copy(b, b, 16)  # closed engine
    with pytest.raises(zehal.InvalidArgumentError):
        dma.barrier()
    dma.close()  # idempotent


def test_copy_arguments_are_parsed_as_python_parses_them(sim):
    # Dma.copy is a vectorcall method of its own: every way of passing its arguments, and
    # every malformed call, behaves as a Python function with that signature would.
    import inspect

    assert str(inspect.signature(zehal.Dma.copy)) == (
        "(self, /, dst, src, nbytes=None, *, op='copy_1D', request=True, signal=None, dst_offset=0, src_offset=0)"
    )
    host = zehal.Area.host()
    with zehal.Dma(sim) as dma, host.mmap(64) as a, host.mmap(64) as b:
        memoryview(a)[:] = bytes(range(64))
        dma.copy(b, a).wait()
        dma.copy(dst=b, src=a, nbytes=8).wait()
        dma.copy(b, a, 16, **{"op": "memcpy", "dst_offset": 8, "src_offset": 0}).wait()
        assert bytes(memoryview(b)[8:24]) == bytes(range(16))
        assert dma.copy(b, a, request=False) is None
        assert dma.copy(b, a, request=0) is None  # read as pybind11 reads a bool
        assert dma.copy(b, a, request=np.bool_(False)) is None
        dma.barrier()
        pool = zehal.EventPool(sim, 1)
        dma.copy(b, a, signal=pool.event(0)).wait()
        assert pool.event(0).query()
        with pytest.raises(TypeError, match="at most 3 positional"):
            dma.copy(b, a, 8, "memcpy")
        with pytest.raises(TypeError, match="unexpected keyword argument 'size'"):
            dma.copy(b, a, size=8)
        with pytest.raises(TypeError, match="multiple values for argument 'src'"):
            dma.copy(b, a, src=a)
        with pytest.raises(TypeError, match="missing required argument 'dst'"):
            dma.copy()
        with pytest.raises(TypeError, match="missing required argument 'src'"):
            dma.copy(b)
        with pytest.raises(TypeError, match="op must be"):
            dma.copy(b, a, op=1)
        with pytest.raises(TypeError, match="request must be True or False"):
            dma.copy(b, a, request="no")
        with pytest.raises(TypeError, match="signal must be a zehal.Event or None"):
            dma.copy(b, a, signal=pool)
        with pytest.raises(TypeError):
            zehal.Dma.copy(pool, b, a)  # self of another class
        assert str(inspect.signature(zehal.Dma.barrier)) == "(self, /)"
        with pytest.raises(TypeError):
            dma.barrier(1)
        with pytest.raises(TypeError):
            zehal.Dma.barrier(pool)
        assert bytes(memoryview(b)[:8]) == bytes(range(8))  # nothing refused was copied


def test_engines_of_a_device(device):
    props = device.properties
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.Dma(device, ordinal=2)
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.Dma(device, ordinal=1, index=props.copy_engines)
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.Dma(device, ordinal=0, index=props.compute_engines)
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.Dma(device, index=-1)
    with zehal.Dma(device, ordinal=0, index=0) as dma:
        assert (dma.ordinal, dma.index, dma.device) == (0, 0, device)
    d = zehal.Dma.default()
    assert d.device == zehal.default_device()
    assert d.ordinal == (1 if zehal.default_device().properties.copy_engines else 0)
    assert "zehal.Dma" in repr(d)
    d.close()
    assert d.closed and repr(d) == "<zehal.Dma closed>"


def test_signal_event_is_signalled_by_the_copy(device):
    pool = zehal.EventPool(device, 2)
    with zehal.Dma(device) as dma:
        a = zehal.Area.shared(device).mmap(4096)
        b = zehal.Area.device(device).mmap(4096)
        e = pool.event(0)
        r = dma.copy(b, a, signal=e)
        e.synchronize(timeout=30)
        r.wait()
        assert e.query()
        f = pool.event(1)
        assert dma.copy(a, b, signal=f, request=False) is None
        f.synchronize(timeout=30)


def test_lost_device_raises_device_lost():
    sim = zehal.sim_device(bandwidth_bytes_per_s=1024)  # 64 bytes: pending for ~60 ms
    dma = zehal.Dma(sim)
    a = zehal.Area.shared(sim).mmap(64)
    b = zehal.Area.device(sim).mmap(64)
    r = dma.copy(b, a)
    sim.lose()
    with pytest.raises(zehal.DeviceLostError) as info:
        r.wait()
    assert info.value.aml_errno == 1  # AML_FAILURE
    with pytest.raises(zehal.DeviceLostError):
        dma.copy(b, a)
    with pytest.raises(zehal.DeviceLostError):
        dma.barrier()
    dma.close()


def test_a_request_is_one_object_freed_with_its_references(device):
    with zehal.Dma(device) as dma:
        a = zehal.Area.shared(device).mmap(256)
        b = zehal.Area.device(device).mmap(256)
        counts = [sys.getrefcount(x) for x in (dma, a, b)]
        r = dma.copy(b, a)
        with r as entered:
            assert entered is r
        del entered
        assert type(r) is zehal.Request
        assert sys.getrefcount(r) == 2  # r, and getrefcount's argument
        with pytest.raises(AttributeError):
            r.extra = 1
        del r
        for _ in range(100):
            dma.copy(b, a).wait()
        dma.copy(b, a)  # dropped pending: the engine keeps its operands until done
        dma.barrier()
        assert dma.pending == 0
        assert [sys.getrefcount(x) for x in (dma, a, b)] == counts


def test_request_context_manager_waits(device):
    with zehal.Dma(device) as dma:
        a = zehal.Area.shared(device).mmap(256)
        b = zehal.Area.device(device).mmap(256)
        with dma.copy(b, a) as r:
            pass
        assert r.done
        assert repr(r) == "<zehal.Request done>"


def test_the_request_type_is_made_only_by_copies():
    assert zehal.Request.FLAGS_PENDING == 0 and zehal.Request.FLAGS_DONE == 1
    assert zehal.Request.__module__ == "zehal._zehal"
    with pytest.raises(TypeError):
        zehal.Request()
    with pytest.raises(TypeError):
        type("Mine", (zehal.Request,), {})
    sim = zehal.sim_device(bandwidth_bytes_per_s=32 << 20)  # 2 MiB take ~60 ms
    with zehal.Dma(sim) as dma:
        src = zehal.Area.shared(sim).mmap(2 << 20)
        dst = zehal.Area.shared(sim).mmap(2 << 20)
        r = dma.copy(dst, src)
        assert repr(r) == "<zehal.Request pending>"
        ref = weakref.ref(r)
        assert ref() is r
        with pytest.raises(TypeError, match="3 arguments"):
            r.__exit__(None)
        with pytest.raises(TypeError):
            r.__enter__(1)
        assert r.__exit__(None, None, None) is None  # waited
        assert r.done and not r.cancelled and r.flags == zehal.Request.FLAGS_DONE
        pending = dma.copy(dst, src)
        assert pending.__exit__(KeyError, KeyError("k"), None) is None  # cancelled, not swallowed
        assert pending.done
        del r
        assert ref() is None


def test_pending_counts_copies_until_they_complete():
    # Dma.pending asks the device: a copy nobody waited for stops counting once it completed.
    sim = zehal.sim_device(bandwidth_bytes_per_s=32 << 20)  # 2 MiB take ~60 ms
    with zehal.Dma(sim) as dma:
        src = zehal.Area.shared(sim).mmap(2 << 20)
        dst = zehal.Area.shared(sim).mmap(2 << 20)
        assert dma.pending == 0
        r = dma.copy(dst, src)
        assert dma.pending == 1
        deadline = time.monotonic() + 30
        while dma.pending and time.monotonic() < deadline:
            time.sleep(0.005)
        assert dma.pending == 0
        assert r.done  # seen done by the engine, not by a wait
        r.wait()
