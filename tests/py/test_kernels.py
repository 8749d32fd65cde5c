"""Modules, kernels and launches from Python (contract §12): modules from SPIR-V bytes,
kernels by name, Dma.launch returning a Request, arguments from Buffers, NumPy scalars,
Python numbers and DLPack, events with kernel timestamps, and the errors of bad input.

The kernels are tests/kernels' OpenCL C sources, compiled to SPIR-V here with the build's
tools (clang-15, llvm-spirv-15); without them, or on a device that builds no SPIR-V, the
tests are skipped."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest
import zehal
from conftest import cuda_device, module_of, spirv_of_sources

KERNELS = pathlib.Path(__file__).resolve().parents[1] / "kernels"


@pytest.fixture(scope="module")
def spirv(tmp_path_factory) -> dict[str, bytes]:
    """SPIR-V of every tests/kernels source, by file stem."""
    return spirv_of_sources(KERNELS, "CL1.2", tmp_path_factory.mktemp("spirv"))


@pytest.fixture
def buffers(device, spirv) -> zehal.Module:
    return module_of(device, spirv["buffers"])


def shared(device, nbytes: int) -> zehal.Buffer:
    return zehal.Area.shared(device).mmap(nbytes)


def test_module_lists_kernels_and_signatures(device, buffers):
    assert "add_float" in buffers.kernel_names and "fill_uint" in buffers.kernel_names
    k = buffers.kernel("add_int_constant")
    assert k.name == "add_int_constant"
    assert len(k.args) == 3
    if any(size for _, size in k.args):  # level_zero reports no argument types: ('value', 0)
        assert [kind for kind, _ in k.args] == ["global", "global", "value"]
        assert k.args[2][1] == 4
    assert k.required_group_size is None
    assert len(buffers.native_binary()) > 0
    assert k.device == device


def test_unknown_kernel_name(buffers):
    with pytest.raises(zehal.InvalidArgumentError) as e:
        buffers.kernel("no_such_kernel")
    assert e.value.result_name == "ZE_RESULT_ERROR_INVALID_KERNEL_NAME"


@pytest.mark.parametrize("binary", [b"not spir-v at all", b"\x03\x02\x23\x07" + b"\0" * 16])
def test_bad_binary_raises_module_build_error_with_log(device, spirv, binary):
    module_of(device, spirv["buffers"])  # skips where the device builds no SPIR-V
    with pytest.raises(zehal.ModuleBuildError) as e:
        zehal.Module(device, binary)
    assert e.value.result_name == "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE"
    assert e.value.log
    assert e.value.log in str(e.value)


def test_truncated_spirv_raises_module_build_error(device, spirv):
    good = spirv["buffers"]
    module_of(device, good)
    with pytest.raises(zehal.ModuleBuildError):
        zehal.Module(device, good[: len(good) // 2])


def test_launch_computes_and_times_the_kernel(device, buffers):
    n = 256
    a, b, c = (shared(device, 4 * n) for _ in range(3))
    np.frombuffer(a, np.float32)[:] = np.arange(n, dtype=np.float32)
    np.frombuffer(b, np.float32)[:] = 0.5
    pool = zehal.EventPool(device, 1, timestamps="kernel")
    ev = pool.event(0)
    dma = zehal.Dma(device, ordinal=0)
    request = dma.launch(buffers.kernel("add_float"), n // 32, group_size=32, args=(a, b, c), signal=ev)
    assert isinstance(request, zehal.Request)
    request.wait()
    np.testing.assert_array_equal(np.frombuffer(c, np.float32), np.arange(n, dtype=np.float32) + 0.5)
    ts = ev.kernel_timestamps()
    assert ts["global_start"][0] <= ts["global_end"][0]


@pytest.mark.parametrize("value", [7, np.int32(7), np.uint32(7), b"\x07\0\0\0"])
def test_value_arguments(device, buffers, value):
    n = 64
    src, dst = shared(device, 4 * n), shared(device, 4 * n)
    np.frombuffer(src, np.int32)[:] = np.arange(n, dtype=np.int32)
    dma = zehal.Dma(device, ordinal=0)
    dma.launch(buffers.kernel("add_int_constant"), n, args=(src, dst, value)).wait()
    np.testing.assert_array_equal(np.frombuffer(dst, np.int32), np.arange(n, dtype=np.int32) + 7)


def test_float_and_64_bit_arguments(device, spirv):
    saxpy = module_of(device, spirv["saxpy"]).kernel("saxpy")
    n = 100
    y, x = shared(device, 4 * 128), shared(device, 4 * 128)
    np.frombuffer(y, np.float32)[:] = 1.0
    np.frombuffer(x, np.float32)[:] = 2.0
    dma = zehal.Dma(device, ordinal=0)
    dma.launch(saxpy, 4, group_size=32, args=(y, x, 3.0, n)).wait()
    got = np.frombuffer(y, np.float32)
    assert (got[:n] == 7.0).all() and (got[n:] == 1.0).all()

    fill = module_of(device, spirv["buffers"]).kernel("fill_range_ulong")
    out = shared(device, 8 * 4)
    dma.launch(fill, 1, args=(out, 4, 2**63 + 5)).wait()
    np.testing.assert_array_equal(np.frombuffer(out, np.uint64), np.uint64(2**63 + 5) + np.arange(4, dtype=np.uint64))


def test_dlpack_argument(device, buffers):
    n = 32
    src, dst = shared(device, 4 * n), shared(device, 4 * n)
    np.frombuffer(src, np.uint32)[:] = np.arange(n, dtype=np.uint32)

    class Exporter:  # only __dlpack__: the launch reads the capsule's data pointer
        def __init__(self, buffer):
            self.buffer = buffer

        def __dlpack__(self, **kwargs):
            return self.buffer.__dlpack__()

    dma = zehal.Dma(device, ordinal=0)
    dma.launch(buffers.kernel("copy_uint"), n, args=(Exporter(dst), src)).wait()
    np.testing.assert_array_equal(np.frombuffer(dst, np.uint32), np.arange(n, dtype=np.uint32))


def test_argument_errors_touch_nothing(device, buffers):
    k = buffers.kernel("add_int_constant")
    src, dst = shared(device, 256), shared(device, 256)
    dma = zehal.Dma(device, ordinal=0)
    with pytest.raises(zehal.InvalidArgumentError) as e:
        dma.launch(k, 1, args=(src, dst))
    assert e.value.result_name == "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX"
    # Sizes are checked where zehal knows the signature; a level_zero kernel's driver takes
    # a wider value's low bytes, as Intel's does (docs/level_zero.md).
    if device.backend != "level_zero":
        with pytest.raises(zehal.InvalidArgumentError) as e:
            dma.launch(k, 1, args=(src, dst, np.int64(1)))
        assert e.value.result_name == "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE"
        with pytest.raises(zehal.InvalidArgumentError):
            dma.launch(k, 1, args=(src, dst, 2**40))
    with pytest.raises(TypeError):
        dma.launch(k, 1, args=(src, "not a pointer", 1))
    with pytest.raises(TypeError):
        dma.launch(k, 1, args=(src, dst, "not a value"))
    with pytest.raises(TypeError):
        dma.launch("not a kernel", 1)
    assert dma.pending == 0


def test_group_size_rules(device, buffers):
    k = buffers.kernel("fill_uint")
    k.group_size = 4
    assert k.group_size == (4, 1, 1)
    with pytest.raises(zehal.InvalidArgumentError) as e:
        k.group_size = (1 << 20, 1, 1)
    assert e.value.result_name == "ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION"
    x, y, z = k.suggest_group_size(96)
    assert 96 % x == 0 and (y, z) == (1, 1)


def test_global_offset_moves_the_global_ids(device, spirv):
    k = module_of(device, spirv["work_items"]).kernel("work_item_ids")
    assert k.global_offset == (0, 0, 0)
    k.global_offset = (5, 6)
    assert k.global_offset == (5, 6, 0)
    out = shared(device, 4 * 16 * 8)
    zehal.Dma(device, ordinal=0).launch(k, 2, group_size=2, args=(out,)).wait()
    values = np.frombuffer(out, dtype=np.uint64).reshape(4, 16)
    assert list(values[:, 0]) == [5, 6, 7, 8]  # get_global_id(0)
    assert list(values[:, 1]) == [6] * 4  # get_global_id(1)
    assert list(values[:, 12]) == [5 * 10000 + 6 * 100] * 4  # get_global_offset()


def test_closed_buffer_argument_is_refused(device, buffers):
    src, dst = shared(device, 256), shared(device, 256)
    dst.close()
    with pytest.raises(zehal.InvalidArgumentError):
        zehal.Dma(device, ordinal=0).launch(buffers.kernel("copy_uint"), 1, args=(dst, src))


def test_buffer_close_waits_for_the_launch(device, buffers):
    n = 1024
    src, dst = shared(device, 4 * n), shared(device, 4 * n)
    dma = zehal.Dma(device, ordinal=0)
    assert dma.launch(buffers.kernel("copy_uint"), n, args=(dst, src), request=False) is None
    dst.close()  # waits for the launch that uses it
    dma.barrier()


def test_threads_launch_one_kernel_with_their_own_arguments(device, buffers):
    k = buffers.kernel("fill_uint")
    outs = [shared(device, 4 * 64) for _ in range(4)]
    dma = zehal.Dma(device, ordinal=0)
    errors = []

    def run(i):
        try:
            for _ in range(20):
                dma.launch(k, 64, args=(outs[i], i + 1)).wait()
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, out in enumerate(outs):
        assert (np.frombuffer(out, np.uint32) == i + 1).all()


def test_foreign_streams_are_cuda_only(sim):
    ev = zehal.EventPool(sim, 1, timestamps="kernel").event(0)
    with pytest.raises(zehal.UnsupportedError):
        sim.mark_start(0, ev)
    with pytest.raises(TypeError):
        sim.mark_end("not a stream", ev)


class _Stream:
    """A stream of the __cuda_stream__ protocol (version 0, the legacy default stream)."""

    def __cuda_stream__(self):
        return (0, 0)


@pytest.mark.cuda
def test_marks_on_a_foreign_stream_bracket_its_work():
    dev = cuda_device()
    ev = zehal.EventPool(dev, 1, timestamps="mapped").event(0)
    dev.mark_start(_Stream(), ev)
    src, dst = zehal.Area.device(dev).mmap(1 << 20), zehal.Area.device(dev).mmap(1 << 20)
    dev.mark_end(0, ev)
    ev.synchronize()
    ts = ev.kernel_timestamps()
    assert ts["global_start"][0] <= ts["global_end"][0]
    src.close()
    dst.close()


def test_kernel_timestamps_example_runs(spirv, tmp_path):
    """examples/kernel_timestamps.py, the seed sample with a kernel, on a sim device."""
    example = pathlib.Path(__file__).resolve().parents[2] / "examples" / "kernel_timestamps.py"
    module_of(zehal.sim_device(), spirv["buffers"])  # skips where the sim device builds no SPIR-V
    env = dict(os.environ, ZEHAL_BACKEND="sim")
    done = subprocess.run([sys.executable, str(example)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "kernel timestamps of a launch: ok" in done.stdout


# --- indirect launches and specialization constants ------------------------------------


def _indirect_or_skip(device) -> None:
    if device.backend == "cuda":
        pytest.skip("CUDA refuses indirect launches (test_indirect_launch_is_unsupported_on_cuda)")


def test_indirect_launch_reads_its_group_counts_when_it_runs(device, buffers):
    _indirect_or_skip(device)
    k = buffers.kernel("fill_uint")
    out = shared(device, 4 * 16)
    counts, later = shared(device, 12), shared(device, 12)
    np.frombuffer(out, np.uint32)[:] = 0
    np.frombuffer(counts, np.uint32)[:] = (1, 1, 1)
    np.frombuffer(later, np.uint32)[:] = (3, 2, 1)  # copied into counts in queue order
    dma = zehal.Dma(device, ordinal=0)
    dma.copy(counts, later, request=False)
    dma.launch_indirect(k, counts, args=(out, 9), group_size=1).wait()
    got = np.frombuffer(out, np.uint32)
    # fill_uint writes out[get_global_id(0)]: the x count of 3 fills out[0:3] (y repeats them).
    np.testing.assert_array_equal(got[:3], 9)
    assert (got[3:] == 0).all()
    # A count of 0 runs no work-item, and the launch completes.
    np.frombuffer(counts, np.uint32)[:] = (0, 1, 1)
    dma.launch_indirect(k, counts, args=(out, 5)).wait()
    np.testing.assert_array_equal(got[:3], 9)


def test_indirect_launch_takes_any_pointer_and_signals_its_event(device, buffers):
    _indirect_or_skip(device)
    k = buffers.kernel("fill_uint")
    out, counts = shared(device, 4 * 8), shared(device, 12)
    np.frombuffer(counts, np.uint32)[:] = (8, 1, 1)
    ev = zehal.EventPool(device, 1, timestamps="kernel").event(0)
    dma = zehal.Dma(device, ordinal=0)

    class Exporter:  # only __dlpack__: the launch reads the capsule's data pointer
        def __dlpack__(self, **kwargs):
            return counts.__dlpack__()

    assert dma.launch_indirect(k, Exporter(), args=(out, 4), group_size=1, signal=ev, request=False) is None
    dma.barrier()
    ev.synchronize()
    assert (np.frombuffer(out, np.uint32) == 4).all()
    ts = ev.kernel_timestamps()
    assert ts["global_start"][0] <= ts["global_end"][0]


def test_indirect_launch_bad_input(device, buffers):
    _indirect_or_skip(device)
    k = buffers.kernel("fill_uint")
    out = shared(device, 64)
    dma = zehal.Dma(device, ordinal=0)
    with pytest.raises(TypeError):
        dma.launch_indirect(k, None, args=(out, 1))
    with pytest.raises(TypeError):
        dma.launch_indirect(k, "not memory", args=(out, 1))
    with pytest.raises(TypeError):
        dma.launch_indirect("not a kernel", shared(device, 12))
    with pytest.raises(zehal.InvalidArgumentError):
        dma.launch_indirect(k, shared(device, 12), args=(out,))  # one argument short
    closed = shared(device, 12)
    closed.close()
    with pytest.raises(zehal.InvalidArgumentError):
        dma.launch_indirect(k, closed, args=(out, 1))
    assert dma.pending == 0


@pytest.mark.cuda
def test_indirect_launch_is_unsupported_on_cuda(spirv):
    dev = cuda_device()
    k = module_of(dev, spirv["buffers"]).kernel("fill_uint")
    out, counts = zehal.Area.shared(dev).mmap(64), zehal.Area.shared(dev).mmap(12)
    np.frombuffer(counts, np.uint32)[:] = (1, 1, 1)
    dma = zehal.Dma(dev, ordinal=0)
    with pytest.raises(zehal.UnsupportedError):
        dma.launch_indirect(k, counts, args=(out, 1))
    assert dma.pending == 0


def _spec_values(device, spirv, constants) -> list[int]:
    if constants is None:
        m = module_of(device, spirv["spec_constants"])  # skips where the device builds no SPIR-V
    else:
        m = zehal.Module(device, spirv["spec_constants"], constants=constants)
    out = shared(device, 8 * 4)
    zehal.Dma(device, ordinal=0).launch(m.kernel("spec_constants"), 1, args=(out,)).wait()
    return np.frombuffer(out, np.int64).tolist()


def test_specialization_constants_set_the_modules_values(device, spirv):
    assert _spec_values(device, spirv, None) == [10, 30, -3, 0]
    assert _spec_values(device, spirv, {0: 1 << 40, 2: -5, 3: True}) == [1 << 40, 30, -5, 1]
    assert _spec_values(device, spirv, {1: np.uint32(77), 2: 0xFFFF}) == [10, 77, -1, 0]
    m = zehal.Module(device, spirv["spec_constants"], constants={4: 2.75, 5: -0.125})
    out = shared(device, 16)
    zehal.Dma(device, ordinal=0).launch(m.kernel("spec_floats"), 1, args=(out,)).wait()
    assert np.frombuffer(out, np.float64).tolist() == [2.75, -0.125]


def test_specialization_constant_errors(device, spirv):
    module_of(device, spirv["spec_constants"])  # skips where the device builds no SPIR-V
    with pytest.raises(zehal.InvalidArgumentError) as e:
        zehal.Module(device, spirv["spec_constants"], constants={7: 1})
    assert "specialization constant 7" in e.value.log
    with pytest.raises(ValueError):
        zehal.Module(device, spirv["spec_constants"], constants={1: 1 << 32})  # a 32-bit constant
    with pytest.raises(ValueError):
        zehal.Module(device, spirv["spec_constants"], constants={2: -(1 << 15) - 1})
    with pytest.raises(TypeError):
        zehal.Module(device, spirv["spec_constants"], constants={0: 1.5})  # an integer constant
    with pytest.raises(TypeError):
        zehal.Module(device, spirv["spec_constants"], constants=[(0, 1)])
    with pytest.raises(TypeError):
        zehal.Module(device, spirv["spec_constants"], constants={"zero": 1})
    with pytest.raises(zehal.UnsupportedError):
        zehal.Module(device, b"not used", format="native", constants={0: 1})


def test_global_pointers_are_device_memory_of_the_module(device, spirv):
    m = module_of(device, spirv["globals"])
    address, size = m.global_pointer("weights")
    assert size == 16 and address != 0
    assert m.global_pointer("counter")[1] == 4
    assert zehal.Module(device, spirv["globals"]).global_pointer("counter")[0] != m.global_pointer("counter")[0]
    dma = zehal.Dma(device, ordinal=0)
    three = int(np.float32(3.0).view(np.uint32))
    dma.launch(module_of(device, spirv["buffers"]).kernel("fill_uint"), 4, group_size=1, args=(address, three)).wait()
    out = shared(device, 4 * 8)
    dma.launch(m.kernel("weigh_table"), 1, group_size=8, args=(out,)).wait()
    np.testing.assert_array_equal(np.frombuffer(out, np.float32), 3.0 * np.array([1, 2, 3, 5, 8, 13, 21, 34]))
    with pytest.raises(zehal.InvalidArgumentError) as e:
        m.global_pointer("no_such_variable")
    assert e.value.result_name == "ZE_RESULT_ERROR_INVALID_GLOBAL_NAME"


def importer_of(device, spirv) -> zehal.Module:
    """link_importer.cl's module; skips where the device cannot link (CUDA)."""
    try:
        return module_of(device, spirv["link_importer"])
    except zehal.UnsupportedError as e:
        pytest.skip(f"no linking on {device.backend}: {e}")


def test_linked_modules_call_the_exporters_code(device, spirv):
    importer = importer_of(device, spirv)
    exporter = module_of(device, spirv["link_exporter"])
    assert importer.has_imports and not exporter.has_imports
    with pytest.raises(zehal.InvalidArgumentError) as e:
        importer.kernel("offset_all")
    assert e.value.result_name == "ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED"
    zehal.Module.link([importer, exporter])
    dma = zehal.Dma(device, ordinal=0)
    data = shared(device, 4 * 8)
    np.frombuffer(data, np.int32)[:] = np.arange(8) * 2
    dma.launch(importer.kernel("offset_all"), 2, group_size=4, args=(data,)).wait()
    np.testing.assert_array_equal(np.frombuffer(data, np.int32), np.arange(8) * 3 + 1000)
    # The variable the importer uses is the exporter's own.
    dma.launch(importer.kernel("tickets"), 1, group_size=1, args=(data,)).wait()
    assert list(np.frombuffer(data, np.int32)[:3]) == [100, 101, 102]
    dma.launch(exporter.kernel("read_counter"), 1, group_size=1, args=(data,)).wait()
    assert np.frombuffer(data, np.int32)[0] == 112


def test_a_link_that_cannot_resolve_raises_with_its_log(device, spirv):
    importer = importer_of(device, spirv)
    with pytest.raises(zehal.ModuleBuildError) as e:
        zehal.Module.link([importer])
    assert e.value.result_name == "ZE_RESULT_ERROR_MODULE_LINK_FAILURE"
    assert "add_offset" in e.value.log and "link_counter" in e.value.log
    twice = [module_of(device, spirv["link_exporter"]) for _ in range(2)]
    with pytest.raises(zehal.ModuleBuildError) as e:
        zehal.Module.link([importer, *twice])
    assert "several" in e.value.log
    with pytest.raises(TypeError):
        zehal.Module.link([importer, "not a module"])
    zehal.Module.link([])  # nothing to link
