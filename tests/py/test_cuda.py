"""The cuda backend from Python: DLPack device types and hand-over to CuPy and PyTorch,
``__cuda_array_interface__`` v3, memory kinds, ``ZEHAL_BACKEND=cuda``, timestamps, and
the tracer with its export group. Every test is marked ``cuda`` and skipped, with the
backend's reason, where no CUDA device exists."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
import zehal
from conftest import cuda_device, run_python

pytestmark = pytest.mark.cuda

KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 2, 3, 13


@pytest.fixture
def gpu() -> zehal.Device:
    return cuda_device()


def ordinal(device: zehal.Device) -> int:
    return zehal.devices("cuda").index(device)


def pattern(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)


def to_device(gpu: zehal.Device, data: np.ndarray) -> zehal.Buffer:
    """A device buffer holding `data`, copied in through a pinned host buffer."""
    host = zehal.Area.host().mmap(data.nbytes)
    np.frombuffer(host, dtype=np.uint8)[:] = data
    dev = zehal.Area.device(gpu).mmap(data.nbytes)
    zehal.Dma(gpu).copy(dev, host).wait()
    return dev


def from_device(gpu: zehal.Device, buf: zehal.Buffer) -> np.ndarray:
    host = zehal.Area.host().mmap(buf.nbytes)
    zehal.Dma(gpu).copy(host, buf).wait()
    return np.frombuffer(host, dtype=np.uint8).copy()


def test_backend_and_properties(gpu):
    assert gpu.backend == "cuda"
    p = gpu.properties
    assert p.timer_hz == 1_000_000_000
    assert p.kernel_timestamp_valid_bits == 64 and p.timestamp_valid_bits == 64
    assert p.copy_engines >= 1 and p.memory_bytes > 0
    assert p.kernel_timestamps and p.synchronized_timestamps


def test_zehal_backend_env_selects_cuda(gpu):
    out = run_python(
        "import zehal; d = zehal.default_device(); print(d.backend, zehal.Area.default_device().device.backend)",
        env={"ZEHAL_BACKEND": "cuda"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["cuda", "cuda"]


@pytest.mark.parametrize(
    "make, kind, dl_type",
    [
        (lambda d: zehal.Area.device(d), "device", KDL_CUDA),
        (lambda d: zehal.Area.shared(d), "shared", KDL_CUDA_MANAGED),
        (lambda d: zehal.Area.host(), "host", KDL_CUDA_HOST),
    ],
)
def test_dlpack_device_types(gpu, make, kind, dl_type):
    with make(gpu) as area:
        buf = area.mmap(4096)
        assert buf.kind == kind
        dev_type, dev_id = buf.__dlpack_device__()
        assert dev_type == dl_type
        assert dev_id == (0 if kind == "host" else ordinal(gpu))
        capsule = buf.__dlpack__(max_version=(1, 0))
        assert "dltensor_versioned" in repr(capsule)
        with pytest.raises(BufferError):
            buf.__dlpack__(copy=True)
        with pytest.raises(BufferError):
            buf.__dlpack__(dl_device=(1, 0))


def test_cuda_array_interface_v3(gpu):
    buf = zehal.Area.device(gpu).mmap(1000)
    cai = buf.__cuda_array_interface__
    assert cai["version"] == 3
    assert cai["shape"] == (1000,)
    assert cai["typestr"] == "|u1"
    assert cai["data"] == (buf.ptr, False)
    assert cai.get("strides") is None
    shared = zehal.Area.shared(gpu).mmap(64)
    assert shared.__cuda_array_interface__["data"][0] == shared.ptr
    pinned = zehal.Area.host().mmap(64)  # device-accessible pinned memory of the cuda backend
    assert pinned.__cuda_array_interface__["data"][0] == pinned.ptr
    assert not hasattr(zehal.Area.device(zehal.sim_device()).mmap(64), "__cuda_array_interface__")


def test_device_memory_is_not_a_host_buffer(gpu):
    buf = zehal.Area.device(gpu).mmap(64)
    with pytest.raises(BufferError):
        memoryview(buf)


def test_pinned_host_memory_to_numpy_without_copy(gpu):
    buf = zehal.Area.host().mmap(256)
    view = np.from_dlpack(buf)
    assert view.ctypes.data == buf.ptr
    view[:] = pattern(256, 1)
    assert np.array_equal(np.frombuffer(buf, dtype=np.uint8), pattern(256, 1))


def test_cupy_from_dlpack_shares_device_memory(gpu):
    cp = pytest.importorskip("cupy")
    data = pattern(1 << 20, 2)
    buf = to_device(gpu, data)
    with cp.cuda.Device(ordinal(gpu)):
        arr = cp.from_dlpack(buf)
        assert arr.data.ptr == buf.ptr
        assert arr.dtype == cp.uint8 and arr.shape == (1 << 20,)
        assert np.array_equal(cp.asnumpy(arr), data)
        arr[:] = 7  # CuPy writes, zehal reads back
        cp.cuda.Device().synchronize()
    assert np.array_equal(from_device(gpu, buf), np.full(1 << 20, 7, np.uint8))


def test_cupy_managed_memory_and_cuda_array_interface(gpu):
    cp = pytest.importorskip("cupy")
    shared = zehal.Area.shared(gpu).mmap(4096)
    np.frombuffer(shared, dtype=np.uint8)[:] = 3  # host-accessible
    with cp.cuda.Device(ordinal(gpu)):
        arr = cp.from_dlpack(shared)
        assert arr.data.ptr == shared.ptr
        assert int(arr.sum()) == 3 * 4096
        via_cai = cp.asarray(zehal.Area.device(gpu).mmap(512))
        assert via_cai.shape == (512,) and via_cai.dtype == cp.uint8


def test_torch_from_dlpack_shares_device_memory(gpu):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch built without CUDA")
    data = pattern(4096, 3)
    buf = to_device(gpu, data)
    t = torch.from_dlpack(buf)
    assert t.device.type == "cuda" and t.device.index == ordinal(gpu)
    assert t.data_ptr() == buf.ptr
    assert t.dtype == torch.uint8 and t.numel() == 4096
    assert np.array_equal(t.cpu().numpy(), data)
    t.add_(1)  # PyTorch writes, zehal reads back
    torch.cuda.synchronize()
    assert np.array_equal(from_device(gpu, buf), (data + 1).astype(np.uint8))


def test_round_trips_between_every_kind(gpu):
    areas = {"host": zehal.Area.host(), "device": zehal.Area.device(gpu), "shared": zehal.Area.shared(gpu)}
    data = pattern((1 << 16) + 5, 4)
    src = areas["host"].mmap(data.nbytes)
    np.frombuffer(src, dtype=np.uint8)[:] = data
    dma = zehal.Dma(gpu)
    for a in areas.values():
        for b in areas.values():
            x, y = a.mmap(data.nbytes), b.mmap(data.nbytes)
            dma.copy(x, src).wait()
            dma.copy(y, x).wait()
            assert np.array_equal(from_device(gpu, y), data)


def test_synchronized_timestamps_between_host_reads(gpu):
    pool = zehal.EventPool(gpu, 1, timestamps="mapped")
    ev = pool.event(0)
    src, dst = zehal.Area.host().mmap(1 << 20), zehal.Area.device(gpu).mmap(1 << 20)
    dma = zehal.Dma(gpu)
    for _ in range(50):
        ev.reset()
        before = time_ns_raw()
        dma.copy(dst, src, request=False, signal=ev)
        ev.synchronize()
        after = time_ns_raw()
        ts = ev.synchronized_timestamps()
        assert len(ts) == 1
        assert before <= ts["global_start"][0] <= ts["global_end"][0] <= after
        k = ev.kernel_timestamps()
        assert k["global_start"][0] <= k["global_end"][0]


def time_ns_raw() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)


def groups_of(gpu: zehal.Device):
    if not gpu.properties.tracer:
        pytest.skip("no CUPTI on this machine: the cuda device has no tracer")
    groups = gpu.metric_groups()
    engine = next(g for g in groups if not g.type_flags & 1)
    export = next(g for g in groups if g.type_flags & 1)
    return engine, export


def test_tracer_sees_copies(gpu):
    engine, _ = groups_of(gpu)
    zehal.activate_metric_groups(gpu, [engine])
    src, dst = zehal.Area.host().mmap(1 << 20), zehal.Area.device(gpu).mmap(1 << 20)
    with zehal.MetricTracer(gpu, [engine]) as tracer:
        tracer.enable()
        before = time_ns_raw()
        zehal.Dma(gpu).copy(dst, src).wait()
        after = time_ns_raw()
        raw = b""
        for _ in range(200):  # CUPTI hands records over every few ms
            raw += tracer.read()
            if len(raw) >= 7 * 32:
                break
            time.sleep(0.01)
        tracer.disable()
        raw += tracer.read()
        decoder = zehal.MetricDecoder(tracer)
    entries, counts = decoder.decode(raw)
    names = [m.name for m in decoder.decodable_metrics]
    moved = [e for e in entries if names[e["metric_index"]] == "BytesMoved"]
    assert any(int(e["value"]) == 1 << 20 for e in moved)
    starts = [int(e["timestamp"]) for e in entries if names[e["metric_index"]] == "CommandStart"]
    assert starts and all(before - 1_000_000 <= t <= after + 1_000_000 for t in starts)
    assert sum(counts) == len(entries)


def test_export_group_write_becomes_an_entry(gpu):
    _, export = groups_of(gpu)
    if not gpu.properties.dma_buf_export:
        with pytest.raises(zehal.UnsupportedError):
            export.export_dma_buf()
        pytest.skip("the device does not export dma-bufs")
    fd, size = export.export_dma_buf()
    assert fd >= 0 and size > 0
    os.fstat(fd)  # a real, open file
    imported = zehal.Area.import_dma_buf(fd, size, gpu)
    assert imported.kind == "device" and imported.nbytes == size
    zehal.activate_metric_groups(gpu, [export])
    src = zehal.Area.host().mmap(4096)
    np.frombuffer(src, dtype=np.uint8)[:] = 0xAB
    with zehal.MetricTracer(gpu, [export]) as tracer:
        tracer.enable()
        zehal.Dma(gpu).copy(imported, src, 4096).wait()
        raw = b""
        for _ in range(200):
            raw += tracer.read()
            if raw:
                break
            time.sleep(0.01)
        tracer.disable()
        raw += tracer.read()
        entries, _ = zehal.MetricDecoder(tracer).decode(raw)
    assert any(int(e["value"]) & 0xFF == 0xAB for e in entries)
    foreign = os.open("/dev/null", os.O_RDONLY)
    try:
        with pytest.raises(zehal.UnsupportedError):
            zehal.Area.import_dma_buf(foreign, 4096, gpu)
    finally:
        os.close(foreign)
