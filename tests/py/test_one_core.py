"""One core per process: the Python module and the C API library (libzehal.so) share one
registry, so memory one of them allocates on the sim device is the other's too; the Level
Zero driver keeps a copy of its own (docs/build.md), and the level_zero backend's probe,
which loads it through the loader, works whichever is loaded first (child processes)."""

from __future__ import annotations

import ctypes.util

import pytest
import zehal
from conftest import run_python

pytestmark = pytest.mark.skipif(ctypes.util.find_library("ze_loader") is None, reason="no Level Zero loader installed")

# Prints the level_zero backend's availability (its probe loads the loader and the driver),
# then what the C API's default engine does with a copy into device memory that Python
# mapped (the bytes, read back through Python, when the C API's device is Python's; an
# AML error code when that memory is foreign to it), and the type zehal's driver reports
# for that memory (0: unknown, the driver's sim device is another one).
PROGRAM = """
import ctypes, os, sys
import zehal

class AllocProperties(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_uint32), ("pNext", ctypes.c_void_p), ("type", ctypes.c_uint32),
                ("id", ctypes.c_uint64), ("pageSize", ctypes.c_uint64)]

class ContextDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_uint32), ("pNext", ctypes.c_void_p), ("flags", ctypes.c_uint32)]

def level_zero():
    b = next(b for b in zehal.backends() if b.name == "level_zero")
    return f"level_zero {b.available}"

def driver():
    ze = ctypes.CDLL("libze_loader.so.1")
    assert ze.zeInit(0) == 0, "zeInit"
    count = ctypes.c_uint32(1)
    handle = ctypes.c_void_p()
    assert ze.zeDriverGet(ctypes.byref(count), ctypes.byref(handle)) == 0 and count.value == 1
    context = ctypes.c_void_p()
    desc = ContextDesc(0xD, None, 0)
    assert ze.zeContextCreate(handle, ctypes.byref(desc), ctypes.byref(context)) == 0
    return ze, context

lines = []
if ORDER == "loader-first":
    ze, context = driver()
    lines.append(level_zero())
else:
    lines.append(level_zero())
    ze, context = driver()

device = zehal.Area.default_device().mmap(4096)
host = zehal.Area.default_host().mmap(4096)
memoryview(host)[:] = bytes(range(256)) * 16
back = zehal.Area.default_host().mmap(4096)
props = AllocProperties(0x17, None, 0, 0, 0)
assert ze.zeMemGetAllocProperties(context, ctypes.c_void_p(device.ptr), ctypes.byref(props), None) == 0
capi = ctypes.CDLL(os.path.join(zehal.get_library_dir(), "libzehal.so"))
capi.aml_dma_ze_default_location.restype = ctypes.POINTER(ctypes.c_void_p)
capi.aml_dma_ze_copy_signal.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                        ctypes.c_size_t, ctypes.c_void_p]
capi.aml_dma_wait.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
dma = capi.aml_dma_ze_default_location()[0]
request = ctypes.c_void_p()
copied = capi.aml_dma_ze_copy_signal(dma, ctypes.byref(request), device.ptr, host.ptr, 4096, None)
if copied == 0:
    copied = capi.aml_dma_wait(dma, ctypes.byref(request))
if copied == 0:
    zehal.Dma.default().copy(back, device, request=False)
    zehal.Dma.default().barrier()
    copied = "same-bytes" if bytes(memoryview(back)) == bytes(memoryview(host)) else "other-bytes"
lines.append(f"c-api-copy {copied} driver-type {props.type}")
print("\\n".join(lines), flush=True)
"""


@pytest.mark.parametrize("order", ["zehal-first", "loader-first"])
def test_python_and_the_c_api_share_one_sim_device(order):
    env = {"ZE_ENABLE_ALT_DRIVERS": zehal.ze_driver_path(), "ZEHAL_BACKEND": "sim"}
    done = run_python(f"ORDER = {order!r}\n" + PROGRAM, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    level_zero, memory = done.stdout.splitlines()[-2:]
    # The level_zero backend runs over zehal's own driver, whose device is a sim device.
    assert level_zero == "level_zero True"
    assert memory == "c-api-copy same-bytes driver-type 0"
