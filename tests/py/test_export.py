"""Metric export memory (contract §6): (fd, size), import as device memory, the 0xAB path
through tracer and decoder, another process mapping the fd, fd lifetime and leaks."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import numpy as np
import pytest
import zehal
from zehal import _zehal


def export_group(device):
    for g in device.metric_groups():
        if g.type_flags & zehal.MetricGroup.EXPORT_DMA_BUF:
            return g
    raise LookupError("no export group")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def write_bytes(device, dst, byte: int, nbytes: int) -> None:
    """Writes `byte` into `dst` by a device command (a copy from host memory)."""
    host = zehal.Area.host().mmap(nbytes)
    np.frombuffer(host, dtype=np.uint8)[:] = byte
    with zehal.Dma(device) as dma:
        dma.copy(dst, host, nbytes).wait()
    host.close()


def test_export_groups_give_an_fd_others_refuse(device):
    exported = 0
    for g in device.metric_groups():
        if g.type_flags & zehal.MetricGroup.EXPORT_DMA_BUF:
            fd, size = g.export_dma_buf()
            assert fd >= 0 and size > 0
            os.fstat(fd)
            assert g.export_dma_buf() == (fd, size)
            for m in g.metrics:
                if m.metric_type == zehal.Metric.EXP_EXPORT_DMA_BUF:
                    assert m.export_dma_buf() == (fd, size)
                else:
                    with pytest.raises(zehal.InvalidArgumentError):
                        m.export_dma_buf()
            exported += 1
        else:
            with pytest.raises(zehal.InvalidArgumentError) as info:
                g.export_dma_buf()
            assert info.value.result_name == "ZE_RESULT_ERROR_INVALID_ARGUMENT"
            for m in g.metrics:
                with pytest.raises(zehal.InvalidArgumentError):
                    m.export_dma_buf()
    assert (exported >= 1) == device.properties.dma_buf_export


def test_fill_0xab_decodes_to_an_entry_with_the_bytes(device):
    if not (device.properties.tracer and device.properties.dma_buf_export):
        pytest.skip(f"{device.backend} device without a tracer or export memory")
    g = export_group(device)
    fd, size = g.export_dma_buf()
    imported = zehal.Area.import_dma_buf(fd, size, device=device)
    assert imported.kind == "device"
    zehal.activate_metric_groups(device, [g])
    with zehal.MetricTracer(device, [g]) as t:
        dec = zehal.MetricDecoder(t)
        t.enable()
        write_bytes(device, imported, 0xAB, size)
        t.disable()
        chunks = []
        while True:
            try:
                chunks.append(t.read())
            except zehal.NotReadyError:
                break
    raw = b"".join(chunks)
    recs = np.frombuffer(raw, dtype=_zehal.TRACE_RECORD_DTYPE)
    assert (recs["kind"] == _zehal.RECORD_EXPORT_WRITE).any()
    entries, _ = dec.decode(raw)
    names = [m.name for m in dec.decodable_metrics]
    writes = entries[entries["metric_index"] == names.index("ExportWrite")]
    assert len(writes) >= 1
    assert any(int(v) & 0xFF == 0xAB for v in writes["value"])
    imported.close()


def test_a_child_process_mapping_the_fd_sees_device_writes(sim):
    g = export_group(sim)
    fd, size = g.export_dma_buf()
    imported = zehal.Area.import_dma_buf(fd, size, device=sim)
    write_bytes(sim, imported, 0x00, size)
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import mmap, sys\n"
            f"m = mmap.mmap({fd}, {size}, prot=mmap.PROT_READ)\n"
            "print('mapped', flush=True)\n"
            "sys.stdin.readline()\n"
            f"ok = m[0] == 0xC3 and m[{size} // 2] == 0xC3 and m[{size} - 1] == 0xC3\n"
            "sys.exit(0 if ok else 1)\n",
        ],
        pass_fds=(fd,),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "mapped"
        write_bytes(sim, imported, 0xC3, size)  # after the child mapped it
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.wait(timeout=60) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    imported.close()


def test_fd_lives_as_long_as_the_group_and_is_released_after(sim_backend):
    d = zehal.sim_device(async_records_per_s=0)
    g = export_group(d)
    fd, _ = g.export_dma_buf()
    kept = os.dup(fd)
    del d
    gc.collect()
    os.fstat(fd)  # the group keeps its device, and so the fd
    del g
    gc.collect()
    with pytest.raises(OSError):
        os.fstat(fd)
    os.fstat(kept)  # a dup outlives it
    os.close(kept)


def test_no_fd_leak_over_a_thousand_export_import_cycles(sim):
    export_group(sim).export_dma_buf()  # the group's own fd, made once
    before = open_fds()
    for _ in range(1000):
        fd, size = export_group(sim).export_dma_buf()
        buf = zehal.Area.import_dma_buf(fd, size, device=sim)
        buf.close()
        dup = os.dup(fd)
        buf = zehal.Area.import_dma_buf(dup, size, device=sim)
        os.close(dup)
        buf.close()
    gc.collect()
    assert open_fds() == before
