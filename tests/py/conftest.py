"""Fixtures shared by the Python tests.

``device`` runs a test on a fresh sim device and, where the cuda backend is available,
again on the first CUDA device (marked ``cuda``; skipped with the backend's reason
elsewhere), so the whole suite runs against CUDA where a GPU exists. ``sim`` is a fresh
sim device for tests of sim-only behaviour (configuration, fault injection).
"""

from __future__ import annotations

import os
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


@pytest.fixture(params=["sim", pytest.param("cuda", marks=pytest.mark.cuda)])
def device(request) -> zehal.Device:
    if request.param == "sim":
        return zehal.sim_device()
    return cuda_device()


@pytest.fixture
def sim() -> zehal.Device:
    return zehal.sim_device()


def run_python(code: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs ``python -c code`` in a fresh interpreter with extra environment variables."""
    full = dict(os.environ)
    full.pop("ZEHAL_BACKEND", None)
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=timeout, check=False
    )
