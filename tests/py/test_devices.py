"""Several devices from Python (docs/devices.md): peer access, copies between devices' buffers
through ``Dma`` on either device, concurrent copies on both devices' engines, a lost peer,
the registry's ``ZEHAL_SIM_DEVICES`` and DLPack of each device's memory. The sim tests run
everywhere; the ``cuda`` ones need two CUDA devices and skip, saying so, with fewer."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import zehal
from conftest import backend_status, run_python

KDL_EXT_DEV, KDL_CUDA = 12, 2


def pattern(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)


def filled(device: zehal.Device, data: np.ndarray, kind: str = "device") -> zehal.Buffer:
    """A buffer of `device` holding `data`, copied in through host memory on its own engine."""
    host = zehal.Area.host().mmap(data.nbytes)
    np.asarray(host)[:] = data
    buf = getattr(zehal.Area, kind)(device).mmap(data.nbytes)
    zehal.Dma(device).copy(buf, host).wait()
    return buf


def contents(buf: zehal.Buffer) -> np.ndarray:
    """The bytes of `buf`, read back on its own device's engine."""
    host = zehal.Area.host().mmap(buf.nbytes)
    zehal.Dma(buf.device).copy(host, buf).wait()
    return np.asarray(host).copy()


def two_cuda_devices() -> list[zehal.Device]:
    status = backend_status("cuda")
    if not status.available:
        pytest.skip(f"cuda backend unavailable: {status.reason}")
    found = zehal.devices("cuda")
    if len(found) < 2:
        pytest.skip(f"two CUDA devices needed, {len(found)} found")
    return found[:2]


def check_peer_copies(a: zehal.Device, b: zehal.Device, n: int) -> None:
    """a → b and b → a, on the engines of each device, device and shared memory."""
    for runner in (a, b):
        for kind in ("device", "shared"):
            data = pattern(n, seed=n + (runner == b))
            on_a = filled(a, data, kind)
            on_b = getattr(zehal.Area, kind)(b).mmap(n)
            back = getattr(zehal.Area, kind)(a).mmap(n)
            dma = zehal.Dma(runner)
            dma.copy(on_b, on_a).wait()  # a -> b
            dma.copy(back, on_b).wait()  # b -> a
            assert np.array_equal(contents(on_b), data), (runner, kind)
            assert np.array_equal(contents(back), data), (runner, kind)
            dma.close()


def check_concurrent_copies(a: zehal.Device, b: zehal.Device, n: int, rounds: int) -> None:
    """Every copy engine of both devices copies between the two at once, both directions."""
    lanes = []
    for runner in (a, b):
        for i in range(max(1, runner.properties.copy_engines)):
            k = len(lanes)
            lanes.append((runner, i, a if k % 2 == 0 else b, b if k % 2 == 0 else a))
    errors: list[BaseException] = []

    def lane(runner: zehal.Device, index: int, src_dev: zehal.Device, dst_dev: zehal.Device, seed: int) -> None:
        try:
            dma = zehal.Dma(runner, ordinal=1 if runner.properties.copy_engines else 0, index=index)
            for r in range(rounds):
                data = pattern(n, seed * 1000 + r)
                src = filled(src_dev, data)
                dst = zehal.Area.device(dst_dev).mmap(n)
                dma.copy(dst, src).wait()
                assert np.array_equal(contents(dst), data)
            dma.close()
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=lane, args=(*ln, k)) for k, ln in enumerate(lanes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors


def test_sim_devices_are_peers(sim_backend):
    a, b = zehal.sim_device(link_bandwidth_bytes_per_s=25_000_000_000), zehal.sim_device()
    assert a.can_access_peer(b) and b.can_access_peer(a) and a.can_access_peer(a)
    assert a.peer_properties(b) == {"access": True, "atomics": True, "bandwidth_bytes_per_s": 25_000_000_000}
    assert b.peer_properties(a)["bandwidth_bytes_per_s"] == 0
    with pytest.raises(zehal.Error):
        a.can_access_peer(None)


@pytest.mark.parametrize("n", [4096, 1 << 20])
def test_sim_peer_copies_in_both_directions_on_either_device(sim_backend, n):
    check_peer_copies(zehal.sim_device(), zehal.sim_device(), n)


def test_sim_concurrent_copies_on_both_devices_engines(sim_backend):
    check_concurrent_copies(zehal.sim_device(copy_engines=2), zehal.sim_device(copy_engines=2), 1 << 16, 10)


def test_sim_layout_copy_between_peers(sim_backend):
    a, b = zehal.sim_device(), zehal.sim_device()
    data = pattern(4096, 7)
    src = filled(a, data)
    dst = zehal.Area.device(b).mmap(4096)
    zehal.Dma(a).copy(zehal.Layout.dense(dst, 4, 1024), zehal.Layout.dense(src, 4, 1024)).wait()
    assert np.array_equal(contents(dst), data)


def test_a_lost_peer_is_refused_and_the_engine_stays_usable(sim_backend):
    a, b = zehal.sim_device(), zehal.sim_device()
    on_a = filled(a, pattern(4096, 1))
    on_b = zehal.Area.device(b).mmap(4096)
    dma = zehal.Dma(a)
    b.lose()
    with pytest.raises(zehal.DeviceLostError):
        dma.copy(on_b, on_a)
    with pytest.raises(zehal.DeviceLostError):
        dma.copy(on_a, on_b)
    host = zehal.Area.host().mmap(4096)
    dma.copy(host, on_a).wait()
    assert np.array_equal(np.asarray(host), pattern(4096, 1))
    dma.close()


def test_registry_offers_zehal_sim_devices_and_dlpack_names_each():
    code = (
        "import zehal\n"
        "ds = zehal.devices('sim')\n"
        "print(len(ds), ds[0].can_access_peer(ds[2]))\n"
        "print(*[zehal.Area.device(d).mmap(64).__dlpack_device__() for d in ds])\n"
    )
    out = run_python(code, env={"ZEHAL_BACKEND": "sim", "ZEHAL_SIM_DEVICES": "3"})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "3 True"
    assert lines[1] == f"({KDL_EXT_DEV}, 0) ({KDL_EXT_DEV}, 1) ({KDL_EXT_DEV}, 2)"


def test_a_bad_sim_device_count_is_named():
    code = "import zehal\ntry:\n    zehal.default_device()\nexcept zehal.Error as e:\n    print(e)"
    out = run_python(code, env={"ZEHAL_BACKEND": "sim", "ZEHAL_SIM_DEVICES": "0"})
    assert out.returncode == 0, out.stderr
    assert "ZEHAL_SIM_DEVICES = 0 (must be 1..64)" in out.stdout


@pytest.mark.cuda
def test_cuda_peer_access_is_symmetric_and_reported():
    a, b = two_cuda_devices()
    assert a.can_access_peer(a)
    assert a.can_access_peer(b) == a.peer_properties(b)["access"]
    assert a.can_access_peer(b) == b.can_access_peer(a)


@pytest.mark.cuda
@pytest.mark.parametrize("n", [4096, 1 << 20, 64 << 20])
def test_cuda_peer_copies_in_both_directions_on_either_device(n, monkeypatch):
    a, b = two_cuda_devices()
    monkeypatch.setenv("ZEHAL_BACKEND", "cuda")
    check_peer_copies(a, b, n)


@pytest.mark.cuda
def test_cuda_concurrent_copies_on_both_devices_engines(monkeypatch):
    a, b = two_cuda_devices()
    monkeypatch.setenv("ZEHAL_BACKEND", "cuda")
    check_concurrent_copies(a, b, 8 << 20, 5)


@pytest.mark.cuda
def test_cuda_dlpack_of_each_devices_memory_names_it(monkeypatch):
    a, b = two_cuda_devices()
    monkeypatch.setenv("ZEHAL_BACKEND", "cuda")
    assert zehal.Area.device(a).mmap(64).__dlpack_device__() == (KDL_CUDA, 0)
    assert zehal.Area.device(b).mmap(64).__dlpack_device__() == (KDL_CUDA, 1)


TRACED_SCRIPT = """
import zehal
a, b = zehal.devices()[:2]
host = zehal.Area.host().mmap(1 << 12)
on_a = zehal.Area.device(a).mmap(1 << 12)
on_b = zehal.Area.device(b).mmap(1 << 12)
zehal.Dma(a).copy(on_a, host).wait()
for _ in range(3):
    zehal.Dma(b).copy(on_b, on_a).wait()  # b's engine, a's memory
"""


def test_zehal_trace_puts_each_devices_engines_on_tracks_of_their_own(tmp_path):
    import json
    import os
    import subprocess
    import sys

    script = tmp_path / "two.py"
    script.write_text(TRACED_SCRIPT)
    out = tmp_path / "trace.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZEHAL_TRACE")}
    env.update({"ZEHAL_BACKEND": "sim", "ZEHAL_SIM_DEVICES": "2"})
    done = subprocess.run(
        [sys.executable, "-m", "zehal", "trace", "--output", str(out), "--", sys.executable, str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    events = json.loads(out.read_text())["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    copies_by_process: dict[str, int] = {}
    for e in events:
        if e["ph"] == "X" and e["name"] == "copy":
            name = processes[e["pid"]]
            copies_by_process[name] = copies_by_process.get(name, 0) + 1
    engines_a = [n for n in copies_by_process if n.startswith("engines") and n.endswith("zehal sim device 0")]
    engines_b = [n for n in copies_by_process if n.startswith("engines") and n.endswith("zehal sim device 1")]
    assert len(engines_a) == 1 and len(engines_b) == 1, processes
    assert copies_by_process[engines_a[0]] == 1  # the copy in, on a's engine
    assert copies_by_process[engines_b[0]] == 3  # the peer copies, on b's engine
