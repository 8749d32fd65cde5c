"""Buffers (contract §8): the buffer protocol for host-accessible memory, BufferError for
device memory, DLPack capsules (versioned and legacy) with the right device type, NumPy
views without copies, exports that keep close() from unmapping, use after close."""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest
import zehal

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_EXT_DEV, KDL_CUDA_MANAGED, KDL_ONEAPI = 1, 2, 3, 12, 13, 14
# Device types NumPy's from_dlpack takes (host-accessible memory it knows).
NUMPY_DLPACK_DEVICES = (KDL_CPU, KDL_CUDA_HOST, KDL_CUDA_MANAGED)


def host_accessible_buffers(device, size=4096):
    yield zehal.Area.shared(device).mmap(size)
    if device.backend == zehal.default_device().backend:
        yield zehal.Area.host().mmap(size)


def test_buffer_protocol_is_writable_bytes(device):
    for buf in host_accessible_buffers(device):
        view = memoryview(buf)
        assert view.format == "B" and view.itemsize == 1 and view.ndim == 1
        assert view.nbytes == buf.nbytes and not view.readonly
        view[:4] = b"abcd"
        assert ctypes.string_at(buf.ptr, 4) == b"abcd"
        view.release()
        buf.close()


def test_numpy_frombuffer_wraps_without_copy(device):
    for buf in host_accessible_buffers(device):
        a = np.frombuffer(buf, dtype=np.uint32)
        assert a.ctypes.data == buf.ptr
        assert a.size == buf.nbytes // 4
        a[:] = np.arange(a.size, dtype=np.uint32)
        assert ctypes.c_uint32.from_address(buf.ptr + 40).value == 10
        assert buf.exports == 1
        del a
        gc.collect()
        assert buf.exports == 0
        buf.close()


def test_device_memory_has_no_buffer_protocol(device):
    buf = zehal.Area.device(device).mmap(64)
    with pytest.raises(BufferError, match="not host-accessible"):
        memoryview(buf)
    with pytest.raises(BufferError):
        np.frombuffer(buf, dtype=np.uint8)
    assert buf.exports == 0
    buf.close()


def test_dlpack_device_by_backend_and_kind(device):
    expected = {
        "sim": {"host": (KDL_CPU, 0), "shared": (KDL_CPU, 0), "device": (KDL_EXT_DEV, None)},
        "cuda": {"host": (KDL_CUDA_HOST, 0), "shared": (KDL_CUDA_MANAGED, None), "device": (KDL_CUDA, None)},
        "level_zero": {"host": (KDL_CPU, 0), "shared": (KDL_ONEAPI, None), "device": (KDL_ONEAPI, None)},
    }[device.backend]
    areas = {"shared": zehal.Area.shared(device), "device": zehal.Area.device(device)}
    if device.backend == zehal.default_device().backend:
        areas["host"] = zehal.Area.host()
    for kind, area in areas.items():
        buf = area.mmap(16)
        dev_type, dev_id = buf.__dlpack_device__()
        assert dev_type == expected[kind][0], kind
        if expected[kind][1] is not None:
            assert dev_id == expected[kind][1]
        buf.close()


def test_numpy_from_dlpack_views_the_memory(device):
    for buf in host_accessible_buffers(device):
        if buf.__dlpack_device__()[0] not in NUMPY_DLPACK_DEVICES:
            buf.close()
            continue
        a = np.from_dlpack(buf)
        assert a.dtype == np.uint8 and a.shape == (buf.nbytes,)
        assert a.ctypes.data == buf.ptr
        a[:3] = [1, 2, 3]
        assert bytes(memoryview(buf)[:3]) == b"\x01\x02\x03"
        assert buf.exports >= 1
        with pytest.raises(BufferError, match="export"):
            buf.close()
        del a
        gc.collect()
        assert buf.exports == 0
        buf.close()


def test_dlpack_capsules_versioned_and_legacy(device):
    buf = zehal.Area.shared(device).mmap(32)
    versioned = buf.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(versioned)
    legacy = buf.__dlpack__()
    assert '"dltensor"' in repr(legacy)
    old = buf.__dlpack__(max_version=(0, 8))
    assert '"dltensor"' in repr(old)
    assert buf.exports == 3
    del versioned, legacy, old  # never consumed: their destructors release the exports
    gc.collect()
    assert buf.exports == 0
    with pytest.raises(BufferError):
        buf.__dlpack__(dl_device=(KDL_CUDA, 7))
    gc.collect()
    assert buf.exports == 0
    cap = buf.__dlpack__(dl_device=buf.__dlpack_device__(), copy=False, stream=None)
    del cap
    # The four parameters by position too: __dlpack__(stream, max_version, dl_device, copy).
    cap = buf.__dlpack__(None, (1, 0), buf.__dlpack_device__(), False)
    assert "dltensor_versioned" in repr(cap)
    del cap
    with pytest.raises(TypeError):
        buf.__dlpack__(stream="default")
    gc.collect()
    buf.close()


def test_a_dlpack_array_outlives_the_buffer_object(device):
    buf = zehal.Area.shared(device).mmap(64)
    if buf.__dlpack_device__()[0] not in NUMPY_DLPACK_DEVICES:
        buf.close()
        buf = zehal.Area.host().mmap(64)  # Level Zero shared memory is kDLOneAPI
    memoryview(buf)[:] = bytes(range(64))
    a = np.from_dlpack(buf)
    del buf  # the array's capsule keeps the Buffer (and its area) alive
    gc.collect()
    assert list(a[:4]) == [0, 1, 2, 3]
    del a
    gc.collect()


def test_use_after_close_raises(device):
    with zehal.Area.shared(device).mmap(64) as buf:
        pass
    assert buf.closed
    assert buf.nbytes == 64 and buf.kind == "shared"  # description still answers
    for use in (lambda: buf.ptr, lambda: memoryview(buf), buf.__dlpack__, buf.__dlpack_device__):
        with pytest.raises(zehal.InvalidArgumentError) as info:
            use()
        assert info.value.result_name == "ZE_RESULT_ERROR_INVALID_NULL_HANDLE"
    buf.close()  # idempotent
    assert repr(buf) == "<zehal.Buffer closed>"


def test_cuda_array_interface_only_on_cuda(device):
    buf = zehal.Area.device(device).mmap(128)
    if device.backend == "cuda":
        cai = buf.__cuda_array_interface__
        assert cai["version"] == 3 and cai["shape"] == (128,) and cai["data"][0] == buf.ptr
        assert cai["typestr"] == "|u1"
    else:
        assert not hasattr(buf, "__cuda_array_interface__")
    buf.close()


def test_empty_buffer_views(device):
    buf = zehal.Area.shared(device).mmap(0)
    assert memoryview(buf).nbytes == 0
    assert np.frombuffer(buf, dtype=np.uint8).size == 0
    gc.collect()
    buf.close()


def test_dlpack_copy_true_copies_host_visible_memory(device):
    """The array API: copy=True makes the producer copy. Memory on DLPack device (1, 0) is
    copied into a new array; other memory cannot be and raises BufferError."""
    for buf in host_accessible_buffers(device, 16):
        np.frombuffer(buf, dtype=np.uint8)[:] = 7
        if buf.__dlpack_device__() != (KDL_CPU, 0):
            with pytest.raises(BufferError):
                buf.__dlpack__(copy=True)
            buf.close()
            continue
        copied = np.from_dlpack(buf, copy=True)
        assert copied.ctypes.data != buf.ptr
        np.testing.assert_array_equal(copied, np.full(16, 7, dtype=np.uint8))
        copied[:] = 1  # the copy is independent of the buffer
        assert bytes(memoryview(buf)) == bytes([7] * 16)
        legacy = buf.__dlpack__(copy=True)
        assert '"dltensor"' in repr(legacy)
        assert "dltensor_versioned" in repr(buf.__dlpack__(copy=True, max_version=(1, 0)))
        with pytest.raises(BufferError):
            buf.__dlpack__(copy=True, dl_device=(KDL_CUDA, 0))
        del legacy
        gc.collect()
        assert buf.exports == 0  # a copy holds no export of the buffer
        buf.close()
