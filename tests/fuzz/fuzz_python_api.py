"""A bounded fuzz run of zehal's Python API: random raw data into the decoder, random
layouts, and random values into the argument parsers of areas, buffers, DMA, events,
metric streamers and sim devices. Every call must either succeed or raise one of the
errors the API documents; anything else (a crash, SystemError, an undocumented
exception) ends the run with status 1.

    python3 tests/fuzz/fuzz_python_api.py --seconds 60 [--seed N]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

import numpy as np
import zehal
from zehal import _zehal

EXPECTED = (zehal.Error, TypeError, ValueError, BufferError, OverflowError, MemoryError, NotImplementedError)


def value(rng: random.Random):
    """An argument of a random kind, biased to the edges."""
    return rng.choice(
        [
            0,
            1,
            -1,
            7,
            64,
            4096,
            2**31,
            2**32,
            2**63,
            2**64,
            2**70,
            -(2**63),
            rng.randrange(-(2**40), 2**40),
            np.int64(rng.randrange(0, 1 << 20)),
            np.uint8(3),
            0.5,
            float("nan"),
            "x",
            "",
            b"\0",
            None,
            (),
            (1,),
            (1, 2),
            (1, 2, 3),
            [0, 0],
            object(),
        ]
    )


def fuzz_decoder(rng, decoder):
    n = rng.randrange(0, 40)
    raw = bytearray(rng.getrandbits(8) for _ in range(n * rng.choice([1, 8, 32])))
    if raw and rng.random() < 0.7:
        # Mostly well-formed records with random fields.
        recs = np.zeros(max(1, len(raw) // 32), dtype=_zehal.TRACE_RECORD_DTYPE)
        for name in recs.dtype.names:
            recs[name] = np.frombuffer(os.urandom(recs[name].nbytes), dtype=recs[name].dtype)
        recs["size"] = rng.choice([32, 32, 32, 0, 16, 64])
        recs["kind"] %= 8
        raw = bytearray(recs.tobytes()[: rng.randrange(1, recs.nbytes + 1)])
    decoder.decode(bytes(raw) if rng.random() < 0.5 else np.frombuffer(raw, dtype=np.uint8))


def fuzz_layout(rng, buf):
    zehal.Layout.dense(
        buf,
        value(rng) if rng.random() < 0.3 else rng.choice([1, 2, 4, 8]),
        [value(rng) if rng.random() < 0.2 else rng.randrange(0, 20) for _ in range(rng.randrange(0, 5))],
        order=rng.choice(["C", "F", "X"]),
        stride=None if rng.random() < 0.5 else [rng.randrange(0, 4) for _ in range(rng.randrange(0, 5))],
        pitch=None if rng.random() < 0.5 else [rng.randrange(0, 30) for _ in range(rng.randrange(0, 5))],
    ).deref([rng.randrange(0, 20) for _ in range(rng.randrange(0, 5))])


def fuzz_parsers(rng, device, host, dma, sampled):
    choice = rng.randrange(8)
    if choice == 0:
        host.mmap(value(rng)).close()
    elif choice == 1:
        zehal.Area.device(device, ordinal=value(rng), alignment=value(rng))
    elif choice == 2:
        buf = host.mmap(256)
        buf.__dlpack__(stream=value(rng), max_version=value(rng), dl_device=value(rng), copy=value(rng))
    elif choice == 3:
        a, b = host.mmap(256), host.mmap(256)
        r = dma.copy(a, b, value(rng), dst_offset=rng.choice([0, value(rng)]), src_offset=rng.choice([0, value(rng)]))
        if r is not None:
            r.wait(rng.choice([None, 0, 0.01, value(rng)]))
    elif choice == 4:
        zehal.EventPool(device, value(rng), timestamps=rng.choice([None, "kernel", "mapped", value(rng)]))
    elif choice == 5:
        key = rng.choice(
            [
                "copy_engines",
                "memory_bytes",
                "timer_hz",
                "kernel_timestamp_valid_bits",
                "timestamp_valid_bits",
                "subdevices",
                "trace_buffer_bytes",
            ]
        )
        zehal.sim_device(**{key: value(rng)})
    elif choice == 6:
        zehal.Dma(device, value(rng), value(rng))
    else:
        device_of, group_of = sampled
        with zehal.MetricStreamer(
            device_of, group_of, period_ns=value(rng), notify_every_n_reports=value(rng)
        ) as streamer:
            streamer.read(rng.choice([None, value(rng)]))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    os.environ["ZEHAL_BACKEND"] = "sim"
    device = zehal.sim_device(subdevices=2, async_records_per_s=0)
    group = next(g for g in device.metric_groups() if g.sampling_types & zehal.SAMPLING_TYPE_TRACER_BASED)
    zehal.activate_metric_groups(device, [group])
    tracer = zehal.MetricTracer(device, [group])
    decoder = zehal.MetricDecoder(tracer)
    # A device of its own for streamers: activation there leaves the tracer's groups alone.
    sampled_device = zehal.sim_device()
    sampled_group = next(g for g in sampled_device.metric_groups() if g.name == "EngineUtilization")
    zehal.activate_metric_groups(sampled_device, [sampled_group])
    host = zehal.Area.host()
    buf = host.mmap(4096)
    dma = zehal.Dma(device)
    deadline = time.monotonic() + args.seconds
    calls = 0
    while time.monotonic() < deadline:
        step = rng.choice([fuzz_decoder, fuzz_layout, fuzz_parsers])
        try:
            if step is fuzz_decoder:
                step(rng, decoder)
            elif step is fuzz_layout:
                step(rng, buf)
            else:
                step(rng, device, host, dma, (sampled_device, sampled_group))
        except EXPECTED:
            pass
        except Exception as e:  # an error the API does not document
            print(f"seed {seed}, call {calls}: {type(e).__name__}: {e}", file=sys.stderr)
            return 1
        calls += 1
    dma.close()
    tracer.close()
    print(f"fuzz: {calls} calls in {args.seconds:.0f} s, seed {seed}, no crash")
    return 0


if __name__ == "__main__":
    sys.exit(main())
