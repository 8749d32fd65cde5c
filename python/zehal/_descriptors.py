"""Descriptors that give one name a meaning on the class and another on an instance.

Contract §8 names both the factory ``Area.device(...)`` and the attribute ``area.device``,
and the static ``Area.import_dma_buf(fd, size, device=None)`` / ``Area.pool(upstream, ...)``:
called through an instance, those act on that instance (its device, itself as the upstream)
instead of silently using the default device."""

from __future__ import annotations

import functools
from typing import Any, Callable


class ClassOrInstanceAttribute:
    """On the class: ``on_class``; on an instance: ``on_instance(instance)``."""

    def __init__(self, on_class: Any, on_instance: Callable[[Any], Any], doc: str) -> None:
        self._on_class = on_class
        self._on_instance = on_instance
        self.__doc__ = doc

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self._on_class
        return self._on_instance(obj)


class ClassOrInstanceMethod:
    """On the class: the static ``function``; on an instance: ``function`` with the keyword
    ``keyword`` defaulting to ``value_of(instance)``."""

    def __init__(self, function: Callable[..., Any], keyword: str, value_of: Callable[[Any], Any]) -> None:
        self._function = function
        self._keyword = keyword
        self._value_of = value_of
        self.__doc__ = function.__doc__

    def __get__(self, obj: Any, objtype: type | None = None) -> Callable[..., Any]:
        if obj is None:
            return self._function
        function, keyword, value = self._function, self._keyword, self._value_of(obj)

        @functools.wraps(function)
        def bound(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get(keyword) is None:
                kwargs[keyword] = value
            return function(*args, **kwargs)

        return bound


def install(area: type) -> None:
    """Puts the descriptors on the native ``Area`` class (once, at import)."""
    area.device = ClassOrInstanceAttribute(
        area._make_device,
        lambda a: a._device,
        "Area.device(...) makes a device area; area.device is the device an area maps from (host areas: the "
        "device of the backend providing the memory).",
    )
    area.import_dma_buf = ClassOrInstanceMethod(area._import_dma_buf, "device", lambda a: a._device)
    area.pool = ClassOrInstanceMethod(area._pool, "upstream", lambda a: a)
