"""Host memory is host memory (contract §2.2): a host buffer of any area, of any backend,
is copied on every device of every backend; device and shared memory stay tied to their
device, and a copy that cannot be made names the operand and why. The tests marked
``cuda`` pair sim and CUDA (skipped, with the reason, where the cuda backend has no
device); those marked ``level_zero`` pair sim and level_zero (scripts/test.sh runs them
through zehal's own Level Zero driver)."""

from __future__ import annotations

import numpy as np
import pytest
import zehal
from conftest import cuda_device, level_zero_device


def round_trip(dma: zehal.Dma, host_src: zehal.Buffer, host_dst: zehal.Buffer, seed: int) -> None:
    """host_src → device memory of the engine's device → host_dst, checked."""
    n = host_src.nbytes
    data = np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)
    np.asarray(host_src)[:] = data
    np.asarray(host_dst)[:] = 0
    with zehal.Area.device(dma.device).mmap(n) as dev:
        dma.copy(dev, host_src).wait()
        dma.copy(host_dst, dev).wait()
    assert np.array_equal(np.asarray(host_dst), data)


def test_host_buffer_of_one_sim_device_is_copied_on_another(sim_backend):
    owner = zehal.default_device()
    other = zehal.sim_device()
    host = zehal.Area.host()
    src, dst = host.mmap(70_000), host.mmap(70_000)
    assert src.device == owner and owner != other
    dma = zehal.Dma(other)
    round_trip(dma, src, dst, 1)
    # Host to host, fire-and-forget, then a barrier.
    dma.copy(src, dst, request=False)
    dma.barrier()
    assert np.array_equal(np.asarray(src), np.asarray(dst))
    dma.close()


@pytest.mark.cuda
@pytest.mark.parametrize("kind", ["device", "shared"])
def test_memory_of_a_device_of_another_backend_names_the_operand_and_why(sim_backend, kind):
    a, b = zehal.sim_device(), cuda_device()
    foreign = getattr(zehal.Area, kind)(a).mmap(64)
    host = zehal.Area.host().mmap(64)
    dma = zehal.Dma(b)
    with pytest.raises(
        zehal.InvalidArgumentError, match=f"src is {kind} memory of .*usable only by devices of its own backend"
    ):
        dma.copy(host, foreign)
    with pytest.raises(zehal.InvalidArgumentError, match=f"dst is {kind} memory of {a.name} \\(sim\\)"):
        dma.copy(foreign, host)
    # The host operand is never the one named, and nothing was queued.
    with pytest.raises(zehal.InvalidArgumentError) as raised:
        dma.copy(foreign, host)
    assert "src" not in str(raised.value)
    assert dma.pending == 0
    dma.close()


@pytest.fixture
def gpu():
    return cuda_device()


@pytest.mark.cuda
@pytest.mark.parametrize("size", [64, 4096 + 3, (9 << 20) + 17])
def test_sim_host_memory_on_a_cuda_engine(gpu, monkeypatch, size):
    monkeypatch.setenv("ZEHAL_BACKEND", "sim")
    sim_host = zehal.Area.host()
    monkeypatch.setenv("ZEHAL_BACKEND", "cuda")
    cuda_host = zehal.Area.host()
    a, b = sim_host.mmap(size), sim_host.mmap(size)
    pinned = cuda_host.mmap(size)
    assert a.device.backend == "sim" and pinned.device.backend == "cuda"
    dma = zehal.Dma(gpu)
    round_trip(dma, a, b, 2)  # pageable both ways
    round_trip(dma, a, pinned, 3)  # pageable in, pinned out
    round_trip(dma, pinned, a, 4)  # pinned in, pageable out
    np.asarray(a)[:] = 7
    dma.copy(pinned, a).wait()  # host to host
    assert np.all(np.asarray(pinned) == 7)
    dma.close()


@pytest.mark.cuda
def test_cuda_host_memory_on_a_sim_engine(gpu, monkeypatch):
    monkeypatch.setenv("ZEHAL_BACKEND", "cuda")
    cuda_host = zehal.Area.host()
    monkeypatch.setenv("ZEHAL_BACKEND", "sim")
    sim = zehal.sim_device()
    src, dst = cuda_host.mmap(1 << 20), cuda_host.mmap(1 << 20)
    assert src.device.backend == "cuda"
    dma = zehal.Dma(sim)
    round_trip(dma, src, dst, 5)
    dma.close()


@pytest.mark.cuda
def test_device_memory_across_backends_names_the_operand(gpu, monkeypatch):
    monkeypatch.setenv("ZEHAL_BACKEND", "sim")
    sim = zehal.sim_device()
    host = zehal.Area.host().mmap(64)
    gpu_memory = zehal.Area.device(gpu).mmap(64)
    sim_memory = zehal.Area.device(sim).mmap(64)
    with pytest.raises(zehal.InvalidArgumentError, match=r"src is device memory of .*\(cuda\); the engine runs on"):
        zehal.Dma(sim).copy(host, gpu_memory)
    with pytest.raises(zehal.InvalidArgumentError, match=r"dst is device memory of .*\(sim\); the engine runs on"):
        zehal.Dma(gpu).copy(sim_memory, host)


@pytest.mark.level_zero
@pytest.mark.parametrize("owner_backend", ["sim", "level_zero"])
def test_sim_and_level_zero_copy_each_others_host_memory(monkeypatch, owner_backend):
    gpu = level_zero_device()
    sim = zehal.sim_device()
    monkeypatch.setenv("ZEHAL_BACKEND", owner_backend)
    host = zehal.Area.host()
    src, dst = host.mmap(3 << 20), host.mmap(3 << 20)
    assert src.device.backend == owner_backend
    for device in (gpu, sim):
        with zehal.Dma(device) as dma:
            round_trip(dma, src, dst, 7)


# --- Host memory of other exporters: NumPy arrays, bytearray, memoryview (contract §2.2) ---


def test_numpy_arrays_are_copied_to_and_from_device_memory(device):
    n = 1 << 16
    data = np.random.default_rng(1).integers(0, 256, n, dtype=np.uint8)
    back = np.zeros(n, dtype=np.uint8)
    dma = zehal.Dma(device)
    with zehal.Area.device(device).mmap(n) as dev:
        dma.copy(dev, data).wait()
        dma.copy(back, dev).wait()
    assert np.array_equal(back, data)


def test_bytearray_and_memoryview_are_host_memory_with_offsets(sim):
    dma = zehal.Dma(sim)
    src = bytearray(range(256)) * 4
    dst = bytearray(len(src))
    dma.copy(memoryview(dst), src).wait()
    assert dst == src
    grid = np.zeros((4, 4), dtype=np.float32)  # a contiguous array of any shape is its bytes
    dma.copy(grid, src, 32, dst_offset=16, src_offset=8).wait()
    assert grid.tobytes() == bytes(16) + bytes(src[8:40]) + bytes(16)


def test_host_memory_is_held_until_its_copy_is_seen_done(sim):
    dma = zehal.Dma(sim)
    dev = zehal.Area.device(sim).mmap(4096)
    ba = bytearray(b"\x07" * 4096)
    r = dma.copy(dev, ba)
    with pytest.raises(BufferError):
        ba.append(0)  # the request holds an export: the memory can neither move nor go
    r.wait()
    ba.append(0)  # released once the copy is seen done
    # Fire-and-forget, and a request dropped at once: the engine holds the memory.
    src = np.full(4096, 9, dtype=np.uint8)
    dma.copy(dev, src, request=False)
    dma.copy(dev, src, dst_offset=0)
    del src
    dma.barrier()
    back = np.zeros(4096, dtype=np.uint8)
    dma.copy(back, dev).wait()
    assert (back == 9).all()
    dev.close()


def test_a_read_only_destination_is_refused(sim):
    dma = zehal.Dma(sim)
    src = zehal.Area.host().mmap(16)
    frozen = np.zeros(16, dtype=np.uint8)
    frozen.flags.writeable = False
    for read_only in (bytes(16), frozen, memoryview(bytearray(16)).toreadonly()):
        with pytest.raises(zehal.InvalidArgumentError, match="read-only"):
            dma.copy(read_only, src)
    assert src.exports == 0


def test_non_contiguous_host_memory_is_refused(sim):
    dma = zehal.Dma(sim)
    buf = zehal.Area.host().mmap(64)
    strided = np.zeros(64, dtype=np.uint8)[::2]
    with pytest.raises(zehal.InvalidArgumentError, match="not contiguous"):
        dma.copy(strided, buf)
    with pytest.raises(zehal.InvalidArgumentError, match="not contiguous"):
        dma.copy(buf, strided)


def test_an_object_without_the_buffer_protocol_is_a_type_error(sim):
    dma = zehal.Dma(sim)
    buf = zehal.Area.host().mmap(64)
    with pytest.raises(TypeError, match="buffer protocol"):
        dma.copy(object(), buf)
    with pytest.raises(TypeError, match="buffer protocol"):
        dma.copy(buf, [1, 2, 3])
