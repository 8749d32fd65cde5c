"""Fixtures shared by the Python tests.

``device`` runs a test on a fresh sim device and, where the cuda backend is available,
again on the first CUDA device (marked ``cuda``; skipped with the backend's reason
elsewhere), so the whole suite runs against CUDA where a GPU exists; likewise on the first
level_zero device (marked ``level_zero``): an Intel GPU, or zehal's own Level Zero driver
where ``ZE_ENABLE_ALT_DRIVERS`` names it (scripts/test.sh runs the suite so). ``sim`` is a fresh
sim device for tests of sim-only behaviour (configuration, fault injection).

Both fixtures set ``ZEHAL_BACKEND`` to the device's own backend for the test's duration
(the registry reads the variable on every call), so default-backend objects such as
``zehal.Area.host()`` belong to the backend of the device under test, on a GPU machine
too. ``sim_backend`` does the same for tests that build their own sim devices.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import zehal


def backend_status(name: str) -> zehal.BackendInfo:
    for b in zehal.backends():
        if b.name == name:
            return b
    raise LookupError(name)


def cuda_device() -> zehal.Device:
    """The first CUDA device, or a skip saying why there is none."""
    status = backend_status("cuda")
    if not status.available:
        pytest.skip(f"cuda backend unavailable: {status.reason}")
    found = zehal.devices("cuda")
    if not found:
        pytest.skip("cuda backend has no device")
    return found[0]


def level_zero_device() -> zehal.Device:
    """The first level_zero device, or a skip saying why there is none."""
    status = backend_status("level_zero")
    if not status.available:
        pytest.skip(f"level_zero backend unavailable: {status.reason}")
    found = zehal.devices("level_zero")
    if not found:
        pytest.skip("level_zero backend has no device")
    return found[0]


def default_device_traces(env: dict[str, str] | None = None) -> bool:
    """Whether the default device of a process with environment `env` (this one's when
    None) has a tracer: the device ZEHAL_BACKEND names, else the first available one."""
    forced = (os.environ if env is None else env).get("ZEHAL_BACKEND")
    names = [forced] if forced else [b.name for b in zehal.backends() if b.available]
    for name in names:
        found = zehal.devices(name)
        if found:
            return found[0].properties.tracer
    return False


@pytest.fixture(
    params=[
        "sim",
        pytest.param("cuda", marks=pytest.mark.cuda),
        pytest.param("level_zero", marks=pytest.mark.level_zero),
    ]
)
def device(request, monkeypatch) -> zehal.Device:
    makers = {"sim": zehal.sim_device, "cuda": cuda_device, "level_zero": level_zero_device}
    d = makers[request.param]()
    monkeypatch.setenv("ZEHAL_BACKEND", d.backend)
    return d


@pytest.fixture
def sim_backend(monkeypatch) -> None:
    """The sim backend is the default one for the test's duration."""
    monkeypatch.setenv("ZEHAL_BACKEND", "sim")


@pytest.fixture
def sim(sim_backend) -> zehal.Device:
    return zehal.sim_device()


# What a sanitizer runtime writes when it finds a fault (scripts/sanitize_python.sh): a report
# from a thread that ends with the process may leave the exit status at 0.
SANITIZER_REPORTS = ("runtime error:", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "WARNING: ThreadSanitizer")


def check_one_parameter_calls(method, name: str, value: object, unknown: str) -> None:
    """``method`` (bound, of one parameter ``name``) refuses what a Python function of that
    signature refuses: two positional arguments, an unknown keyword ``unknown``, ``name``
    given twice."""
    with pytest.raises(TypeError, match="at most 1 positional"):
        method(value, value)
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{unknown}'"):
        method(**{unknown: value})
    with pytest.raises(TypeError, match=f"multiple values for argument '{name}'"):
        method(value, **{name: value})


def sanitizer_report(stderr: str) -> str | None:
    """The first line of a sanitizer report in ``stderr``, or None."""
    return next((line for line in stderr.splitlines() if any(r in line for r in SANITIZER_REPORTS)), None)


def run_python(code: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs ``python -c code`` in a fresh interpreter with extra environment variables."""
    full = dict(os.environ)
    full.pop("ZEHAL_BACKEND", None)
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=timeout, check=False
    )


def spirv_of_sources(folder, cl_std: str, out) -> dict[str, bytes]:
    """SPIR-V of every OpenCL C source in ``folder``, by file stem, built into ``out`` with
    the build's tools (clang-15 for OpenCL C ``cl_std``, or the version a source's first line
    names as ``-cl-std=...``, then llvm-spirv-15); skips the test without them."""
    clang, translator = shutil.which("clang-15"), shutil.which("llvm-spirv-15")
    if not clang or not translator:
        pytest.skip("clang-15 and llvm-spirv-15 are needed to build the test kernels")
    result = {}
    for source in sorted(folder.glob("*.cl")):
        bc, spv = out / (source.stem + ".bc"), out / (source.stem + ".spv")
        first = source.read_text().split("\n", 1)[0]
        std = first.split("-cl-std=", 1)[1].split()[0] if "-cl-std=" in first else cl_std
        subprocess.run(
            [clang, f"-cl-std={std}", "-target", "spir64", "-emit-llvm", "-c", str(source), "-o", str(bc)],
            check=True,
            timeout=120,
        )
        subprocess.run([translator, str(bc), "-o", str(spv)], check=True, timeout=120)
        result[source.stem] = spv.read_bytes()
    return result


def module_of(device: zehal.Device, binary: bytes) -> zehal.Module:
    """A module of ``binary`` on ``device``; skips the test where the device builds none."""
    try:
        return zehal.Module(device, binary)
    except zehal.UnsupportedError as e:
        pytest.skip(f"no SPIR-V modules on {device.backend}: {e}")
