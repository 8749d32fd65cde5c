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
    out = subprocess.run(
        [sys.executable, "-m", "zehal", *args], capture_output=True, text=True, timeout=60, check=True
    )
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
    for header in ("aml.h", "aml/area/ze.h", "aml/dma/ze.h", "aml/layout/dense.h", "aml/utils/error.h",
                   "zehal/ze_result.h", "zehal/device.h", "zehal/hal/device.hpp", "zehal/hal/registry.hpp",
                   "zehal/common/clock.hpp"):
        assert (inc / header).is_file(), header
    assert (cmake / "zehalConfig.cmake").is_file()
    assert (cmake / "zehalConfigVersion.cmake").is_file()
    assert (cmake / "zehalTargets.cmake").is_file()
    assert list(lib.glob("libzehal.so*"))


def test_python_m_zehal_paths():
    includes = zehal_cli("--includes").split()
    assert includes[0] == f"-I{zehal.get_include()}"
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
        [cc, "-std=c11", "-Wall", "-Werror", *flags, str(src), "-o", str(tmp_path / "t"),
         f"-L{zehal.get_library_dir()}", f"-Wl,-rpath,{zehal.get_library_dir()}", "-lzehal"],
        check=True, timeout=120,
    )
    assert subprocess.run([str(tmp_path / "t")], timeout=60).returncode == 0


@pytest.fixture(scope="module")
def examples_build(tmp_path_factory):
    if shutil.which("cmake") is None:
        pytest.skip("cmake not found")
    build = tmp_path_factory.mktemp("examples")
    configure = [
        "cmake", "-S", str(EXAMPLES), "-B", str(build), f"-DCMAKE_PREFIX_PATH={zehal.get_cmake_dir()}",
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
