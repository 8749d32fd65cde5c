"""Host API calls of zehal's Python API, with their durations, while a trace runs.

:meth:`ApiCalls.install` puts a native timed method (:class:`zehal._zehal._TimedMethod`) in
place of every instance method of the Python API's classes (``Dma.copy``, ``Request.wait``,
``Area.mmap``, ``Event.synchronize``, …); :meth:`ApiCalls.uninstall` puts the original
methods back. A timed method records each call's start and end natively, on a ring of the
calling thread, while a trace stream records API calls
(``RankStream.start(..., api_calls=True)``, whose drain thread writes them into the trace);
it runs no Python code. Nothing is wrapped while no trace runs, so an untraced program pays
nothing.
"""

from __future__ import annotations

from typing import Any

from . import _zehal

__all__ = ["ApiCalls", "CLASSES"]

#: The classes of the Python API whose instance methods are timed.
CLASSES = ("Area", "Buffer", "Device", "Dma", "Event", "EventPool", "Layout", "Request")

# The kinds of class attributes that are instance methods of a pybind11 class.
_METHOD_KINDS = ("instancemethod", "method_descriptor", "function")


class ApiCalls:
    """Times the Python API's methods between :meth:`install` and :meth:`uninstall`."""

    def __init__(self) -> None:
        self._originals: list[tuple[type, str, Any]] = []

    def install(self) -> None:
        """Puts the timed methods in place; a second call does nothing."""
        if self._originals:
            return
        import zehal

        for class_name in CLASSES:
            cls = getattr(zehal, class_name)
            for attr, value in list(vars(cls).items()):
                if attr.startswith("_") or type(value).__name__ not in _METHOD_KINDS:
                    continue
                # A pybind11 method is an instancemethod around a builtin: time the builtin.
                method = getattr(value, "__func__", value)
                self._originals.append((cls, attr, value))
                setattr(cls, attr, _zehal._TimedMethod(f"{class_name}.{attr}", method))

    def uninstall(self) -> None:
        """Puts the original methods back."""
        for cls, attr, value in reversed(self._originals):
            setattr(cls, attr, value)
        self._originals.clear()

    @property
    def installed(self) -> bool:
        """Whether the methods are timed."""
        return bool(self._originals)
