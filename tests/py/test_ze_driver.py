"""zehal as a Level Zero driver from Python (SEMANTICS §9): where the library is, how the
CLI names it, and that the real loader loads it (a child process, through ctypes)."""

from __future__ import annotations

import ctypes.util
import io
import os
import subprocess
import sys

import pytest
import zehal
from conftest import run_python
from zehal import cli


def test_ze_driver_path_is_the_shipped_library():
    path = zehal.ze_driver_path()
    assert os.path.isabs(path)
    assert os.path.basename(path) == "libze_zehal.so"
    assert os.path.isfile(path)
    assert "ze_driver_path" in zehal.__all__


def test_a_build_without_the_driver_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(zehal, "_HERE", tmp_path)
    with pytest.raises(zehal.UnsupportedError) as err:
        zehal.ze_driver_path()
    assert err.value.result_name == "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE"
    assert err.value.code == 0x78000003 and err.value.aml_errno == 5
    assert "libze_zehal.so is missing" in str(err.value)
    out = io.StringIO()
    cli.print_info(out)
    assert "Level Zero driver: none (this zehal build has no Level Zero driver" in out.getvalue()


def test_python_m_zehal_prints_it():
    out = subprocess.run(
        [sys.executable, "-m", "zehal", "--ze-driver"], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == zehal.ze_driver_path()
    bad = subprocess.run(
        [sys.executable, "-m", "zehal", "--ze-driver", "extra"], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 2


def test_zehal_info_names_the_driver():
    out = subprocess.run(
        [sys.executable, "-m", "zehal", "info"], capture_output=True, text=True, check=True, timeout=60
    )
    assert f"Level Zero driver: {zehal.ze_driver_path()}" in out.stdout


LOADER_PROGRAM = """
import ctypes, sys
ze = ctypes.CDLL("libze_loader.so.1")
assert ze.zeInit(1) == 0, "zeInit"
count = ctypes.c_uint32(0)
assert ze.zeDriverGet(ctypes.byref(count), None) == 0 and count.value == 1, count.value
driver = ctypes.c_void_p()
assert ze.zeDriverGet(ctypes.byref(count), ctypes.byref(driver)) == 0
devices = ctypes.c_uint32(0)
assert ze.zeDeviceGet(driver, ctypes.byref(devices), None) == 0
version = ctypes.c_uint32(0)
assert ze.zeDriverGetApiVersion(driver, ctypes.byref(version)) == 0
print(devices.value, version.value >> 16, version.value & 0xFFFF)
"""


@pytest.mark.skipif(ctypes.util.find_library("ze_loader") is None, reason="no Level Zero loader installed")
def test_the_loader_loads_the_driver():
    done = run_python(LOADER_PROGRAM, env={"ZE_ENABLE_ALT_DRIVERS": zehal.ze_driver_path()})
    assert done.returncode == 0, done.stderr
    devices, major, minor = (int(x) for x in done.stdout.split())
    # Every device of the sim and cuda backends, never a level_zero one.
    expected = sum(len(b.devices()) for b in zehal.backends() if b.available and b.name in ("sim", "cuda"))
    assert devices == expected
    assert (major, minor) >= (1, 10)


@pytest.mark.skipif(ctypes.util.find_library("ze_loader") is None, reason="no Level Zero loader installed")
def test_the_driver_follows_the_sim_configuration():
    # ZEHAL_SIM_* configures the driver's sim device as it does zehal's.
    code = (
        LOADER_PROGRAM
        + """
import ctypes
class Props(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_uint32), ("pNext", ctypes.c_void_p), ("type", ctypes.c_uint32),
                ("vendorId", ctypes.c_uint32), ("deviceId", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("subdeviceId", ctypes.c_uint32), ("coreClockRate", ctypes.c_uint32),
                ("maxMemAllocSize", ctypes.c_uint64), ("pad", ctypes.c_uint32 * 8),
                ("timerResolution", ctypes.c_uint64), ("timestampValidBits", ctypes.c_uint32),
                ("kernelTimestampValidBits", ctypes.c_uint32), ("uuid", ctypes.c_uint8 * 16),
                ("name", ctypes.c_char * 256)]
handles = (ctypes.c_void_p * devices.value)()
assert ze.zeDeviceGet(driver, ctypes.byref(devices), handles) == 0
p = Props(stype=0x00020006)
assert ze.zeDeviceGetProperties(ctypes.c_void_p(handles[devices.value - 1]), ctypes.byref(p)) == 0
print(p.timerResolution, p.kernelTimestampValidBits)
"""
    )
    done = run_python(
        code,
        env={
            "ZE_ENABLE_ALT_DRIVERS": zehal.ze_driver_path(),
            "ZEHAL_SIM_TIMER_HZ": "1000000",
            "ZEHAL_SIM_KERNEL_TIMESTAMP_VALID_BITS": "20",
        },
    )
    assert done.returncode == 0, done.stderr
    hz, bits = (int(x) for x in done.stdout.splitlines()[-1].split())
    assert (hz, bits) == (1_000_000, 20)
