"""Dense layouts from Python (contract §2.3 and 8): orders, stride, pitch, bounds, and the
checks that keep a layout inside its buffer."""

from __future__ import annotations

import numpy as np
import pytest
import zehal


@pytest.fixture
def buf(sim):
    b = zehal.Area.shared(sim).mmap(4096)
    yield b
    b.close()


def test_row_major_matches_numpy_c_order(buf):
    layout = zehal.Layout.dense(buf, 4, (6, 8))
    assert layout.order == "C" and layout.dims == (6, 8) and layout.ndims == 2
    assert layout.element_size == 4 and layout.nbytes == 192 and layout.extent == 192
    assert layout.ptr == buf.ptr and layout.contiguous and layout.buffer is buf
    ref = np.frombuffer(buf, dtype=np.uint32, count=48).reshape(6, 8)
    for i, j in [(0, 0), (1, 2), (5, 7), (3, 0)]:
        assert layout.deref(i, j) == ref[i:, j:].ctypes.data
        assert layout.deref((i, j)) == layout.deref([i, j])


def test_column_major_matches_numpy_f_order(buf):
    layout = zehal.Layout.dense(buf, 8, [3, 5], order="F")
    assert layout.order == "F"
    for i in range(3):
        for j in range(5):
            assert layout.deref(i, j) - buf.ptr == 8 * (i + 3 * j)


def test_stride_and_pitch(buf):
    # Every other column of a 4 x 10 array of int16: a 4 x 5 view.
    layout = zehal.Layout.dense(buf, 2, (4, 5), stride=(1, 2), pitch=(4, 10))
    assert not layout.contiguous
    assert layout.deref(2, 3) - buf.ptr == 2 * (2 * 10 + 3 * 2)
    assert layout.extent == 2 * (3 * 10 + 4 * 2) + 2


def test_bad_arguments(buf):
    for kwargs in (
        dict(element_size=0, dims=(4,)),
        dict(element_size=4, dims=()),
        dict(element_size=4, dims=(4, 0)),
        dict(element_size=4, dims=(4, 4), pitch=(3, 4)),
        dict(element_size=4, dims=(4, 4), stride=(1,)),
        dict(element_size=4, dims=(4, 4), order="K"),
        dict(element_size=4, dims=(-1,)),
    ):
        with pytest.raises(zehal.InvalidArgumentError):
            zehal.Layout.dense(buf, **kwargs)
    with pytest.raises(zehal.InvalidArgumentError, match="spans"):
        zehal.Layout.dense(buf, 8, (32, 32))  # 8 KiB over 4 KiB
    with pytest.raises(TypeError):
        zehal.Layout.dense(buf, 4, ("a",))


def test_deref_out_of_bounds(buf):
    layout = zehal.Layout.dense(buf, 4, (3, 4))
    with pytest.raises(zehal.InvalidArgumentError) as info:
        layout.deref(3, 0)
    assert info.value.aml_errno == 4  # AML_EDOM
    assert "out of its dimension" in str(info.value)
    with pytest.raises(zehal.InvalidArgumentError):
        layout.deref(0, 4)
    with pytest.raises(zehal.InvalidArgumentError):
        layout.deref(0)  # too few coordinates


def test_layout_keeps_its_buffer_and_sees_it_closed(sim):
    buf = zehal.Area.shared(sim).mmap(64)
    layout = zehal.Layout.dense(buf, 1, 64)
    assert layout.dims == (64,)
    del buf
    assert layout.buffer.nbytes == 64
    layout.buffer.close()
    with pytest.raises(zehal.InvalidArgumentError):
        layout.deref(0)
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.Layout.dense(layout.buffer, 1, 8)
    assert "dense (64,)" in repr(layout)
