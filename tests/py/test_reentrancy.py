"""Python code that runs inside a call (an argument's __index__, a sequence's __len__ or
__getitem__, another thread while the GIL is released) never leaves the call working on
native state it read before: every argument is converted first, and what the call uses is
checked afterwards. Scenarios that could crash run in a child interpreter with a timeout."""

from __future__ import annotations

import textwrap

import pytest
import zehal
from conftest import run_python, sanitizer_report

SIM = {"ZEHAL_BACKEND": "sim"}


def clean_exit(code: str, timeout: float = 120) -> str:
    out = run_python(textwrap.dedent(code), env=SIM, timeout=timeout)
    assert out.returncode == 0, f"exit {out.returncode}\nstdout:\n{out.stdout}\nstderr:\n{out.stderr}"
    assert sanitizer_report(out.stderr) is None, out.stderr
    return out.stdout


# An integer whose __index__ first runs `action` (defined in each child).
INDEX_THAT_ACTS = """
class Acting:
    def __init__(self, value, action):
        self.value, self.action = value, action
    def __index__(self):
        self.action()
        return self.value
"""


def test_index_that_closes_a_pooled_destination_writes_nothing_elsewhere():
    out = clean_exit(
        INDEX_THAT_ACTS
        + """
import numpy as np, zehal
dev = zehal.sim_device()
pool = zehal.Area.pool(zehal.Area.host())
src = zehal.Area.host().mmap(4096)
np.frombuffer(src, dtype=np.uint8)[:] = 0xAB
dma = zehal.Dma(dev)
for arg in ("nbytes", "dst_offset", "src_offset"):
    dst = pool.mmap(4096)
    innocent = []
    def reuse():
        dst.close()
        b = pool.mmap(4096)          # the pool hands the block just given back
        np.frombuffer(b, dtype=np.uint8)[:] = 0x11
        innocent.append(b)
    kwargs = {arg: Acting(4096 if arg == "nbytes" else 0, reuse)}
    try:
        dma.copy(dst, src, **kwargs).wait()
        raise SystemExit(f"{arg}: a copy into a closed buffer was accepted")
    except zehal.InvalidArgumentError as e:
        assert "closed" in str(e), e
    dma.barrier()
    assert (np.frombuffer(innocent[0], dtype=np.uint8) == 0x11).all(), arg
    innocent[0].close()
print("ok")
"""
    )
    assert out.strip() == "ok"


@pytest.mark.parametrize("arg", ["nbytes", "dst_offset", "src_offset"])
def test_index_that_closes_the_engine(arg):
    out = clean_exit(
        INDEX_THAT_ACTS
        + f"""
import zehal
dev = zehal.sim_device()
h = zehal.Area.host()
src, dst = h.mmap(4096), h.mmap(4096)
dma = zehal.Dma(dev)
kwargs = {{"{arg}": Acting(4096 if "{arg}" == "nbytes" else 0, dma.close)}}
for request in (True, False):
    try:
        dma.copy(dst, src, request=request, **kwargs)
        raise SystemExit("a copy on a closed engine was accepted")
    except zehal.InvalidArgumentError as e:
        assert "closed" in str(e), e
print("ok")
"""
    )
    assert out.strip() == "ok"


def test_index_that_closes_an_event_pool():
    out = clean_exit(
        INDEX_THAT_ACTS
        + """
import zehal
for method in ("event", "__getitem__"):
    pool = zehal.EventPool(zehal.sim_device(), count=2)
    try:
        getattr(pool, method)(Acting(1, pool.close))
        raise SystemExit(f"{method}: an event of a closed pool was given")
    except zehal.InvalidArgumentError as e:
        assert "closed" in str(e), e
print("ok")
"""
    )
    assert out.strip() == "ok"


@pytest.mark.parametrize("argument", ["max_version", "dl_device"])
@pytest.mark.parametrize("pooled", [False, True])
def test_dlpack_sequence_that_closes_the_buffer(argument, pooled):
    out = clean_exit(
        f"""
import zehal
area = zehal.Area.host()
if {pooled}:
    area = zehal.Area.pool(area)
b = area.mmap(64 << 20)
class Closing:
    def __init__(self, value):
        self.value = value
    def __len__(self):
        b.close()
        return 2
    def __getitem__(self, i):
        b.close()
        return self.value[i]
kwargs = {{"{argument}": Closing((1, 0) if "{argument}" == "max_version" else b.__dlpack_device__())}}
try:
    b.__dlpack__(**kwargs)
    raise SystemExit("a closed buffer was exported")
except zehal.InvalidArgumentError as e:
    assert "closed" in str(e), e
assert b.exports == 0
print("ok")
"""
    )
    assert out.strip() == "ok"


def test_layout_arguments_that_close_the_buffer():
    out = clean_exit(
        INDEX_THAT_ACTS
        + """
import zehal
b = zehal.Area.host().mmap(4096)
try:
    zehal.Layout.dense(b, Acting(8, b.close), 16)
    raise SystemExit("a layout over a closed buffer was made")
except zehal.InvalidArgumentError as e:
    assert "closed" in str(e), e
b = zehal.Area.host().mmap(4096)
layout = zehal.Layout.dense(b, 8, 16)
try:
    layout.deref(Acting(1, b.close))
    raise SystemExit("an element of a closed buffer was given")
except zehal.InvalidArgumentError as e:
    assert "closed" in str(e), e
print("ok")
"""
    )
    assert out.strip() == "ok"


def test_a_finalizer_that_acts_on_the_engine_while_it_reaps():
    """Dropping the operands of a finished fire-and-forget copy runs Python code (here a
    buffer's finalizer), which may submit on, or close, the engine that drops them."""
    out = clean_exit(
        """
import weakref, zehal
dev = zehal.sim_device()
h = zehal.Area.host()
src = h.mmap(4096)
def closing(dma):
    return dma.close
def submitting(dma):
    return lambda: dma.copy(h.mmap(16), h.mmap(16), request=False)
for make_action in (closing, submitting):
    dma = zehal.Dma(dev)
    for _ in range(8):
        dst = h.mmap(4096)
        weakref.finalize(dst, make_action(dma))
        try:
            dma.copy(dst, src, request=False)   # the engine holds dst's last reference
        except zehal.InvalidArgumentError as e:
            assert "closed" in str(e), e     # closed by an earlier finalizer
        del dst
    try:
        dma.barrier()
    except zehal.InvalidArgumentError as e:
        assert "closed" in str(e), e
    dma.close()
print("ok")
"""
    )
    assert out.strip() == "ok"


def test_every_method_of_an_uninitialized_object_raises_type_error():
    """Instances made by Cls.__new__(Cls) without __init__ hold no C++ object: every
    method, property and protocol answers TypeError."""
    out = clean_exit(
        """
import inspect, zehal
from zehal import _zehal
real = zehal.Area.host().mmap(64)
args = [(), (0,), ("name",), (real,), (real, real), (None, None, None)]
checked = 0
for name, cls in vars(_zehal).items():
    if not inspect.isclass(cls) or issubclass(cls, BaseException):
        continue
    try:
        obj = cls.__new__(cls)
    except TypeError:
        continue              # not constructible without __init__ (Request)
    for attr, member in vars(cls).items():
        if attr in ("__init__", "__new__", "__doc__", "__module__", "__dict__", "__weakref__") or \\
                isinstance(member, staticmethod) or not attr.isidentifier():
            continue
        if isinstance(member, property):
            try:
                getattr(obj, attr)
                raise SystemExit(f"{name}.{attr} answered on an uninitialized object")
            except TypeError:
                checked += 1
            continue
        if not callable(member) or inspect.isclass(member):
            continue
        for a in args:
            try:
                member(obj, *a)
                raise SystemExit(f"{name}.{attr}{a} answered on an uninitialized object")
            except TypeError:
                checked += 1
    if name == "Area":
        for use in (lambda a: a.device, lambda a: a.pool(), lambda a: a.import_dma_buf(0, 0)):
            try:
                use(obj)
                raise SystemExit("an uninitialized Area answered")
            except TypeError:
                checked += 1
    if name == "Buffer":
        # memoryview: pybind11 answers BufferError itself in some versions, before the
        # Buffer's own check runs; either is the clear error.
        for export in (memoryview, lambda o: o.__dlpack__()):
            try:
                export(obj)
                raise SystemExit("an uninitialized Buffer was exported")
            except (TypeError, BufferError):
                checked += 1
print("ok", checked)
"""
    )
    assert out.split()[0] == "ok" and int(out.split()[1]) > 100


def test_a_request_cannot_be_made_from_python():
    with pytest.raises(TypeError):
        zehal.Request.__new__(zehal.Request)
