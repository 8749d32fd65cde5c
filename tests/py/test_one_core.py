"""One core per process: the Python module, the C API library (libzehal.so) and the Level
Zero driver share one registry, so memory one of them allocates on the sim device is known
to the others; and the level_zero backend's probe, which loads that same driver through the
loader, neither deadlocks nor recurses, whichever is loaded first (child processes)."""

from __future__ import annotations

import ctypes.util

import pytest

import zehal
from conftest import run_python

pytestmark = pytest.mark.skipif(
    ctypes.util.find_library("ze_loader") is None, reason="no Level Zero loader installed"
)

# Prints the level_zero backend's availability (its probe loads the loader and the driver),
# then, for memory allocated through Python and through the C API, the type the driver
# reports for it (2: device) and whether the driver names the same device for both.
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

def kind_and_device(ze, context, ptr):
    props = AllocProperties(0x17, None, 0, 0, 0)
    device = ctypes.c_void_p()
    assert ze.zeMemGetAllocProperties(context, ctypes.c_void_p(ptr), ctypes.byref(props), ctypes.byref(device)) == 0
    return props.type, device.value

lines = []
if sys.argv[1] == "loader-first":
    ze, context = driver()
    lines.append(level_zero())
else:
    lines.append(level_zero())
    ze, context = driver()

from_python = zehal.Area.default_device().mmap(4096)
capi = ctypes.CDLL(os.path.join(zehal.get_library_dir(), "libzehal.so"))
capi.aml_area_ze_device_location.restype = ctypes.POINTER(ctypes.c_void_p)
capi.aml_area_mmap.restype = ctypes.c_void_p
capi.aml_area_mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
from_c = capi.aml_area_mmap(capi.aml_area_ze_device_location()[0], 4096, None)
assert from_c, "aml_area_mmap"

python_type, python_device = kind_and_device(ze, context, from_python.ptr)
c_type, c_device = kind_and_device(ze, context, from_c)
lines.append(f"python {python_type} c {c_type} same-device {python_device == c_device and python_device is not None}")
print("\\n".join(lines))
"""


@pytest.mark.parametrize("order", ["zehal-first", "loader-first"])
def test_python_the_c_api_and_the_driver_share_one_sim_device(order):
    env = {"ZE_ENABLE_ALT_DRIVERS": zehal.ze_driver_path(), "ZEHAL_BACKEND": "sim"}
    done = run_python(PROGRAM.replace("sys.argv[1]", repr(order)), env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    level_zero, memory = done.stdout.splitlines()[-2:]
    # The level_zero backend runs over zehal's own driver, whose devices are the sim one.
    assert level_zero == "level_zero True"
    assert memory == "python 2 c 2 same-device True"
