"""zehal's MPI library for traced programs without Python (``libzehal_mpi.so``).

An MPI program on zehal's C API or Level Zero driver aligns its ranks' clocks through this
library: it defines ``MPI_Init``, ``MPI_Init_thread`` and ``MPI_Finalize`` over MPI's
profiling interface and measures each rank's clock against rank 0's (docs/tracing.md).
``zehal trace`` preloads it (``LD_PRELOAD``) into a command that is not Python when the
command's executable links the same MPI library (``libmpi.so.N``) as it was built for; a
program started through a script, or linked otherwise, links it itself
(``-lzehal_mpi`` before MPI's libraries) or sets ``LD_PRELOAD``.
"""

from __future__ import annotations

import os
import shutil
import struct

__all__ = ["ENV_LIBRARY", "library", "needed", "preload"]

#: Environment variable naming the library to preload instead of the package's (empty: none).
ENV_LIBRARY = "ZEHAL_TRACE_MPI_LIBRARY"

_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NULL, _DT_NEEDED, _DT_STRTAB = 0, 1, 5


def library() -> str | None:
    """The library to preload: ``$ZEHAL_TRACE_MPI_LIBRARY`` when set (empty: none), else
    the package's; None when there is none (zehal was built without an MPI)."""
    path = os.environ.get(ENV_LIBRARY)
    if path is None:
        from . import get_library_dir

        path = os.path.join(get_library_dir(), "libzehal_mpi.so")
    return path if path and os.path.isfile(path) else None


def needed(path: str) -> list[str]:
    """The libraries (``DT_NEEDED`` sonames) that the 64-bit little-endian ELF file ``path``
    links; empty for any other file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return []
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    try:
        (phoff,) = struct.unpack_from("<Q", data, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
        loads, dynamic = [], None
        for k in range(phnum):
            kind, _, offset, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", data, phoff + k * phentsize)
            if kind == _PT_LOAD:
                loads.append((vaddr, offset, filesz))
            elif kind == _PT_DYNAMIC:
                dynamic = (offset, filesz)
        if dynamic is None:
            return []
        entries = [struct.unpack_from("<qQ", data, dynamic[0] + k) for k in range(0, dynamic[1], 16)]
        strtab = next((v for tag, v in entries if tag == _DT_STRTAB), None)
        base = next((off + strtab - va for va, off, size in loads if va <= (strtab or -1) < va + size), None)
        if base is None:
            return []
        names = []
        for tag, value in entries:
            if tag == _DT_NULL:
                break
            if tag == _DT_NEEDED:
                end = data.index(b"\0", base + value)
                names.append(data[base + value : end].decode())
        return names
    except (struct.error, ValueError, UnicodeDecodeError):
        return []


def preload(cmd: list[str], env: dict[str, str]) -> bool:
    """Adds the library to ``env``'s ``LD_PRELOAD`` when ``cmd``'s executable links the MPI
    library it was built for; whether it did."""
    lib = library()
    program = shutil.which(cmd[0], path=env.get("PATH")) if cmd else None
    if lib is None or program is None:
        return False
    mpi = [n for n in needed(lib) if n.startswith("libmpi")]
    if not mpi or not set(mpi) <= set(needed(program)):
        return False
    env["LD_PRELOAD"] = lib + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    return True
