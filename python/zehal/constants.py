"""zehal's constants as enums: ``IntFlag`` for bit sets, ``IntEnum`` for kinds. Every member
is an ``int`` equal to the native value, so the flat names (``zehal.GROUP_TYPE_EXPORT_DMA_BUF``,
which ``zehal`` binds to these members) work wherever an int does."""

from __future__ import annotations

import enum

from . import _zehal as _n


class SamplingType(enum.IntFlag):
    """Metric group sampling types (contract §4)."""

    EVENT_BASED = _n.SAMPLING_TYPE_EVENT_BASED
    TIME_BASED = _n.SAMPLING_TYPE_TIME_BASED
    TRACER_BASED = _n.SAMPLING_TYPE_TRACER_BASED


class GroupType(enum.IntFlag):
    """Metric group type flags (contract §4)."""

    EXPORT_DMA_BUF = _n.GROUP_TYPE_EXPORT_DMA_BUF
    USER_CREATED = _n.GROUP_TYPE_USER_CREATED
    OTHER = _n.GROUP_TYPE_OTHER
    MARKER = _n.GROUP_TYPE_MARKER


class MetricType(enum.IntEnum):
    """Metric types, the experimental ones with the values of headers >= 1.11.5."""

    DURATION = _n.METRIC_TYPE_DURATION
    EVENT = _n.METRIC_TYPE_EVENT
    EVENT_WITH_RANGE = _n.METRIC_TYPE_EVENT_WITH_RANGE
    THROUGHPUT = _n.METRIC_TYPE_THROUGHPUT
    TIMESTAMP = _n.METRIC_TYPE_TIMESTAMP
    FLAG = _n.METRIC_TYPE_FLAG
    RATIO = _n.METRIC_TYPE_RATIO
    RAW = _n.METRIC_TYPE_RAW
    EVENT_EXP_TIMESTAMP = _n.METRIC_TYPE_EVENT_EXP_TIMESTAMP
    EVENT_EXP_START = _n.METRIC_TYPE_EVENT_EXP_START
    EVENT_EXP_END = _n.METRIC_TYPE_EVENT_EXP_END
    EVENT_EXP_MONOTONIC_WRAPS_VALUE = _n.METRIC_TYPE_EVENT_EXP_MONOTONIC_WRAPS_VALUE
    EXP_EXPORT_DMA_BUF = _n.METRIC_TYPE_EXP_EXPORT_DMA_BUF
    IP_EXP = _n.METRIC_TYPE_IP_EXP


class ValueType(enum.IntEnum):
    """Result types of metric values."""

    UINT32 = _n.VALUE_TYPE_UINT32
    UINT64 = _n.VALUE_TYPE_UINT64
    FP32 = _n.VALUE_TYPE_FP32
    FP64 = _n.VALUE_TYPE_FP64
    BOOL8 = _n.VALUE_TYPE_BOOL8


class RecordKind(enum.IntEnum):
    """Kinds of raw tracer records, version 1 (contract §5.3)."""

    SAMPLE = _n.RECORD_SAMPLE
    ENABLE = _n.RECORD_ENABLE
    DISABLE = _n.RECORD_DISABLE
    DROPPED = _n.RECORD_DROPPED
    CLOCK_SYNC = _n.RECORD_CLOCK_SYNC
    EXPORT_WRITE = _n.RECORD_EXPORT_WRITE


# The flat names, bound to the members above (each is still an int).
FLAT_NAMES: dict[str, enum.Enum] = {
    **{f"SAMPLING_TYPE_{m.name}": m for m in SamplingType},
    **{f"GROUP_TYPE_{m.name}": m for m in GroupType},
    **{f"METRIC_TYPE_{m.name}": m for m in MetricType},
    **{f"VALUE_TYPE_{m.name}": m for m in ValueType},
    **{f"RECORD_{m.name}": m for m in RecordKind},
}

__all__ = ["SamplingType", "GroupType", "MetricType", "ValueType", "RecordKind"]
