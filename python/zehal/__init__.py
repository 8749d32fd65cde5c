"""zehal: one portable, fast layer for GPU memory, asynchronous copies, device
timestamps and hardware-event tracing.

Devices
    :func:`backends`, :func:`devices`, :func:`default_device`, :func:`sim_device`,
    :class:`Device` (``name``, ``backend``, ``properties``, ``global_timestamps()``,
    ``metric_groups()``, ``lose()``).
Memory and copies (AML)
    :class:`Area` (host, device and shared memory), :class:`Buffer` (buffer protocol,
    DLPack, ``__cuda_array_interface__``), :class:`Layout`, :class:`Dma`,
    :class:`Request`.
Events and timestamps
    :class:`EventPool` (``timestamps=None | 'kernel' | 'mapped'``), :class:`Event`
    (``kernel_timestamps()`` and ``synchronized_timestamps()`` as NumPy structured
    arrays).
Metrics
    :class:`MetricGroup`, :class:`Metric`, :func:`activate_metric_groups`,
    :class:`MetricTracer`, :class:`MetricDecoder`, :class:`MetricStreamer` (sampled
    counters as NumPy structured arrays); :mod:`zehal.timeline` for Chrome trace export.
Errors
    :class:`Error` (``code``, ``result_name``, ``aml_errno``) and its subclasses
    :class:`OutOfMemoryError` (a ``MemoryError``), :class:`InvalidArgumentError` (a
    ``ValueError``), :class:`UnsupportedError` (a ``NotImplementedError``),
    :class:`NotReadyError`, :class:`ObjectInUseError`, :class:`DeviceLostError`,
    :class:`ModuleBuildError`.
Packaging
    :func:`get_include`, :func:`get_cmake_dir` (also ``python -m zehal --includes``
    and ``--cmakedir``) for C and C++ tools built against the installed library.
"""

from __future__ import annotations

from importlib import metadata as _metadata
from pathlib import Path as _Path
from typing import Any

from . import _descriptors
from ._zehal import (
    GROUP_TYPE_EXPORT_DMA_BUF,
    GROUP_TYPE_MARKER,
    GROUP_TYPE_OTHER,
    GROUP_TYPE_USER_CREATED,
    METRIC_ENTRY_DTYPE,
    METRIC_TYPE_DURATION,
    METRIC_TYPE_EVENT,
    METRIC_TYPE_EVENT_EXP_END,
    METRIC_TYPE_EVENT_EXP_MONOTONIC_WRAPS_VALUE,
    METRIC_TYPE_EVENT_EXP_START,
    METRIC_TYPE_EVENT_EXP_TIMESTAMP,
    METRIC_TYPE_EVENT_WITH_RANGE,
    METRIC_TYPE_EXP_EXPORT_DMA_BUF,
    METRIC_TYPE_FLAG,
    METRIC_TYPE_IP_EXP,
    METRIC_TYPE_RATIO,
    METRIC_TYPE_RAW,
    METRIC_TYPE_THROUGHPUT,
    METRIC_TYPE_TIMESTAMP,
    RECORD_CLOCK_SYNC,
    RECORD_DISABLE,
    RECORD_DROPPED,
    RECORD_ENABLE,
    RECORD_EXPORT_WRITE,
    RECORD_SAMPLE,
    RECORD_SIZE,
    ROOT_DEVICE,
    SAMPLING_TYPE_EVENT_BASED,
    SAMPLING_TYPE_TIME_BASED,
    SAMPLING_TYPE_TRACER_BASED,
    TIMESTAMP_DTYPE,
    TRACE_RECORD_DTYPE,
    VALUE_TYPE_BOOL8,
    VALUE_TYPE_FP32,
    VALUE_TYPE_FP64,
    VALUE_TYPE_UINT32,
    VALUE_TYPE_UINT64,
    Area,
    BackendInfo,
    Buffer,
    Device,
    DeviceLostError,
    DeviceProperties,
    Dma,
    Error,
    Event,
    EventPool,
    InvalidArgumentError,
    Kernel,
    Layout,
    Metric,
    MetricDecoder,
    MetricGroup,
    MetricStreamer,
    MetricTracer,
    Module,
    ModuleBuildError,
    NotReadyError,
    ObjectInUseError,
    OutOfMemoryError,
    RankStream,
    Request,
    UnsupportedError,
    activate_metric_groups,
    aml_errno_from_ze_result,
    backends,
    default_device,
    devices,
    result_name,
    sim_device,
)
from .constants import FLAT_NAMES as _FLAT_NAMES
from .constants import GroupType, MetricType, RecordKind, SamplingType, ValueType

_descriptors.install(Area)
globals().update(_FLAT_NAMES)  # the flat constant names as enum members (still ints)

try:
    __version__: str = _metadata.version("zehal")
except _metadata.PackageNotFoundError:  # imported from a source tree, not installed
    __version__ = "0.0.0+unknown"

_HERE = _Path(__file__).resolve().parent


def get_include() -> str:
    """The directory holding zehal's headers: the C API (``aml.h``, ``aml/...``,
    ``zehal/...``) at its root and the C++ headers under ``zehal/``."""
    return str(_HERE / "include")


def get_cmake_dir() -> str:
    """The directory holding ``zehalConfig.cmake``: pass it as ``zehal_DIR`` or in
    ``CMAKE_PREFIX_PATH`` so that ``find_package(zehal)`` gives ``zehal::zehal``."""
    return str(_HERE / "lib" / "cmake" / "zehal")


def get_library_dir() -> str:
    """The directory holding the ``libzehal`` shared library."""
    return str(_HERE / "lib")


def ze_driver_path() -> str:
    """The absolute path of ``libze_zehal.so``, zehal as a Level Zero driver: a Level
    Zero program run with ``ZE_ENABLE_ALT_DRIVERS`` set to it sees zehal's sim and CUDA
    devices through the Level Zero loader (docs/ze_driver.md). ``UnsupportedError`` when
    this build has no driver (Level Zero's headers were missing when it was built)."""
    path = _HERE / "lib" / "libze_zehal.so"
    if not path.is_file():
        raise UnsupportedError(
            0x78000003,
            "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE",
            5,  # AML_ENOTSUP
            f"this zehal build has no Level Zero driver ({path} is missing: "
            "Level Zero's headers were not found when it was built)",
        )
    return str(path)


__all__ = [
    "GroupType",
    "MetricType",
    "RecordKind",
    "SamplingType",
    "ValueType",
    "Area",
    "BackendInfo",
    "Buffer",
    "Device",
    "DeviceLostError",
    "DeviceProperties",
    "Dma",
    "Error",
    "Event",
    "EventPool",
    "GROUP_TYPE_EXPORT_DMA_BUF",
    "GROUP_TYPE_MARKER",
    "GROUP_TYPE_OTHER",
    "GROUP_TYPE_USER_CREATED",
    "InvalidArgumentError",
    "Kernel",
    "Layout",
    "METRIC_ENTRY_DTYPE",
    "METRIC_TYPE_DURATION",
    "METRIC_TYPE_EVENT",
    "METRIC_TYPE_EVENT_EXP_END",
    "METRIC_TYPE_EVENT_EXP_MONOTONIC_WRAPS_VALUE",
    "METRIC_TYPE_EVENT_EXP_START",
    "METRIC_TYPE_EVENT_EXP_TIMESTAMP",
    "METRIC_TYPE_EVENT_WITH_RANGE",
    "METRIC_TYPE_EXP_EXPORT_DMA_BUF",
    "METRIC_TYPE_FLAG",
    "METRIC_TYPE_IP_EXP",
    "METRIC_TYPE_RATIO",
    "METRIC_TYPE_RAW",
    "METRIC_TYPE_THROUGHPUT",
    "METRIC_TYPE_TIMESTAMP",
    "Metric",
    "MetricDecoder",
    "MetricGroup",
    "MetricStreamer",
    "MetricTracer",
    "Module",
    "ModuleBuildError",
    "NotReadyError",
    "ObjectInUseError",
    "OutOfMemoryError",
    "RECORD_CLOCK_SYNC",
    "RECORD_DISABLE",
    "RECORD_DROPPED",
    "RECORD_ENABLE",
    "RECORD_EXPORT_WRITE",
    "RECORD_SAMPLE",
    "RECORD_SIZE",
    "ROOT_DEVICE",
    "RankStream",
    "Request",
    "SAMPLING_TYPE_EVENT_BASED",
    "SAMPLING_TYPE_TIME_BASED",
    "SAMPLING_TYPE_TRACER_BASED",
    "TIMESTAMP_DTYPE",
    "TRACE_RECORD_DTYPE",
    "UnsupportedError",
    "VALUE_TYPE_BOOL8",
    "VALUE_TYPE_FP32",
    "VALUE_TYPE_FP64",
    "VALUE_TYPE_UINT32",
    "VALUE_TYPE_UINT64",
    "__version__",
    "activate_metric_groups",
    "aml_errno_from_ze_result",
    "backends",
    "default_device",
    "devices",
    "get_cmake_dir",
    "get_include",
    "get_library_dir",
    "result_name",
    "sim_device",
    "ze_driver_path",
]


def __getattr__(name: str) -> Any:
    """The sub-modules ``zehal.bench``, ``zehal.cli`` and ``zehal.timeline``, imported on
    first use."""
    if name in ("bench", "cli", "timeline"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
