"""Metric groups, metrics and activation (contract §4 and 8)."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest
import zehal
from zehal import _zehal


def group(device: zehal.Device, name: str) -> zehal.MetricGroup:
    for g in device.metric_groups():
        if g.name == name:
            return g
    raise LookupError(name)


def test_groups_have_properties_flags_and_metrics(device):
    groups = device.metric_groups()
    if device.properties.tracer:
        assert groups
    for g in groups:
        assert isinstance(g, zehal.MetricGroup)
        assert isinstance(g.name, str) and g.name
        assert isinstance(g.description, str)
        assert g.type_flags != 0
        assert g.type_flags & ~0xF == 0
        assert g.sampling_types & ~0x7 == 0
        assert g.tracer_based == bool(g.sampling_types & zehal.MetricGroup.TRACER_BASED)
        assert g.device == device
        assert g.metrics
        for m in g.metrics:
            assert isinstance(m, zehal.Metric)
            assert m.name
            assert isinstance(m.description, str)
            assert isinstance(m.component, str)
            assert isinstance(m.units, str)
            assert m.result_type in (0, 1, 2, 3, 4)
            assert isinstance(m.metric_type, int)
            assert m.group == g


def test_every_tracer_device_offers_tracer_and_export_groups(device):
    groups = device.metric_groups()
    if not device.properties.tracer:
        # Groups a tracer would serve may be listed (the driver has them), but no tracer
        # can be made on them.
        for g in groups:
            if g.tracer_based:
                zehal.activate_metric_groups(device, [g])
                with pytest.raises(zehal.UnsupportedError):
                    zehal.MetricTracer(device, [g])
                zehal.activate_metric_groups(device, [])
        return
    assert any(g.tracer_based for g in groups)
    export = [g for g in groups if g.tracer_based and g.type_flags & zehal.MetricGroup.EXPORT_DMA_BUF]
    assert export
    assert any(m.metric_type == zehal.Metric.EXP_EXPORT_DMA_BUF for m in export[0].metrics)


def test_sim_groups_and_metric_types(sim):
    engine = group(sim, "EngineEvents")
    assert engine.sampling_types == _zehal.SAMPLING_TYPE_TRACER_BASED
    names = [m.name for m in engine.metrics]
    assert names[:2] == ["CommandStart", "CommandEnd"]
    assert {"BytesMoved", "EngineOrdinal", "EngineIndex", "QueueId", "QueueDepth"} <= set(names)
    assert engine.metrics[0].metric_type == 0x7FFFFFFA
    assert engine.metrics[1].metric_type == 0x7FFFFFFB
    bytes_moved = engine.metrics[names.index("BytesMoved")]
    assert bytes_moved.units == "bytes"
    assert bytes_moved.result_type == _zehal.VALUE_TYPE_UINT64
    async_group = group(sim, "AsyncEvents")
    assert async_group.metrics[0].metric_type == _zehal.METRIC_TYPE_EVENT_EXP_MONOTONIC_WRAPS_VALUE
    util = group(sim, "EngineUtilization")
    assert not util.tracer_based


def test_constants_have_level_zero_values():
    assert (_zehal.SAMPLING_TYPE_EVENT_BASED, _zehal.SAMPLING_TYPE_TIME_BASED, _zehal.SAMPLING_TYPE_TRACER_BASED) == (
        1,
        2,
        4,
    )
    assert (
        _zehal.GROUP_TYPE_EXPORT_DMA_BUF,
        _zehal.GROUP_TYPE_USER_CREATED,
        _zehal.GROUP_TYPE_OTHER,
        _zehal.GROUP_TYPE_MARKER,
    ) == (1, 2, 4, 8)
    assert (zehal.MetricGroup.EXPORT_DMA_BUF, zehal.MetricGroup.MARKER, zehal.MetricGroup.TRACER_BASED) == (1, 8, 4)
    assert [
        _zehal.METRIC_TYPE_EVENT_EXP_TIMESTAMP,
        _zehal.METRIC_TYPE_EVENT_EXP_START,
        _zehal.METRIC_TYPE_EVENT_EXP_END,
        _zehal.METRIC_TYPE_EVENT_EXP_MONOTONIC_WRAPS_VALUE,
        _zehal.METRIC_TYPE_EXP_EXPORT_DMA_BUF,
        _zehal.METRIC_TYPE_IP_EXP,
    ] == [0x7FFFFFF9, 0x7FFFFFFA, 0x7FFFFFFB, 0x7FFFFFFC, 0x7FFFFFFD, 0x7FFFFFFE]
    assert [
        _zehal.VALUE_TYPE_UINT32,
        _zehal.VALUE_TYPE_UINT64,
        _zehal.VALUE_TYPE_FP32,
        _zehal.VALUE_TYPE_FP64,
        _zehal.VALUE_TYPE_BOOL8,
    ] == [0, 1, 2, 3, 4]
    assert [
        _zehal.RECORD_SAMPLE,
        _zehal.RECORD_ENABLE,
        _zehal.RECORD_DISABLE,
        _zehal.RECORD_DROPPED,
        _zehal.RECORD_CLOCK_SYNC,
        _zehal.RECORD_EXPORT_WRITE,
        _zehal.RECORD_SIZE,
    ] == [1, 2, 3, 4, 5, 6, 32]
    assert _zehal.TRACE_RECORD_DTYPE.itemsize == 32
    assert _zehal.METRIC_ENTRY_DTYPE.itemsize == 32
    assert _zehal.METRIC_ENTRY_DTYPE.names == ("value", "timestamp", "metric_index", "on_subdevice", "subdevice_id")


def test_same_group_same_object_identity(sim):
    a = sim.metric_groups()
    b = sim.metric_groups()
    assert a == b
    assert len({*a, *b}) == len(a)
    assert a[0].metrics[0] == b[0].metrics[0]
    assert a[0] != a[1]
    assert a[0] != "EngineEvents"
    other = zehal.sim_device()
    assert other.metric_groups()[0] != a[0]


def test_group_handles_keep_the_device_alive(sim_backend):
    d = zehal.sim_device()
    g = group(d, "EngineEvents")
    m = g.metrics[2]
    del d
    gc.collect()
    assert g.name == "EngineEvents"
    assert m.name == "BytesMoved"
    assert m.group.device.name


def test_activation_replaces_the_previous_set(sim):
    engine, async_group = group(sim, "EngineEvents"), group(sim, "AsyncEvents")
    with pytest.raises(zehal.NotReadyError):
        zehal.MetricTracer(sim, [engine])
    zehal.activate_metric_groups(sim, [engine])
    zehal.MetricTracer(sim, [engine]).close()
    zehal.activate_metric_groups(sim, [async_group])
    with pytest.raises(zehal.NotReadyError):
        zehal.MetricTracer(sim, [engine])
    zehal.MetricTracer(sim, [async_group]).close()
    zehal.activate_metric_groups(sim, [])
    with pytest.raises(zehal.NotReadyError):
        zehal.MetricTracer(sim, [async_group])


def test_bad_activations_raise_and_change_nothing(sim):
    engine = group(sim, "EngineEvents")
    zehal.activate_metric_groups(sim, [engine])
    other = zehal.sim_device()
    with pytest.raises(zehal.InvalidArgumentError) as info:
        zehal.activate_metric_groups(sim, [group(other, "EngineEvents")])
    assert info.value.result_name == "ZE_RESULT_ERROR_INVALID_ARGUMENT"
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.activate_metric_groups(sim, [engine, engine])
    with pytest.raises(zehal.InvalidArgumentError) as info:
        zehal.activate_metric_groups(sim, [engine, None])
    assert info.value.result_name == "ZE_RESULT_ERROR_INVALID_NULL_HANDLE"
    with pytest.raises(TypeError):
        zehal.activate_metric_groups(sim, ["EngineEvents"])
    with pytest.raises(TypeError):
        zehal.activate_metric_groups(sim, 3)
    zehal.MetricTracer(sim, [engine]).close()  # still activated


def test_default_device_activation():
    default = zehal.default_device()
    groups = [g for g in default.metric_groups() if g.tracer_based][:1]
    zehal.activate_metric_groups(None, groups)
    zehal.activate_metric_groups(None, [])


def test_concurrent_activation(sim):
    groups = sim.metric_groups()
    errors = []

    def work(i):
        try:
            for k in range(200):
                zehal.activate_metric_groups(sim, [groups[(i + k) % len(groups)]])
        except Exception as e:  # noqa: BLE001 - collected for the assert
            errors.append(e)

    threads = [threading.Thread(daemon=True, target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_device_lives_while_groups_live(sim_backend):
    d = zehal.sim_device()
    ref = weakref.ref(d)
    groups = d.metric_groups()
    del d
    gc.collect()
    # pybind11 devices are shared_ptr-held: the Python wrapper may go, the device stays.
    assert groups[0].device is not None
    assert ref() is None or ref() == groups[0].device
