"""Areas (contract §2.2 and 8): creation checks, mmap/munmap of every kind with its
alignment, out of memory, a lost device, defaults, close and context managers."""

from __future__ import annotations

import gc

import pytest
import zehal

KINDS = ("host", "device", "shared")


def make_area(kind: str, device: zehal.Device, alignment: int = 64) -> zehal.Area:
    if kind == "host":
        # Host memory of the device's backend (the default backend for Area.host()).
        return zehal.Area.host(alignment=alignment) if device.backend == zehal.default_device().backend else None
    if kind == "device":
        return zehal.Area.device(device, alignment=alignment)
    return zehal.Area.shared(device, alignment=alignment)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("alignment", [1, 64, 4096, 1 << 16])
def test_mmap_honours_kind_and_alignment(device, kind, alignment):
    area = make_area(kind, device, alignment)
    if area is None:
        pytest.skip("host areas come from the default backend")
    assert area.kind == kind
    assert area.alignment == alignment
    assert not area.closed
    for size in (1, 100, 4096, (1 << 20) + 3):
        buf = area.mmap(size)
        assert buf.kind == kind
        assert buf.nbytes == size
        assert buf.ptr % alignment == 0
        assert buf.area is area
        area.munmap(buf)
        assert buf.closed


def test_device_attribute_and_factory_share_a_name(device):
    area = zehal.Area.device(device)
    assert area.device == device
    assert zehal.Area.shared(device).device == device
    assert zehal.Area.host().device.backend == zehal.default_device().backend
    assert callable(zehal.Area.device)


def test_create_rejects_bad_arguments(device):
    for alignment in (0, 3, 48, 100):
        with pytest.raises(zehal.InvalidArgumentError):
            zehal.Area.device(device, alignment=alignment)
        with pytest.raises(zehal.InvalidArgumentError):
            zehal.Area.shared(device, alignment=alignment)
        with pytest.raises(zehal.InvalidArgumentError):
            zehal.Area.host(alignment=alignment)
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.Area.device(device, ordinal=device.properties.memory_ordinals)
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.Area.device(device, alignment=-64)
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.Area.host(flags=-1)
    with pytest.raises(TypeError):
        zehal.Area.device(device, alignment="64")
    try:
        zehal.Area.device(device, alignment=3)
    except zehal.InvalidArgumentError as e:
        assert e.aml_errno == 3  # AML_EINVAL


def test_mmap_zero_maps_nothing_and_munmap_edge_cases(device):
    area = zehal.Area.device(device)
    other = zehal.Area.device(device)
    empty = area.mmap(0)
    assert empty.nbytes == 0 and empty.ptr == 0
    area.munmap(empty)  # nothing mapped: fine
    buf = area.mmap(256)
    with pytest.raises(zehal.InvalidArgumentError):
        other.munmap(buf)  # mapped by another area
    assert not buf.closed
    area.munmap(buf)
    with pytest.raises(zehal.InvalidArgumentError):
        area.munmap(buf)  # already unmapped
    with pytest.raises(zehal.InvalidArgumentError):
        area.mmap(-1)
    with pytest.raises(TypeError):
        area.munmap(object())
    # Still usable.
    area.munmap(area.mmap(64))


def test_out_of_memory_is_out_of_memory_error():
    sim = zehal.sim_device(memory_bytes=1 << 20)
    for area in (zehal.Area.device(sim), zehal.Area.shared(sim)):
        big = area.mmap(768 << 10)
        with pytest.raises(zehal.OutOfMemoryError) as info:
            area.mmap(512 << 10)
        assert isinstance(info.value, MemoryError)
        assert info.value.aml_errno == 2  # AML_ENOMEM
        assert info.value.result_name == "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"
        big.close()
        area.mmap(512 << 10).close()  # room again


def test_injected_allocation_failure():
    sim = zehal.sim_device(fail_allocation_after=1)
    area = zehal.Area.device(sim)
    first = area.mmap(64)
    with pytest.raises(zehal.OutOfMemoryError):
        area.mmap(64)
    first.close()


def test_lost_device_is_device_lost_error(sim):
    area = zehal.Area.device(sim)
    buf = area.mmap(64)
    sim.lose()
    with pytest.raises(zehal.DeviceLostError) as info:
        area.mmap(64)
    assert info.value.aml_errno == 1  # AML_FAILURE
    with pytest.raises(zehal.DeviceLostError):
        buf.close()


def test_close_refuses_mmap_but_keeps_buffers(device):
    with zehal.Area.shared(device) as area:
        buf = area.mmap(128)
    assert area.closed
    with pytest.raises(zehal.InvalidArgumentError) as info:
        area.mmap(16)
    assert info.value.result_name == "ZE_RESULT_ERROR_INVALID_NULL_HANDLE"
    memoryview(buf)[0] = 5  # still mapped
    area.munmap(buf)
    area.close()  # idempotent


def test_buffer_keeps_its_area_alive(device):
    buf = zehal.Area.shared(device, alignment=256).mmap(1000)
    gc.collect()
    assert buf.area.alignment == 256
    memoryview(buf)[:] = bytes(1000)
    buf.close()


def test_defaults():
    d = zehal.Area.default_device()
    h = zehal.Area.default_host()
    assert d.kind == "device" and h.kind == "host"
    assert d.alignment == 64 and h.alignment == 64
    assert d.flags == 1 and h.flags == 1  # cached bias
    assert d.device == zehal.default_device()
    assert "alignment: 64" in d.fprintf()
    d.mmap(64).close()
    h.mmap(64).close()


def test_fprintf_describes_the_area(device):
    text = zehal.Area.shared(device, alignment=4096).fprintf()
    assert "kind: shared" in text
    assert "alignment: 4096" in text
    assert f"backend: {device.backend}" in text
    assert repr(zehal.Area.device(device)).startswith("<zehal.Area device")


def test_import_dma_buf_rejects_a_bad_fd(sim):
    with pytest.raises(zehal.Error):
        zehal.Area.import_dma_buf(-1, 4096, sim)


def test_static_calls_through_an_instance_act_on_it(sim_backend):
    """area.import_dma_buf(...) imports into the area's device and area.pool(...) pools the
    area itself, instead of the default device (the class forms stay static)."""
    d = zehal.sim_device()
    area = zehal.Area.device(d)
    assert area.device == d
    group = next(g for g in d.metric_groups() if g.type_flags & zehal.GROUP_TYPE_EXPORT_DMA_BUF)
    fd, size = group.export_dma_buf()
    buf = area.import_dma_buf(fd, size)
    assert buf.device == d
    buf.close()
    pool = area.pool(initial_bytes=1 << 20)
    assert pool.is_pool and pool.device == d
    assert zehal.Area.pool(area).device == d


def test_backends_compare_with_their_names():
    names = [b.name for b in zehal.backends()]
    assert "sim" in zehal.backends() and "sim" in names
    assert "no such backend" not in zehal.backends()
    assert zehal.backends()[0] != 42
    assert len({b for b in zehal.backends()}) == len(names)
