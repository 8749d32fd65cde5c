"""zehal.Error and its subclasses: the exceptions every zehal call raises.

The native module raises these (it imports this module when it loads); ``zehal`` re-exports
them. Multiple inheritance from the built-in types lets callers catch ``MemoryError``,
``ValueError`` or ``NotImplementedError`` as Python code expects."""

from __future__ import annotations


class Error(Exception):
    """A zehal call failed.

    ``code`` is the ze_result_t value, ``result_name`` its Level Zero name
    ("ZE_RESULT_ERROR_INVALID_SIZE") and ``aml_errno`` the positive AML error code it
    translates to (contract §2.1).
    """

    def __init__(self, code: int, result_name: str, aml_errno: int, message: str | None = None) -> None:
        self.code = int(code)
        self.result_name = str(result_name)
        self.aml_errno = int(aml_errno)
        if message is None:
            message = f"{self.result_name} (0x{self.code:08x})"
        self.message = str(message)
        super().__init__(self.message)

    def __reduce__(self) -> tuple[type, tuple[int, str, int, str]]:
        return (type(self), (self.code, self.result_name, self.aml_errno, self.message))


class OutOfMemoryError(Error, MemoryError):
    """Out of host or device memory (ZE_RESULT_ERROR_OUT_OF_*_MEMORY)."""


class InvalidArgumentError(Error, ValueError):
    """An argument was rejected (ZE_RESULT_ERROR_INVALID_*, OVERLAPPING_REGIONS), or an
    object was used after close (ZE_RESULT_ERROR_INVALID_NULL_HANDLE)."""


class UnsupportedError(Error, NotImplementedError):
    """The backend or device cannot do this (ZE_RESULT_ERROR_UNSUPPORTED_*)."""


class NotReadyError(Error):
    """Not ready yet: an event not signalled, a wait that timed out (ZE_RESULT_NOT_READY)."""


class ObjectInUseError(Error):
    """The object is busy (ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE)."""


class DeviceLostError(Error):
    """The device was lost; every later call on it fails (ZE_RESULT_ERROR_DEVICE_LOST)."""


class ModuleBuildError(Error):
    """A module did not build (ZE_RESULT_ERROR_MODULE_BUILD_FAILURE) or link
    (ZE_RESULT_ERROR_MODULE_LINK_FAILURE); ``log`` is the translator's or compiler's build
    log, or the link log, which the message carries too."""

    log: str = ""


for _cls in (
    Error,
    OutOfMemoryError,
    InvalidArgumentError,
    UnsupportedError,
    NotReadyError,
    ObjectInUseError,
    DeviceLostError,
    ModuleBuildError,
):
    _cls.__module__ = "zehal"  # their public home (and where pickle finds them)
