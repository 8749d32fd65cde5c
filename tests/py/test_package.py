"""The installed package: headers, CMake package config and library, and C / C++ tools
from examples/ built against it with find_package(zehal)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import zehal

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def zehal_cli(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "zehal", *args], capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.strip()


def test_version():
    assert isinstance(zehal.__version__, str)
    assert zehal.__version__.count(".") >= 2
    assert zehal_cli("--version") == zehal.__version__


def test_layout_of_the_installed_package():
    inc = Path(zehal.get_include())
    cmake = Path(zehal.get_cmake_dir())
    lib = Path(zehal.get_library_dir())
    assert inc.is_dir() and cmake.is_dir() and lib.is_dir()
    for header in (
        "aml.h",
        "aml/area/ze.h",
        "aml/dma/ze.h",
        "aml/layout/dense.h",
        "aml/utils/error.h",
        "zehal/ze_result.h",
        "zehal/device.h",
        "zehal/events.h",
        "zehal/metrics.h",
        "zehal/export.h",
        "zehal/version.h",
    ):
        assert (inc / header).is_file(), header
    # One include root holding the public headers only: no internal header is installed.
    installed = {p.relative_to(inc).as_posix() for p in inc.rglob("*") if p.is_file()}
    assert not any(h.startswith(("zehal/hal/", "zehal/common/", "zehal/aml/", "zehal/metrics/")) for h in installed)
    assert not any(h.startswith(("hal/", "common/", "metrics/")) for h in installed)
    assert (cmake / "zehalConfig.cmake").is_file()
    assert (cmake / "zehalConfigVersion.cmake").is_file()
    assert (cmake / "zehalTargets.cmake").is_file()
    assert list(lib.glob("libzehal.so*"))


def test_python_m_zehal_paths():
    includes = zehal_cli("--includes").split()
    assert includes == [f"-I{zehal.get_include()}"]
    assert all(flag.startswith("-I") and Path(flag[2:]).is_dir() for flag in includes)
    assert zehal_cli("--cmakedir") == zehal.get_cmake_dir()
    assert zehal_cli("--libdir") == zehal.get_library_dir()


def test_python_m_zehal_bad_usage():
    out = subprocess.run(
        [sys.executable, "-m", "zehal", "--includes", "extra"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2


def test_typing_files_ship():
    here = Path(zehal.__file__).parent
    assert (here / "py.typed").is_file()
    assert (here / "_zehal.pyi").is_file()


def test_includes_compile_a_c_file(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = tmp_path / "t.c"
    src.write_text(
        "#include <aml.h>\n#include <aml/area/ze.h>\n#include <aml/dma/ze.h>\n#include <aml/layout/dense.h>\n"
        "int main(void) { return aml_strerror(AML_EINVAL)[0] == 'I' ? 0 : 1; }\n"
    )
    flags = zehal_cli("--includes").split()
    subprocess.run(
        [
            cc,
            "-std=c11",
            "-Wall",
            "-Werror",
            *flags,
            str(src),
            "-o",
            str(tmp_path / "t"),
            f"-L{zehal.get_library_dir()}",
            f"-Wl,-rpath,{zehal.get_library_dir()}",
            "-lzehal",
        ],
        check=True,
        timeout=120,
    )
    assert subprocess.run([str(tmp_path / "t")], timeout=60).returncode == 0


@pytest.fixture(scope="module")
def examples_build(tmp_path_factory):
    if shutil.which("cmake") is None:
        pytest.skip("cmake not found")
    build = tmp_path_factory.mktemp("examples")
    configure = [
        "cmake",
        "-S",
        str(EXAMPLES),
        "-B",
        str(build),
        f"-DCMAKE_PREFIX_PATH={zehal.get_cmake_dir()}",
        "-DCMAKE_BUILD_TYPE=Release",
    ]
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    subprocess.run(configure, check=True, timeout=300, capture_output=True, text=True)
    subprocess.run(["cmake", "--build", str(build), "-j2"], check=True, timeout=600, capture_output=True, text=True)
    return build


def run_tool(path: Path) -> str:
    env = dict(os.environ)
    env["ZEHAL_BACKEND"] = "sim"
    out = subprocess.run([str(path)], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_c_tool_built_with_find_package(examples_build):
    out = run_tool(examples_build / "aml_roundtrip")
    assert "round trip: 1048576 bytes ok" in out
    assert "fire-and-forget: 128 copies ok" in out
    assert out.rstrip().endswith("aml_roundtrip: ok")


def test_cpp_tool_built_with_find_package(examples_build):
    out = run_tool(examples_build / "device_timestamps")
    assert "device:" in out and "(sim)" in out
    assert "packet 0:" in out
    assert "within the host reads" in out
    assert out.rstrip().endswith("device_timestamps: ok")


def test_cpp_tracer_tool_built_with_find_package(examples_build):
    out = run_tool(examples_build / "trace_copies")
    assert "backend sim: " in out and "backend level_zero: " in out and "backend cuda: " in out
    assert "0 records dropped" in out
    assert "metric CommandEnd: " in out
    assert out.rstrip().endswith("trace_copies: ok")


def public_names(obj) -> set[str]:
    return {n for n in dir(obj) if not n.startswith("_")}


def test_package_reexports_the_native_module():
    native = public_names(zehal._zehal) - {"benchmarks"}
    assert native <= set(zehal.__all__)
    for name in zehal.__all__:
        assert hasattr(zehal, name), name
    for name in ("bench", "cli", "timeline"):
        assert getattr(zehal, name).__name__ == f"zehal.{name}"
    with pytest.raises(AttributeError):
        zehal.no_such_name  # noqa: B018


def test_stubs_match_the_native_module():
    import ast

    tree = ast.parse((Path(zehal.__file__).parent / "_zehal.pyi").read_text())

    def members(body) -> dict[str, ast.AST]:
        out = {}
        for node in body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                out[node.name] = node
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                out[node.target.id] = node
        return out

    top = members(tree.body)
    native = zehal._zehal
    # Every public name of the module has a stub, and every stub names something real.
    assert public_names(native) <= set(top)
    for name, node in top.items():
        if name.startswith("_") and name not in ("_raise_result", "_raise_aml"):
            continue
        assert hasattr(native, name), f"stub for missing {name}"
        if isinstance(node, ast.ClassDef):
            cls = getattr(native, name)
            stubbed = set(members(node.body))
            runtime = public_names(cls) - public_names(BaseException) - {"message"}
            assert runtime <= stubbed, f"{name}: no stub for {sorted(runtime - stubbed)}"
            # Exceptions carry their attributes on instances.
            probe = cls(1, "ZE_RESULT_NOT_READY", 6) if issubclass(cls, BaseException) else cls
            for member in stubbed:
                if member in ("__buffer__", "__release_buffer__"):
                    continue  # the buffer protocol: C slots before Python 3.12
                assert hasattr(probe, member), f"{name}.{member} is stubbed but missing"


def test_constants_are_enums_usable_as_ints():
    from zehal import _zehal

    assert isinstance(zehal.GROUP_TYPE_EXPORT_DMA_BUF, zehal.GroupType)
    assert isinstance(zehal.SAMPLING_TYPE_TRACER_BASED, zehal.SamplingType)
    assert isinstance(zehal.METRIC_TYPE_IP_EXP, zehal.MetricType)
    assert isinstance(zehal.RECORD_CLOCK_SYNC, zehal.RecordKind)
    assert isinstance(zehal.VALUE_TYPE_FP64, zehal.ValueType)
    for name in dir(_zehal):
        if name.startswith(("GROUP_TYPE_", "SAMPLING_TYPE_", "METRIC_TYPE_", "VALUE_TYPE_", "RECORD_")):
            if name == "RECORD_SIZE":
                continue
            assert getattr(zehal, name) == getattr(_zehal, name), name
    both = zehal.SamplingType.TRACER_BASED | zehal.SamplingType.TIME_BASED
    assert both & zehal.SAMPLING_TYPE_TRACER_BASED and int(both) == 6
