"""Errors name the argument (or variable) that is wrong and its value (contract §11)."""

import os
import re

import numpy as np
import pytest
import zehal
from conftest import cuda_device, run_python


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_version": "x"},
        {"max_version": (1,)},
        {"max_version": (2**70, 0)},
        {"dl_device": "cpu"},
        {"dl_device": (1, 0, 0)},
        {"copy": "yes"},
    ],
)
def test_dlpack_arguments_of_the_wrong_type_raise_type_error(sim, kwargs):
    buf = zehal.Area.host().mmap(64)
    name = next(iter(kwargs))
    with pytest.raises(TypeError, match=name):
        buf.__dlpack__(**kwargs)
    assert buf.exports == 0


def test_layout_dims_take_an_integer_scalar(sim):
    buf = zehal.Area.host().mmap(64)
    assert zehal.Layout.dense(buf, 1, np.int64(16)).dims == (16,)
    with pytest.raises(TypeError, match="dims"):
        zehal.Layout.dense(buf, 1, "16")


def test_area_alignment_and_sim_settings_are_named(sim):
    with pytest.raises(zehal.InvalidArgumentError, match="alignment = 0"):
        zehal.Area.host(alignment=0)
    with pytest.raises(zehal.InvalidArgumentError, match="alignment = 48"):
        zehal.Area.device(sim, alignment=48)
    with pytest.raises(zehal.InvalidArgumentError, match="timer_hz = 0"):
        zehal.sim_device(timer_hz=0)
    with pytest.raises(zehal.InvalidArgumentError, match="kernel_timestamp_valid_bits = 65"):
        zehal.sim_device(kernel_timestamp_valid_bits=65)


@pytest.mark.cuda
def test_a_copy_with_no_path_names_the_operand(sim_backend):
    gpu = cuda_device()
    src = zehal.Area.device(zehal.sim_device()).mmap(64)
    dst = zehal.Area.device(gpu).mmap(64)
    with pytest.raises(zehal.InvalidArgumentError, match="src is device memory of .* \\(sim\\)"):
        zehal.Dma(gpu).copy(dst, src)


def test_tracer_creation_errors_say_why(sim):
    groups = {g.name: g for g in sim.metric_groups()}
    tracer_group = next(g for g in groups.values() if g.sampling_types & zehal.SAMPLING_TYPE_TRACER_BASED)
    with pytest.raises(zehal.NotReadyError, match="not activated"):
        zehal.MetricTracer(sim, [tracer_group])
    zehal.activate_metric_groups(sim, [tracer_group])
    first = zehal.MetricTracer(sim, [tracer_group])
    with pytest.raises(zehal.ObjectInUseError, match="already exists"):
        zehal.MetricTracer(sim, [tracer_group])
    first.close()


def test_decoding_for_another_tracers_metrics_says_so(sim_backend):
    a, b = zehal.sim_device(), zehal.sim_device()
    decoders = []
    for d in (a, b):
        g = next(g for g in d.metric_groups() if g.sampling_types & zehal.SAMPLING_TYPE_TRACER_BASED)
        zehal.activate_metric_groups(d, [g])
        t = zehal.MetricTracer(d, [g])
        decoders.append((t, zehal.MetricDecoder(t)))
    raw = b"\0" * 32
    with pytest.raises(zehal.InvalidArgumentError, match="not one of this decoder"):
        decoders[0][1].decode(raw, metrics=decoders[1][1].decodable_metrics[:1])
    for t, _ in decoders:
        t.close()


def test_a_bad_sim_variable_is_named_by_default_device():
    out = run_python(
        "import zehal\ntry:\n    zehal.default_device()\nexcept zehal.Error as e:\n    print(e)",
        env={"ZEHAL_BACKEND": "sim", "ZEHAL_SIM_TIMER_HZ": "0"},
    )
    assert out.returncode == 0, out.stderr
    assert "ZEHAL_SIM_TIMER_HZ = 0" in out.stdout


def test_a_notification_event_of_another_device_is_refused(sim_backend):
    a, b = zehal.sim_device(), zehal.sim_device()
    g = next(g for g in a.metric_groups() if g.sampling_types & zehal.SAMPLING_TYPE_TRACER_BASED)
    zehal.activate_metric_groups(a, [g])
    foreign = zehal.EventPool(b).event(0)
    with pytest.raises(zehal.InvalidArgumentError, match="notification"):
        zehal.MetricTracer(a, [g], notification=foreign)
    own = zehal.EventPool(a).event(0)
    zehal.MetricTracer(a, [g], notification=own).close()


def test_a_refused_import_names_the_fd_or_the_size(sim, tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"\0" * 8192)
    fd = os.open(path, os.O_RDWR)
    try:
        with pytest.raises(zehal.InvalidArgumentError, match=f"fd = {fd} is neither a dma-buf nor a memfd sealed"):
            zehal.Area.import_dma_buf(fd, 4096, sim)
    finally:
        os.close(fd)
    g = next(g for g in sim.metric_groups() if g.type_flags & zehal.GROUP_TYPE_EXPORT_DMA_BUF)
    fd, size = g.export_dma_buf()
    with pytest.raises(zehal.Error, match=f"size = {size + 4096} \\(fd {fd} holds {size} bytes\\)"):
        zehal.Area.import_dma_buf(fd, size + 4096, sim)


def test_a_foreign_notification_says_which_device_it_must_belong_to(sim_backend):
    a, b = zehal.sim_device(), zehal.sim_device()
    g = next(g for g in a.metric_groups() if g.sampling_types & zehal.SAMPLING_TYPE_TRACER_BASED)
    zehal.activate_metric_groups(a, [g])
    with pytest.raises(zehal.InvalidArgumentError, match=f"host-visible pool on {re.escape(a.properties.name)}:"):
        zehal.MetricTracer(a, [g], notification=zehal.EventPool(b).event(0))
