"""Operands of copies live until their engine sees the copy done, fire-and-forget ones too,
and are dropped only where the GIL is held, whichever thread sees the copy done. Scenarios
that could crash or hang run in a child interpreter with a timeout."""

import gc
import textwrap
import threading
import weakref

import numpy as np
import zehal
from conftest import run_python, sanitizer_report

SIM = {"ZEHAL_BACKEND": "sim"}


class Exporter(bytearray):
    """Host memory of the buffer protocol that a test can watch with a weak reference."""


def slow_engine():
    """An engine on a throttled sim device, with a 4 MiB copy to queue ahead of the others
    (~125 ms at 32 MiB/s): what is submitted behind it stays pending meanwhile."""
    sim = zehal.sim_device(bandwidth_bytes_per_s=32 << 20)
    dma = zehal.Dma(sim)
    big_src = zehal.Area.shared(sim).mmap(4 << 20)
    big_dst = zehal.Area.device(sim).mmap(4 << 20)
    return sim, dma, lambda: dma.copy(big_dst, big_src, request=False)


def clean_exit(code: str, timeout: float = 120) -> str:
    out = run_python(textwrap.dedent(code), env=SIM, timeout=timeout)
    assert out.returncode == 0, f"exit {out.returncode}\nstdout:\n{out.stdout}\nstderr:\n{out.stderr}"
    assert sanitizer_report(out.stderr) is None, out.stderr
    return out.stdout


def test_fire_and_forget_operands_live_until_the_copy_is_seen_done():
    sim, dma, queue_long_copy = slow_engine()
    dst = zehal.Area.shared(sim).mmap(4096)
    queue_long_copy()
    src = Exporter(b"\x5a" * 4096)
    watch = weakref.ref(src)
    array = np.full(4096, 0x3C, dtype=np.uint8)
    watch_array = weakref.ref(array)
    dma.copy(dst, src, request=False)  # no request kept, no reference left but the engine's
    dma.copy(Exporter(4096), array, request=False)
    del src, array
    gc.collect()
    assert watch() is not None and watch_array() is not None
    dma.barrier()
    assert watch() is None and watch_array() is None  # released by the barrier that saw them done
    assert bytes(memoryview(dst)) == b"\x5a" * 4096
    dma.close()


def test_a_dropped_request_leaves_its_operands_to_the_engine():
    sim, dma, queue_long_copy = slow_engine()
    queue_long_copy()
    src, dst = Exporter(b"\x11" * 64), Exporter(64)
    watch = [weakref.ref(src), weakref.ref(dst)]
    request = dma.copy(dst, src)
    del src, dst, request
    gc.collect()
    assert all(w() is not None for w in watch)
    assert dma.pending == 2
    while dma.pending:  # the poll that sees it done releases it
        pass
    assert all(w() is None for w in watch)
    dma.close()


def test_operands_are_released_when_another_thread_sees_the_copy_done():
    sim, dma, queue_long_copy = slow_engine()
    queue_long_copy()
    released_on = []
    src = Exporter(b"\x22" * 64)
    watch = weakref.ref(src, lambda _: released_on.append(threading.get_ident()))
    dma.copy(Exporter(64), src, request=False)
    del src
    other = threading.Thread(target=dma.barrier)  # waits without the GIL, sees the copy done
    other.start()
    other.join()
    assert watch() is None
    assert released_on == [other.ident]  # dropped there, once it held the GIL again
    dma.close()


def test_no_operand_is_dropped_without_the_gil():
    # Finalizers of operands record whether their thread holds the GIL while threads wait,
    # poll, barrier and close the engine (which see copies done without the GIL).
    out = clean_exit(
        """
        import ctypes, threading, zehal
        gil_held = []
        class Exporter(bytearray):
            def __del__(self):
                gil_held.append(ctypes.pythonapi.PyGILState_Check())
        sim = zehal.sim_device(bandwidth_bytes_per_s=256 << 20)
        dma = zehal.Dma(sim)
        def submit(n):
            for i in range(n):
                r = dma.copy(Exporter(4096), Exporter(b"x" * 4096), request=(i % 3 == 0))
                if i % 7 == 0:
                    dma.barrier()
                elif r is not None and i % 2 == 0:
                    r.wait()
                elif i % 5 == 0:
                    dma.pending
        threads = [threading.Thread(target=submit, args=(300,)) for _ in range(4)]
        for t in threads: t.start()
        for t in threads: t.join()
        closers = [threading.Thread(target=dma.close) for _ in range(3)]
        for t in closers: t.start()
        for t in closers: t.join()
        assert len(gil_held) == 2 * 4 * 300, len(gil_held)
        assert all(gil_held), gil_held.count(0)
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_several_threads_close_an_engine_whose_copies_hold_operands():
    sim, dma, queue_long_copy = slow_engine()
    queue_long_copy()
    watches = []
    for _ in range(8):
        src = Exporter(b"\x33" * 64)
        watches.append(weakref.ref(src))
        dma.copy(Exporter(64), src, request=False)
    del src
    # Each close() returns once every copy completed; the operands go on the thread that
    # unlinked them, which another closer need not wait for: once all returned, none is left.
    threads = [threading.Thread(target=dma.close) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert dma.closed
    assert all(w() is None for w in watches)


def test_buffer_close_waits_for_fire_and_forget_copies():
    sim, dma, queue_long_copy = slow_engine()
    queue_long_copy()
    src = zehal.Area.shared(sim).mmap(4096)
    memoryview(src)[:] = b"\x44" * 4096
    dst = Exporter(4096)
    dma.copy(dst, src, request=False)
    layout_src = zehal.Area.shared(sim).mmap(4096)
    memoryview(layout_src)[:] = b"\x55" * 4096
    dst2 = Exporter(4096)
    dma.copy(dst2, zehal.Layout.dense(layout_src, 1, 4096), request=False)
    closers = [threading.Thread(target=src.close) for _ in range(3)]
    for t in closers:
        t.start()
    layout_src.close()  # through a Layout over it
    for t in closers:
        t.join()
    assert src.closed and layout_src.closed
    assert bytes(dst) == b"\x44" * 4096  # the copy completed before the unmap
    assert bytes(dst2) == b"\x55" * 4096
    assert dma.pending == 0
    dma.close()


def test_exit_with_copies_pending():
    out = clean_exit(
        """
        import threading, zehal
        class Exporter(bytearray):
            pass
        sim = zehal.sim_device(bandwidth_bytes_per_s=8 << 20)
        dma = zehal.Dma(sim)
        big = zehal.Area.shared(sim).mmap(8 << 20)
        dma.copy(zehal.Area.device(sim).mmap(8 << 20), big, request=False)  # ~1 s
        for _ in range(16):
            dma.copy(Exporter(4096), Exporter(b"y" * 4096), request=False)
        r = dma.copy(Exporter(64), Exporter(64))
        threading.Thread(target=dma.barrier, daemon=True).start()  # still waiting at exit
        threading.Thread(target=r.wait, daemon=True).start()
        print("ok")
        """,
        timeout=60,
    )
    assert out.strip() == "ok"
