"""Host API calls of zehal's Python API, with their durations, while a trace runs.

:meth:`ApiCalls.install` puts a timing wrapper around every instance method of the Python
API's classes (``Dma.copy``, ``Request.wait``, ``Area.mmap``, ``Event.synchronize``, …);
:meth:`ApiCalls.uninstall` puts the original methods back. Nothing is wrapped while no trace
runs, so an untraced program pays nothing. Calls are kept in completion order and taken by
:meth:`ApiCalls.drain` as ``(name, start ns, end ns, thread id)``, times of
``CLOCK_MONOTONIC_RAW``.
"""

from __future__ import annotations

import collections
import functools
import threading
import time
from typing import Any, Callable

__all__ = ["ApiCalls", "CLASSES"]

#: The classes of the Python API whose instance methods are timed.
CLASSES = ("Area", "Buffer", "Device", "Dma", "Event", "EventPool", "Layout", "Request")

# The kinds of class attributes that are instance methods of a pybind11 class.
_METHOD_KINDS = ("instancemethod", "method_descriptor", "function")
_CLOCK = time.CLOCK_MONOTONIC_RAW


class ApiCalls:
    """Times the Python API's methods between :meth:`install` and :meth:`uninstall`."""

    def __init__(self) -> None:
        self._calls: collections.deque[tuple[str, int, int, int]] = collections.deque()
        self._originals: list[tuple[type, str, Any]] = []

    def _wrap(self, name: str, method: Callable) -> Callable:
        calls = self._calls
        clock, ident = time.clock_gettime_ns, threading.get_ident

        @functools.wraps(method)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = clock(_CLOCK)
            try:
                return method(*args, **kwargs)
            finally:
                calls.append((name, start, clock(_CLOCK), ident()))  # deque.append is atomic

        return timed

    def install(self) -> None:
        """Wraps the methods; a second call does nothing."""
        if self._originals:
            return
        import zehal

        for class_name in CLASSES:
            cls = getattr(zehal, class_name)
            for attr, value in list(vars(cls).items()):
                if attr.startswith("_") or type(value).__name__ not in _METHOD_KINDS:
                    continue
                self._originals.append((cls, attr, value))
                setattr(cls, attr, self._wrap(f"{class_name}.{attr}", value))

    def uninstall(self) -> None:
        """Puts the original methods back."""
        for cls, attr, value in reversed(self._originals):
            setattr(cls, attr, value)
        self._originals.clear()

    @property
    def installed(self) -> bool:
        """Whether the methods are wrapped."""
        return bool(self._originals)

    def drain(self) -> list[tuple[str, int, int, int]]:
        """The calls finished since the last drain, oldest first."""
        out = []
        calls = self._calls
        while calls:
            out.append(calls.popleft())
        return out
