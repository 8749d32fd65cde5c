"""The seed sample "event query kernel timestamps" with a real kernel, from Python: a
SPIR-V kernel launched on a compute engine signals an event of a 'mapped' timestamp pool;
the event's kernel timestamps (device ticks) and synchronized timestamps (host ns) are the
kernel's start and end, and the synchronized ones lie between the host clock read before
the launch and after the wait.

    python3 kernel_timestamps.py [kernel.spv]

Without an argument the kernel below is compiled to SPIR-V with clang-15 and llvm-spirv-15.
Exit status 0 on success."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import zehal

SOURCE = """
kernel void scale(global float* data, float factor) {
    const size_t i = get_global_id(0);
    data[i] = data[i] * factor;
}
"""


def spirv_of_source() -> bytes:
    clang, translator = shutil.which("clang-15"), shutil.which("llvm-spirv-15")
    if not clang or not translator:
        sys.exit("clang-15 and llvm-spirv-15 are needed without a .spv argument")
    with tempfile.TemporaryDirectory() as tmp:
        d = pathlib.Path(tmp)
        (d / "k.cl").write_text(SOURCE)
        subprocess.run(
            [clang, "-cl-std=CL1.2", "-target", "spir64", "-emit-llvm", "-c", str(d / "k.cl"), "-o", str(d / "k.bc")],
            check=True,
        )
        subprocess.run([translator, str(d / "k.bc"), "-o", str(d / "k.spv")], check=True)
        return (d / "k.spv").read_bytes()


def main() -> int:
    spirv = pathlib.Path(sys.argv[1]).read_bytes() if len(sys.argv) > 1 else spirv_of_source()
    device = zehal.default_device()
    print(f"device: {device.name} ({device.backend}), timer {device.properties.timer_hz} Hz")
    scale = zehal.Module(device, spirv).kernel("scale")

    n = 1 << 16
    data = zehal.Area.shared(device).mmap(4 * n)
    values = np.frombuffer(data, np.float32)
    values[:] = np.arange(n, dtype=np.float32)

    pool = zehal.EventPool(device, 1, timestamps="mapped")
    event = pool.event(0)
    engine = zehal.Dma(device, ordinal=0)
    before = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
    engine.launch(scale, n // 64, group_size=64, args=(data, np.float32(2.0)), signal=event).wait()
    after = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)

    ticks = event.kernel_timestamps()[0]
    host = event.synchronized_timestamps()[0]
    print(
        f"kernel: ticks {ticks['global_start']} .. {ticks['global_end']}, "
        f"{host['global_end'] - host['global_start']} ns"
    )
    ok = (
        np.array_equal(values, 2 * np.arange(n, dtype=np.float32))
        and before <= host["global_start"] <= host["global_end"] <= after
    )
    print("kernel timestamps of a launch:", "ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
