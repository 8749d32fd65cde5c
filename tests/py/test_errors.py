"""zehal.Error and its subclasses: hierarchy, attributes, and the translation of every
ze_result_t (contract §1) and AML code (contract §2.1)."""

from __future__ import annotations

import pickle

import pytest
import zehal

# (name, value, class, AML errno) for every code of contract §1 and the AML table.
CODES = [
    ("ZE_RESULT_NOT_READY", 0x1, zehal.NotReadyError, 6),
    ("ZE_RESULT_ERROR_DEVICE_LOST", 0x70000001, zehal.DeviceLostError, 1),
    ("ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY", 0x70000002, zehal.OutOfMemoryError, 2),
    ("ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", 0x70000003, zehal.OutOfMemoryError, 2),
    ("ZE_RESULT_ERROR_MODULE_BUILD_FAILURE", 0x70000004, zehal.ModuleBuildError, 1),
    ("ZE_RESULT_ERROR_MODULE_LINK_FAILURE", 0x70000005, zehal.ModuleBuildError, 1),
    ("ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS", 0x70010000, zehal.Error, 7),
    ("ZE_RESULT_ERROR_NOT_AVAILABLE", 0x70010001, zehal.Error, 6),
    ("ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE", 0x70020000, zehal.Error, 3),
    ("ZE_RESULT_WARNING_DROPPED_DATA", 0x70020001, zehal.Error, 1),
    ("ZE_RESULT_ERROR_UNINITIALIZED", 0x78000001, zehal.Error, 1),
    ("ZE_RESULT_ERROR_UNSUPPORTED_VERSION", 0x78000002, zehal.UnsupportedError, 5),
    ("ZE_RESULT_ERROR_UNSUPPORTED_FEATURE", 0x78000003, zehal.UnsupportedError, 5),
    ("ZE_RESULT_ERROR_INVALID_ARGUMENT", 0x78000004, zehal.InvalidArgumentError, 3),
    ("ZE_RESULT_ERROR_INVALID_NULL_HANDLE", 0x78000005, zehal.InvalidArgumentError, 3),
    ("ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE", 0x78000006, zehal.ObjectInUseError, 6),
    ("ZE_RESULT_ERROR_INVALID_NULL_POINTER", 0x78000007, zehal.InvalidArgumentError, 3),
    ("ZE_RESULT_ERROR_INVALID_SIZE", 0x78000008, zehal.InvalidArgumentError, 3),
    ("ZE_RESULT_ERROR_UNSUPPORTED_SIZE", 0x78000009, zehal.UnsupportedError, 5),
    ("ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT", 0x7800000A, zehal.UnsupportedError, 5),
    ("ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT", 0x7800000B, zehal.InvalidArgumentError, 3),
    ("ZE_RESULT_ERROR_INVALID_ENUMERATION", 0x7800000C, zehal.InvalidArgumentError, 3),
    ("ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION", 0x7800000D, zehal.UnsupportedError, 5),
    ("ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT", 0x7800000E, zehal.UnsupportedError, 5),
    ("ZE_RESULT_ERROR_INVALID_KERNEL_NAME", 0x78000011, zehal.InvalidArgumentError, 3),
    ("ZE_RESULT_ERROR_OVERLAPPING_REGIONS", 0x7800001A, zehal.InvalidArgumentError, 4),
    ("ZE_RESULT_ERROR_UNKNOWN", 0x7FFFFFFE, zehal.Error, 1),
]


def test_hierarchy():
    assert issubclass(zehal.Error, Exception)
    for cls in (
        zehal.OutOfMemoryError,
        zehal.InvalidArgumentError,
        zehal.UnsupportedError,
        zehal.NotReadyError,
        zehal.ObjectInUseError,
        zehal.DeviceLostError,
    ):
        assert issubclass(cls, zehal.Error)
        assert cls.__module__ == "zehal"
    assert issubclass(zehal.OutOfMemoryError, MemoryError)
    assert issubclass(zehal.InvalidArgumentError, ValueError)
    assert issubclass(zehal.UnsupportedError, NotImplementedError)
    assert not issubclass(zehal.NotReadyError, (MemoryError, ValueError, NotImplementedError))


def test_constructed_by_hand():
    e = zehal.Error(0x78000004, "ZE_RESULT_ERROR_INVALID_ARGUMENT", 3)
    assert (e.code, e.result_name, e.aml_errno) == (0x78000004, "ZE_RESULT_ERROR_INVALID_ARGUMENT", 3)
    assert "ZE_RESULT_ERROR_INVALID_ARGUMENT" in str(e)
    m = zehal.OutOfMemoryError(0x70000003, "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", 2, "mmap failed")
    assert str(m) == "mmap failed"
    assert isinstance(m, MemoryError)
    with pytest.raises(TypeError):
        zehal.Error()


def test_pickle_round_trip():
    e = zehal.InvalidArgumentError(0x78000008, "ZE_RESULT_ERROR_INVALID_SIZE", 3, "size 0")
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is zehal.InvalidArgumentError
    assert (back.code, back.result_name, back.aml_errno, str(back)) == (e.code, e.result_name, 3, "size 0")


@pytest.mark.parametrize("name,code,cls,aml", CODES, ids=[c[0] for c in CODES])
def test_every_result_raises_its_class(name, code, cls, aml):
    with pytest.raises(zehal.Error) as info:
        zehal._zehal._raise_result(code, "an operation")
    e = info.value
    assert type(e) is cls
    assert e.code == code
    assert e.result_name == name
    assert e.aml_errno == aml
    assert str(e).startswith("an operation: ")
    assert name in str(e)
    assert zehal.result_name(code) == name
    assert zehal.aml_errno_from_ze_result(code) == aml


def test_success_does_not_raise():
    assert zehal._zehal._raise_result(0) is None
    assert zehal.aml_errno_from_ze_result(0) == 0
    assert zehal.result_name(0) == "ZE_RESULT_SUCCESS"


def test_unknown_code():
    with pytest.raises(zehal.Error) as info:
        zehal._zehal._raise_result(0x12345)
    assert type(info.value) is zehal.Error
    assert info.value.result_name == "ZE_RESULT_UNKNOWN_CODE"
    assert info.value.aml_errno == 1


@pytest.mark.parametrize(
    "aml,cls",
    [
        (1, zehal.Error),
        (2, zehal.OutOfMemoryError),
        (3, zehal.InvalidArgumentError),
        (4, zehal.InvalidArgumentError),
        (5, zehal.UnsupportedError),
        (6, zehal.ObjectInUseError),
        (7, zehal.Error),
        (99, zehal.Error),
    ],
)
def test_aml_codes(aml, cls):
    with pytest.raises(zehal.Error) as info:
        zehal._zehal._raise_aml(-aml, "aml call")
    assert type(info.value) is cls
    assert info.value.aml_errno == aml
    # The representative result translates back to the same AML code.
    if aml < 8:
        assert zehal.aml_errno_from_ze_result(info.value.code) == aml


def test_aml_success_and_positive_values_do_not_raise():
    assert zehal._zehal._raise_aml(0) is None
    assert zehal._zehal._raise_aml(5) is None


def test_real_call_raises_with_attributes():
    with pytest.raises(zehal.InvalidArgumentError) as info:
        zehal.sim_device(timer_hz=0)
    e = info.value
    assert isinstance(e, ValueError)
    assert e.code == 0x78000004
    assert e.result_name == "ZE_RESULT_ERROR_INVALID_ARGUMENT"
    assert e.aml_errno == 3
