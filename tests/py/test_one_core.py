"""One core per process: the Python module and the C API library (libzehal.so) share one
registry, so memory one of them allocates on the sim device is the other's too; the Level
Zero driver keeps a copy of its own (docs/build.md), and the level_zero backend's probe,
which loads it through the loader, works whichever is loaded first (child processes)."""

from __future__ import annotations

import ctypes.util

import pytest

import zehal
from conftest import run_python

pytestmark = pytest.mark.skipif(
    ctypes.util.find_library("ze_loader") is None, reason="no Level Zero loader installed"
)

# Prints the level_zero backend's availability (its probe loads the loader and the driver),
# then the C API's answer to unmapping, from its default device area, memory that Python
# mapped from its own (0: it is that area's memory), and the type zehal's driver reports
# for it (0: unknown, the driver's sim device is another one).
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

buffer = zehal.Area.default_device().mmap(4096)
props = AllocProperties(0x17, None, 0, 0, 0)
assert ze.zeMemGetAllocProperties(context, ctypes.c_void_p(buffer.ptr), ctypes.byref(props), None) == 0
capi = ctypes.CDLL(os.path.join(zehal.get_library_dir(), "libzehal.so"))
capi.aml_area_ze_device_location.restype = ctypes.POINTER(ctypes.c_void_p)
capi.aml_area_munmap.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
unmapped = capi.aml_area_munmap(capi.aml_area_ze_device_location()[0], buffer.ptr, 4096)
lines.append(f"c-api-unmap {unmapped} driver-type {props.type}")
print("\\n".join(lines), flush=True)
os._exit(0)  # the C API gave the buffer back: Python must not unmap it again
"""


@pytest.mark.parametrize("order", ["zehal-first", "loader-first"])
def test_python_and_the_c_api_share_one_sim_device(order):
    env = {"ZE_ENABLE_ALT_DRIVERS": zehal.ze_driver_path(), "ZEHAL_BACKEND": "sim"}
    done = run_python(f"ORDER = {order!r}\n" + PROGRAM, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    level_zero, memory = done.stdout.splitlines()[-2:]
    # The level_zero backend runs over zehal's own driver, whose device is a sim device.
    assert level_zero == "level_zero True"
    assert memory == "c-api-unmap 0 driver-type 0"
