"""OpenCL C 2.0 kernels on every device: generic pointers into private, local and global
memory, builtins through generic and __constant pointers, __constant arguments,
module-scope __constant tables and buffers of structs holding pointers (docs/kernels.md,
"Address spaces"), and printf.

The kernels are tests/cpp/compiler/kernels' OpenCL C sources, compiled to SPIR-V here with
the build's tools (clang-15, llvm-spirv-15); without them, or on a device that builds no
SPIR-V, the tests are skipped."""

from __future__ import annotations

import ctypes
import pathlib

import numpy as np
import pytest
import zehal
from conftest import module_of, spirv_of_sources

KERNELS = pathlib.Path(__file__).resolve().parents[1] / "cpp" / "compiler" / "kernels"


@pytest.fixture(scope="module")
def spirv(tmp_path_factory) -> dict[str, bytes]:
    """SPIR-V of every tests/cpp/compiler/kernels source (OpenCL C 2.0), by file stem."""
    return spirv_of_sources(KERNELS, "CL2.0", tmp_path_factory.mktemp("spirv"))


def ints(device: zehal.Device, values) -> zehal.Buffer:
    """Shared memory holding ``values`` as int32."""
    values = np.asarray(values, dtype=np.int32)
    buffer = zehal.Area.shared(device).mmap(max(values.nbytes, 4))
    np.frombuffer(buffer, np.int32)[: values.size] = values
    return buffer


def test_generic_pointers_to_every_space(device, spirv):
    kernel = module_of(device, spirv["address_spaces"]).kernel("generic_pointers")
    n = 192
    values = np.arange(n, dtype=np.int32) * 7 - 100
    src, dst = ints(device, values), ints(device, np.full(n, -1))
    zehal.Dma(device, ordinal=0).launch(kernel, n // 64, group_size=64, args=(dst, src)).wait()
    np.testing.assert_array_equal(np.frombuffer(dst, np.int32), 2 * values + 13)


def test_constant_arguments_tables_and_builtins(device, spirv):
    module = module_of(device, spirv["address_spaces"])
    dma = zehal.Dma(device, ordinal=0)
    n = 40
    table = np.array([5, -3, 11, 2, 8], dtype=np.int32)
    out = ints(device, np.full(n, -1))
    dma.launch(module.kernel("constant_tables"), n // 8, group_size=8, args=(out, ints(device, table), 5)).wait()
    squares = np.arange(8, dtype=np.int32) ** 2
    i = np.arange(n)
    np.testing.assert_array_equal(np.frombuffer(out, np.int32), table[i % 5] + squares[i % 8])

    pairs = np.arange(2 * n, dtype=np.int32) ** 2 - 50
    doubled, counter = ints(device, np.full(2 * n, -1)), ints(device, [0])
    dma.launch(
        module.kernel("generic_builtins"), n // 4, group_size=4, args=(doubled, ints(device, pairs), counter)
    ).wait()
    np.testing.assert_array_equal(np.frombuffer(doubled, np.int32), 2 * pairs)
    assert np.frombuffer(counter, np.int32)[0] == n


def test_buffers_of_structs_holding_pointers(device, spirv):
    kernel = module_of(device, spirv["address_spaces"]).kernel("copy_indirect")
    items, count = 6, 9
    sources = [ints(device, 1000 * i + np.arange(count)) for i in range(items)]
    targets = [ints(device, np.zeros(count)) for _ in range(items)]
    pointers_in = zehal.Area.shared(device).mmap(8 * items)
    pointers_out = zehal.Area.shared(device).mmap(8 * items)
    np.frombuffer(pointers_in, np.uint64)[:] = [b.ptr for b in sources]
    np.frombuffer(pointers_out, np.uint64)[:] = [b.ptr for b in targets]
    zehal.Dma(device, ordinal=0).launch(
        kernel, items // 2, group_size=2, args=(pointers_in, pointers_out, count)
    ).wait()
    for i in range(items):
        np.testing.assert_array_equal(np.frombuffer(targets[i], np.int32), 1000 * i + np.arange(count))


def test_to_global_to_local_to_private(device, spirv):
    """Each cast keeps a pointer into its own space and gives null for the others, in a
    work-item loop and in a kernel with barriers and a __local argument (work-items on
    their own stacks where kernels run on the host; not on level_zero devices, whose
    kernels take no __local argument from Python)."""
    module = module_of(device, spirv["generic_casts"])
    n = 24
    out = ints(device, np.full(n, -1))
    dma = zehal.Dma(device, ordinal=0)
    dma.launch(module.kernel("generic_casts"), n // 8, group_size=8, args=(out,)).wait()
    np.testing.assert_array_equal(np.frombuffer(out, np.int32), [(1, 2, 4)[i % 3] for i in range(n)])
    if device.backend == "level_zero":
        return  # its kernels do not say which argument is __local memory: none can be given
    exact = ints(device, np.arange(n) % 3)
    dma.launch(module.kernel("generic_casts_exact"), n // 8, group_size=8, args=(exact, 8 * 4)).wait()
    np.testing.assert_array_equal(np.frombuffer(exact, np.int32), [(1, 2, 4)[i % 3] for i in range(n)])


def test_printf(device, spirv, capfd):
    """printf's output reaches the process's standard output by the time the wait that saw
    the kernel complete returns (on CUDA too, whose driver writes it only at some calls:
    docs/kernels.md), each launch's before the next one's."""
    kernel = module_of(device, spirv["printf"]).kernel("print_values")
    out = ints(device, np.full(4, -1))
    # NumPy scalars: a level_zero device takes each argument's size from its value.
    args = (out, np.float32(1.5), np.float64(2.25), np.int64(-1234567890123), np.int16(-7), np.int8(ord("z")))
    dma = zehal.Dma(device, ordinal=0)
    for launch in range(2):
        dma.launch(kernel, 2, group_size=2, args=args).wait()
        ctypes.CDLL(None).fflush(None)
        printed = capfd.readouterr().out
        for i in range(4):
            line = f"item {i}: float 1.50 double 2.250 long -1234567890123 short -7 char z string text\n"
            assert printed.count(line) == 1, (launch, printed)
        assert printed.count("pointer is null: 0\n") == 1, (launch, printed)
    np.testing.assert_array_equal(np.frombuffer(out, np.int32), np.arange(4))
