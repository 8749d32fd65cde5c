"""Backends, devices, the default device, sim_device configuration, properties,
global_timestamps and device loss."""

from __future__ import annotations

import threading
import time

import pytest
import zehal
from conftest import cuda_device, run_python

ALL_PROPERTY_NAMES = (
    "name",
    "uuid",
    "memory_bytes",
    "max_allocation_bytes",
    "timer_hz",
    "kernel_timestamp_valid_bits",
    "timestamp_valid_bits",
    "compute_engines",
    "copy_engines",
    "subdevices",
    "memory_ordinals",
    "kernel_timestamps",
    "synchronized_timestamps",
    "dma_buf_export",
    "tracer",
)


def test_backends_in_registry_order():
    found = zehal.backends()
    assert [b.name for b in found] == ["level_zero", "cuda", "sim"]
    for b in found:
        assert isinstance(b, zehal.BackendInfo)
        assert b["name"] == b.name and b["available"] == b.available and b["reason"] == b.reason
        assert dict(b) == {"name": b.name, "available": b.available, "reason": b.reason}
        if b.available:
            assert b.reason == ""
        else:
            assert b.reason, f"{b.name} is unavailable without a reason"
            assert b.devices() == []
        assert b.name in repr(b)
    sim = found[2]
    assert sim.available
    assert len(sim.devices()) >= 1
    with pytest.raises(KeyError):
        sim["nope"]


def test_devices_of_each_backend():
    sims = zehal.devices("sim")
    assert sims and all(d.backend == "sim" for d in sims)
    # The registry's devices are shared objects: asking twice gives equal devices.
    assert zehal.devices("sim") == sims
    for b in zehal.backends():
        if not b.available:
            assert zehal.devices(b.name) == []


def test_devices_unknown_backend():
    with pytest.raises(zehal.InvalidArgumentError) as info:
        zehal.devices("no_such_backend")
    assert info.value.result_name == "ZE_RESULT_ERROR_INVALID_ARGUMENT"


def test_default_device_is_first_of_default_backend():
    d = zehal.default_device()
    assert isinstance(d, zehal.Device)
    assert d == zehal.default_device()
    assert hash(d) == hash(zehal.default_device())
    assert zehal.devices()[0] == d
    first_available = next(b for b in zehal.backends() if b.available and b.devices())
    assert d.backend == first_available.name


@pytest.mark.parametrize("backend", ["sim"])
def test_zehal_backend_forces_default(backend):
    out = run_python(
        "import zehal; d = zehal.default_device(); print(d.backend, len(zehal.devices()))",
        env={"ZEHAL_BACKEND": backend},
    )
    assert out.returncode == 0, out.stderr
    name, count = out.stdout.split()
    assert name == backend and int(count) >= 1


def test_zehal_backend_unknown_name():
    out = run_python(
        "import zehal\n"
        "try:\n    zehal.default_device()\n"
        "except zehal.InvalidArgumentError as e:\n    print(e.result_name)\n",
        env={"ZEHAL_BACKEND": "no_such_backend"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ZE_RESULT_ERROR_INVALID_ARGUMENT"


def test_zehal_backend_unavailable():
    missing = [b.name for b in zehal.backends() if not b.available]
    if not missing:
        pytest.skip("every backend is available here")
    out = run_python(
        "import zehal\ntry:\n    zehal.default_device()\nexcept zehal.Error as e:\n    print(e.result_name)\n",
        env={"ZEHAL_BACKEND": missing[0]},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE"


def test_sim_environment_configures_registry_device():
    out = run_python(
        "import zehal; p = zehal.default_device().properties\n"
        "print(p.copy_engines, p.timer_hz, p.kernel_timestamp_valid_bits)",
        env={
            "ZEHAL_BACKEND": "sim",
            "ZEHAL_SIM_COPY_ENGINES": "3",
            "ZEHAL_SIM_TIMER_HZ": "1000000",
            "ZEHAL_SIM_KERNEL_TIMESTAMP_VALID_BITS": "40",
        },
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["3", "1000000", "40"]


def test_device_is_not_constructible():
    with pytest.raises(TypeError):
        zehal.Device()


def test_properties(device):
    p = device.properties
    assert isinstance(p, zehal.DeviceProperties)
    for name in ALL_PROPERTY_NAMES:
        assert hasattr(p, name), name
    assert p.name == device.name and p.name
    assert device.backend in ("sim", "cuda", "level_zero")
    assert p.timer_hz > 0
    assert 1 <= p.kernel_timestamp_valid_bits <= 64
    assert 1 <= p.timestamp_valid_bits <= 64
    assert p.memory_bytes > 0 and 0 < p.max_allocation_bytes <= p.memory_bytes
    assert p.compute_engines >= 1
    for flag in ("kernel_timestamps", "synchronized_timestamps", "dma_buf_export", "tracer"):
        assert isinstance(getattr(p, flag), bool)
    assert p.kernel_timestamps == bool(p.timestamp_flags & 1)
    assert p.synchronized_timestamps == bool(p.timestamp_flags & 2)
    assert len(p.uuid) == 36 and p.uuid.count("-") == 4
    assert len(p.uuid_bytes) == 16 and p.uuid_bytes.hex() == p.uuid.replace("-", "")
    d = p.to_dict()
    assert set(ALL_PROPERTY_NAMES) <= set(d)
    assert d["timer_hz"] == p.timer_hz
    for name in d:
        assert p[name] == getattr(p, name)  # also by name, as a mapping
    with pytest.raises(KeyError):
        p["no_such_property"]
    assert device.name in repr(device) and device.backend in repr(device)


def test_sim_defaults(sim):
    p = sim.properties
    assert sim.backend == "sim"
    assert p.copy_engines == 2
    assert p.compute_engines == 1
    assert p.memory_bytes == 1 << 30
    assert p.timer_hz == 19_200_000
    assert p.kernel_timestamp_valid_bits == 32
    assert p.timestamp_valid_bits == 64
    assert p.subdevices == 0
    assert p.kernel_timestamps and p.synchronized_timestamps
    assert p.tracer and p.dma_buf_export


def test_sim_device_config():
    d = zehal.sim_device(
        copy_engines=4,
        memory_bytes=64 << 20,
        timer_hz=1_000_000_000,
        kernel_timestamp_valid_bits=48,
        timestamp_valid_bits=56,
        start_ticks=12345,
        subdevices=2,
        trace_buffer_bytes=4096,
        bandwidth_bytes_per_s=1 << 30,
        compute_engines=2,
        async_records_per_s=10,
    )
    p = d.properties
    assert (p.copy_engines, p.compute_engines, p.memory_bytes, p.timer_hz) == (4, 2, 64 << 20, 1_000_000_000)
    assert (p.kernel_timestamp_valid_bits, p.timestamp_valid_bits, p.subdevices) == (48, 56, 2)
    _, ticks = d.global_timestamps()
    assert ticks >= 12345


def test_sim_devices_are_distinct():
    a, b = zehal.sim_device(), zehal.sim_device()
    assert a != b
    assert a == a
    assert len({a, b, a}) == 2
    assert a != "not a device"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"timer_hz": 0},
        {"memory_bytes": 0},
        {"compute_engines": 0},
        {"kernel_timestamp_valid_bits": 0},
        {"kernel_timestamp_valid_bits": 65},
        {"timestamp_valid_bits": 0},
        {"timestamp_valid_bits": 65},
        {"trace_buffer_bytes": 8},
        {"copy_engines": -1},
        {"memory_bytes": 1 << 64},
        {"start_ticks": -5},
        {"fail_allocation_after": -1},
        {"async_burst_records": (1 << 25) + 1},
        {"async_burst_records": -1},
    ],
)
def test_sim_device_bad_config(kwargs):
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.sim_device(**kwargs)


def test_sim_device_wrong_types():
    with pytest.raises(TypeError):
        zehal.sim_device(copy_engines="two")
    with pytest.raises(TypeError):
        zehal.sim_device(timer_hz=1.5)
    with pytest.raises(TypeError):
        zehal.sim_device(no_such_option=1)


def test_global_timestamps(device):
    before = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
    host_ns, ticks = device.global_timestamps()
    after = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
    assert before <= host_ns <= after
    host2, ticks2 = device.global_timestamps()
    assert host2 >= host_ns
    bits = device.properties.timestamp_valid_bits
    assert ticks < (1 << bits) and ticks2 < (1 << bits)
    if bits == 64:
        assert ticks2 >= ticks


def test_global_timestamps_tick_rate(sim):
    # Device ticks follow the host clock at timer_hz: over a host interval the tick
    # difference matches it within the sampling window of each pair.
    hz = sim.properties.timer_hz
    h1, t1 = sim.global_timestamps()
    time.sleep(0.02)
    h2, t2 = sim.global_timestamps()
    expected = (h2 - h1) * hz / 1e9
    assert abs((t2 - t1) - expected) <= hz * 1e-3 + 2


def test_global_timestamps_from_threads(device):
    errors: list[BaseException] = []

    def worker():
        try:
            last = 0
            for _ in range(2000):
                h, _ = device.global_timestamps()
                assert h >= last
                last = h
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(daemon=True, target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_lose(sim):
    sim.global_timestamps()
    sim.lose()
    with pytest.raises(zehal.DeviceLostError) as info:
        sim.global_timestamps()
    assert info.value.result_name == "ZE_RESULT_ERROR_DEVICE_LOST"
    assert info.value.aml_errno == 1
    # Names and properties still answer.
    assert sim.properties.timer_hz == 19_200_000 and sim.backend == "sim"
    with pytest.raises(zehal.DeviceLostError):
        zehal.EventPool(sim, 1)
    with pytest.raises(zehal.DeviceLostError):
        zehal.Area.device(sim).mmap(64)
    # Other sim devices are unaffected.
    zehal.sim_device().global_timestamps()


@pytest.mark.cuda
def test_lose_on_cuda_is_unsupported():
    d = cuda_device()
    with pytest.raises(zehal.UnsupportedError):
        d.lose()
    d.global_timestamps()


def test_fail_allocation_after():
    d = zehal.sim_device(fail_allocation_after=2)
    area = zehal.Area.device(d)
    kept = [area.mmap(64), area.mmap(64)]
    with pytest.raises(zehal.OutOfMemoryError) as info:
        area.mmap(64)
    assert isinstance(info.value, MemoryError)
    assert info.value.aml_errno == 2
    for b in kept:
        area.munmap(b)


def test_memory_capacity():
    d = zehal.sim_device(memory_bytes=1 << 20)
    area = zehal.Area.device(d)
    first = area.mmap(768 << 10)
    with pytest.raises(zehal.OutOfMemoryError):
        area.mmap(512 << 10)
    area.munmap(first)
    area.munmap(area.mmap(512 << 10))


def test_metric_groups(device):
    groups = device.metric_groups()
    assert isinstance(groups, list)
    if device.properties.tracer:
        assert any(g.sampling_types & 4 for g in groups)


def test_one_property_table_for_attributes_dict_cli_and_stubs(sim):
    import ast
    from pathlib import Path

    p = sim.properties
    fields = zehal.DeviceProperties.FIELDS
    assert list(p.to_dict()) == list(fields)
    assert all(p[f] == getattr(p, f) for f in fields)
    tree = ast.parse((Path(zehal.__file__).parent / "_zehal.pyi").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "DeviceProperties")
    stubbed = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    assert set(fields) <= stubbed
    import subprocess
    import sys

    info = subprocess.run([sys.executable, "-m", "zehal", "info"], capture_output=True, text=True, timeout=120)
    for field in fields:
        if field not in ("name", "uuid_bytes"):
            assert field.replace("_", " ") in info.stdout, field


def test_limits_say_what_a_device_lacks(device):
    limits = device.properties.limits
    assert isinstance(limits, str)
    if device.backend == "sim":
        assert limits == ""
    if not device.properties.tracer and device.backend != "sim":
        assert "tracer" in limits
