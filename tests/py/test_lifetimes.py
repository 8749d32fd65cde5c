"""Lifetimes (contract §11): each scenario that used to crash or hang runs in a child
interpreter, bounded by a timeout, and must exit cleanly (no signal) with the right bytes."""

import textwrap

import pytest
from conftest import run_python, sanitizer_report

SIM = {"ZEHAL_BACKEND": "sim"}


def clean_exit(code: str, timeout: float = 120, env: dict[str, str] | None = None) -> str:
    out = run_python(textwrap.dedent(code), env={**SIM, **(env or {})}, timeout=timeout)
    assert out.returncode == 0, f"exit {out.returncode}\nstdout:\n{out.stdout}\nstderr:\n{out.stderr}"
    assert sanitizer_report(out.stderr) is None, out.stderr
    return out.stdout


def test_a_signalled_event_does_not_make_a_request_done():
    out = clean_exit(
        """
        import numpy as np, zehal
        dev = zehal.sim_device(bandwidth_bytes_per_s=64 << 20)
        h = zehal.Area.host()
        a, b, src, dst = (h.mmap(8 << 20) for _ in range(4))
        np.frombuffer(src, dtype=np.uint8)[:] = 0x5A
        dma = zehal.Dma(dev)
        e = zehal.EventPool(dev).event(0)
        dma.copy(b, a)
        r = dma.copy(dst, src, signal=e)
        e.signal()                     # someone else signals the request's event early
        assert not r.done
        dst.close(); src.close()       # waits for the copy: it still reads src, writes dst
        assert r.done
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_a_reset_event_does_not_hang_close():
    out = clean_exit(
        """
        import zehal
        dev = zehal.sim_device()
        h = zehal.Area.host()
        src, dst = h.mmap(1 << 20), h.mmap(1 << 20)
        dma = zehal.Dma(dev)
        e = zehal.EventPool(dev).event(0)
        r = dma.copy(dst, src, signal=e)
        e.synchronize(); e.reset()
        dst.close(); src.close()
        r.wait()
        print("ok")
        """,
        timeout=60,
    )
    assert out.strip() == "ok"


def test_an_export_taken_while_close_waits_keeps_the_memory():
    out = clean_exit(
        """
        import threading, numpy as np, zehal
        dev = zehal.sim_device(bandwidth_bytes_per_s=32 << 20)
        h = zehal.Area.host()
        src, dst = h.mmap(8 << 20), h.mmap(8 << 20)
        np.frombuffer(src, dtype=np.uint8)[:] = 7
        dma = zehal.Dma(dev)
        r = dma.copy(dst, src)
        errors = []
        def close():
            try:
                dst.close()
            except BufferError as e:
                errors.append(e)
        t = threading.Thread(target=close)
        t.start()
        view = np.frombuffer(dst, dtype=np.uint8)   # taken while close() waits for the copy
        t.join()
        r.wait()
        assert errors and not dst.closed, "close() must refuse: an export was taken while it waited"
        assert int(view[-1]) == 7 and int(view.sum()) == 7 * (8 << 20)
        del view
        dst.close()
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_concurrent_dma_close_and_barrier():
    out = clean_exit(
        """
        import threading, zehal
        h = zehal.Area.host()
        a, b = h.mmap(1 << 16), h.mmap(1 << 16)
        dev = zehal.sim_device()
        for i in range(300):
            dma = zehal.Dma(dev)
            for _ in range(4):
                dma.copy(b, a, request=False)
            ts = [threading.Thread(target=dma.close), threading.Thread(target=dma.close),
                  threading.Thread(target=lambda: (dma.barrier() if not dma.closed else None))]
            for t in ts: t.start()
            for t in ts: t.join()
            assert dma.closed
        print("ok")
        """,
        timeout=180,
    )
    assert out.strip() == "ok"


# A busy engine (a 100 MiB copy at 200 MiB/s) with a 4 MiB copy into `victim` queued behind it.
BUSY_ENGINE = """
import threading, numpy as np, zehal
dev = zehal.sim_device(bandwidth_bytes_per_s=200 << 20)
h = zehal.Area.host()
big_src, big_dst = h.mmap(100 << 20), h.mmap(100 << 20)
src, victim = h.mmap(4 << 20), h.mmap(4 << 20)
np.frombuffer(src, dtype=np.uint8)[:] = 0x5A
dma = zehal.Dma(dev)
dma.copy(big_dst, big_src, request=False)
r = dma.copy(victim, src)
"""


def test_close_from_two_threads_waits_for_a_queued_copy():
    out = clean_exit(
        BUSY_ENGINE
        + """
done_when_closed = []
def close():
    victim.close()
    done_when_closed.append(r.done)
threads = [threading.Thread(target=close) for _ in range(2)]
for t in threads: t.start()
for t in threads: t.join()
assert done_when_closed == [True, True], done_when_closed
assert victim.closed
dma.close()
print("ok")
"""
    )
    assert out.strip() == "ok"


def test_a_copy_into_a_closing_buffer_is_refused():
    out = clean_exit(
        BUSY_ENGINE
        + """
closer = threading.Thread(target=victim.close)
closer.start()
refused = None
while refused is None:      # submits until the close() under way refuses
    try:
        dma.copy(victim, src, nbytes=4096, request=False)
    except zehal.InvalidArgumentError as e:
        refused = str(e)
closer.join()
assert r.done and victim.closed
assert "closed" in refused, refused
dma.close()
print("ok")
"""
    )
    assert out.strip() == "ok"


def test_lose_during_a_large_copy_then_close():
    out = clean_exit(
        """
        import zehal
        dev = zehal.sim_device(memory_bytes=2 << 30)
        h = zehal.Area.host()
        src, dst = h.mmap(256 << 20), h.mmap(256 << 20)
        dma = zehal.Dma(dev)
        reqs = [dma.copy(dst, src) for _ in range(4)]
        dev.lose()
        for r in reqs:
            try:
                r.wait()
            except zehal.DeviceLostError:
                pass
        dst.close(); src.close()   # never under the engine's memcpy
        print("ok")
        """,
        timeout=180,
    )
    assert out.strip() == "ok"


@pytest.mark.parametrize(
    "blocking",
    [
        "dma.copy(b, a).wait()",
        "dma.barrier()",
        "ev.synchronize(0.01) if False else ev.query()",
        "(ev.signal(), ev.synchronize(), ev.reset())",
        "tracer.read()",
        "decoder.decode(raw)",
    ],
)
def test_exit_with_a_daemon_thread_inside_zehal(blocking):
    out = clean_exit(
        f"""
        import threading, time, zehal
        dma = zehal.Dma(); h = zehal.Area.host(); a, b = h.mmap(4096), h.mmap(4096)
        ev = zehal.EventPool(zehal.default_device()).event(0)
        dev = zehal.default_device()
        g = next(g for g in dev.metric_groups() if g.sampling_types & zehal.SAMPLING_TYPE_TRACER_BASED)
        zehal.activate_metric_groups(dev, [g])
        tracer = zehal.MetricTracer(dev, [g])
        decoder = zehal.MetricDecoder(tracer)
        tracer.enable()
        dma.copy(b, a).wait()
        raw = b""
        while not raw:
            raw = tracer.read()
        decoder.decode(raw)
        def loop():
            while True:
                {blocking}
        for _ in range(2):
            threading.Thread(target=loop, daemon=True).start()
        time.sleep(0.3)
        print("ok")
        """,
        timeout=60,
    )
    assert out.strip() == "ok"


def test_an_export_cannot_shrink_under_its_importer(tmp_path):
    out = clean_exit(
        """
        import os, numpy as np, zehal
        dev = zehal.sim_device()
        groups = [g for g in dev.metric_groups() if g.type_flags & zehal.GROUP_TYPE_EXPORT_DMA_BUF]
        fd, size = groups[0].export_dma_buf()
        buf = zehal.Area.import_dma_buf(fd, size, dev)
        try:
            os.ftruncate(fd, 0)
            raise SystemExit("the export shrank")
        except PermissionError:
            pass
        src = zehal.Area.host().mmap(size)
        np.frombuffer(src, dtype=np.uint8)[:] = 3
        zehal.Dma(dev).copy(buf, src).wait()
        buf.close()
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_a_file_that_could_shrink_is_not_imported(sim, tmp_path):
    import os

    import zehal

    path = tmp_path / "f"
    path.write_bytes(b"\0" * 8192)
    fd = os.open(path, os.O_RDWR)
    try:
        with pytest.raises(zehal.InvalidArgumentError):
            zehal.Area.import_dma_buf(fd, 4096, sim)
    finally:
        os.close(fd)
