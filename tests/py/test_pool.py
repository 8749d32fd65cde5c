"""Pooled areas from Python (contract §10): Area.pool, stats(), trim()."""

import threading

import numpy as np
import pytest
import zehal
from conftest import check_one_parameter_calls


def test_a_pool_is_an_area_of_its_upstreams_kind(sim):
    up = zehal.Area.device(sim, alignment=4096)
    pool = zehal.Area.pool(up, initial_bytes=1 << 20)
    assert pool.is_pool and not up.is_pool
    assert pool.kind == "device" and pool.alignment == 4096 and pool.device == sim
    s = pool.stats()
    assert s["bytes_reserved"] == 1 << 20 and s["upstream_allocations"] == 1
    buf = pool.mmap(5000)
    assert buf.ptr % 4096 == 0 and buf.kind == "device"
    assert pool.stats()["bytes_in_use"] == 5000
    buf.close()
    assert pool.stats()["bytes_in_use"] == 0


def test_pooled_host_memory_speaks_the_buffer_protocol_and_dma(sim):
    pool = zehal.Area.pool(zehal.Area.host())
    dev_pool = zehal.Area.pool(zehal.Area.device(sim))
    src, back = pool.mmap(1 << 16), pool.mmap(1 << 16)
    np.frombuffer(src, dtype=np.uint8)[:] = 9
    mid = dev_pool.mmap(1 << 16)
    dma = zehal.Dma(sim)
    dma.copy(mid, src).wait()
    dma.copy(back, mid).wait()
    assert int(np.frombuffer(back, dtype=np.uint8).sum()) == 9 << 16
    for b in (src, back, mid):
        b.close()


def test_reuse_is_a_cache_hit(sim):
    pool = zehal.Area.pool(zehal.Area.device(sim))
    a = pool.mmap(4096)
    ptr = a.ptr
    a.close()
    b = pool.mmap(4096)
    assert b.ptr == ptr
    assert pool.stats()["cache_hits"] == 1
    b.close()


def test_maximum_and_bad_arguments(sim):
    up = zehal.Area.device(sim)
    pool = zehal.Area.pool(up, maximum_bytes=1 << 20)
    keep = pool.mmap(1 << 19)
    before = pool.stats()
    with pytest.raises(zehal.OutOfMemoryError):
        pool.mmap(1 << 20)
    assert pool.stats() == before
    keep.close()
    with pytest.raises(zehal.InvalidArgumentError, match="initial_bytes"):
        zehal.Area.pool(up, initial_bytes=2 << 20, maximum_bytes=1 << 20)
    with pytest.raises(zehal.InvalidArgumentError, match="maximum_bytes = 0"):
        zehal.Area.pool(up, maximum_bytes=0)
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.Area.pool(up, initial_bytes=-1)
    with pytest.raises(zehal.InvalidArgumentError, match="upstream is None"):
        zehal.Area.pool(None)
    with pytest.raises(zehal.UnsupportedError):
        up.stats()
    with pytest.raises(zehal.UnsupportedError):
        up.trim()


def test_trim_gives_memory_back(sim):
    pool = zehal.Area.pool(zehal.Area.device(sim))
    bufs = [pool.mmap(64 << 10) for _ in range(50)]
    assert pool.stats()["bytes_reserved"] > 0
    for b in bufs:
        b.close()
    pool.trim()
    assert pool.stats()["bytes_reserved"] == 0


def test_trim_gives_back_blocks_that_do_not_divide_a_slab(sim):
    # 40,000 bytes fall in a 48 KiB class: its blocks do not fill a 2 MiB slab exactly.
    pool = zehal.Area.pool(zehal.Area.device(sim))
    for _ in range(20):
        bufs = [pool.mmap(40_000) for _ in range(100)]
        for b in bufs:
            b.close()
        pool.trim()
        s = pool.stats()
        assert s["bytes_in_use"] == 0 and s["bytes_reserved"] == 0


def test_cached_blocks_go_back_when_the_device_runs_out(sim_backend):
    dev = zehal.sim_device(memory_bytes=64 << 20)
    pool = zehal.Area.pool(zehal.Area.device(dev))
    bufs = [pool.mmap(40_000) for _ in range(600)]
    for b in bufs:
        b.close()
    assert pool.stats()["bytes_reserved"] > 24 << 20
    big = pool.mmap(40 << 20)
    assert pool.stats()["bytes_in_use"] == 40 << 20
    big.close()


def test_sizes_that_overflow_are_refused(sim):
    up = zehal.Area.device(sim, alignment=4096)
    with pytest.raises(zehal.UnsupportedError, match="Area.pool"):
        zehal.Area.pool(up, initial_bytes=2**64 - 1)
    with pytest.raises(zehal.UnsupportedError, match="Area.pool"):
        zehal.Area.pool(up, initial_bytes=2**64 - 1, maximum_bytes=2**64 - 1)
    pool = zehal.Area.pool(up, maximum_bytes=2**64 - 1)
    for size in (2**64 - 1, 2**64 - 4096, 2**63):
        with pytest.raises((zehal.UnsupportedError, zehal.OutOfMemoryError)):
            pool.mmap(size)
    assert pool.stats()["bytes_reserved"] == 0
    pool.mmap(4096).close()


def test_threads_and_stats_exactness(sim):
    pool = zehal.Area.pool(zehal.Area.host())
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(500):
                b = pool.mmap(int(rng.integers(1, 1 << 16)))
                b.close()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    s = pool.stats()
    assert s["total_allocations"] == 2000 and s["allocations"] == 0 and s["bytes_in_use"] == 0


def test_mmap_and_close_arguments_are_parsed_as_python_parses_them(sim):
    # Area.mmap and Buffer.close are methods of their own (not pybind11's dispatch): every
    # way of calling them, and every malformed call, behaves as a Python method would.
    import inspect

    assert str(inspect.signature(zehal.Area.mmap)) == "(self, /, nbytes)"
    assert str(inspect.signature(zehal.Buffer.close)) == "(self, /)"
    pool = zehal.Area.pool(zehal.Area.device(sim))
    b = pool.mmap(nbytes=4096)
    assert b.nbytes == 4096
    b.close()
    b.close()  # idempotent
    assert pool.mmap(np.uint16(512)).nbytes == 512  # any integer, as operator.index reads it
    with pytest.raises(TypeError, match="missing required argument 'nbytes'"):
        pool.mmap()
    check_one_parameter_calls(pool.mmap, "nbytes", 8, "size")
    with pytest.raises(TypeError, match="must be an integer"):
        pool.mmap(8.0)
    with pytest.raises(zehal.InvalidArgumentError, match="nbytes = -1 is out of range"):
        pool.mmap(-1)
    with pytest.raises(TypeError):
        b.close(1)
    with pytest.raises(TypeError):
        zehal.Area.mmap(b, 8)  # self of another class
    with pytest.raises(TypeError):
        zehal.Buffer.close(pool)

    class Sub(zehal.Area):
        pass

    with pytest.raises(TypeError, match="not initialized"):
        zehal.Area.mmap(Sub.__new__(Sub), 8)
    assert pool.stats()["allocations"] == 0
