"""The zehal command: info, bench, trace; python -m zehal; the bench module's helpers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import zehal
from conftest import default_device_traces
from zehal import bench, cli


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    exe = shutil.which("zehal")
    cmd = [exe, *args] if exe else [sys.executable, "-m", "zehal", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def test_console_script_installed():
    assert shutil.which("zehal") is not None


def test_info():
    out = run("info")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert f"zehal {zehal.__version__}" in text
    for b in zehal.backends():
        assert b.name in text
        if not b.available:
            assert b.reason in text
    assert "device sim:0" in text
    for key in ("timer", "copy engines", "kernel timestamp valid bits", "tracer"):
        assert key in text


def test_info_in_process(capsys):
    assert cli.main(["info"]) == 0
    text = capsys.readouterr().out
    assert "backends:" in text and "(default)" in text


def test_python_m_zehal_info():
    out = subprocess.run([sys.executable, "-m", "zehal", "info"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "backends:" in out.stdout


def test_usage_errors():
    assert run().returncode == 2
    assert run("no-such-command").returncode == 2
    assert run("bench", "--suite", "nope").returncode == 2
    out = run("trace", "--output", "x.json")
    assert out.returncode == 2 and "no command" in out.stderr


def test_bench_quick_json(tmp_path):
    path = tmp_path / "bench.json"
    out = run("bench", "--quick", "--json", str(path), "--device", "sim")
    assert out.returncode == 0, out.stderr
    for column in ("suite", "name", "value", "unit", "baseline", "ratio"):
        assert column in out.stdout
    report = json.loads(path.read_text())
    assert report["quick"] is True
    assert report["device"]["backend"] == "sim"
    rows = report["rows"]
    suites = {r["suite"] for r in rows}
    assert "python" in suites
    assert len(suites) >= 4
    for r in rows:
        assert set(r) >= {"suite", "name", "value", "unit", "baseline", "baseline_name", "ratio"}
        assert r["value"] > 0
        if r["baseline"]:
            assert r["ratio"] > 0
    names = {r["name"] for r in rows if r["suite"] == "python"}
    assert "64 B request: Dma.copy + wait" in names


def test_bench_json_to_stdout():
    out = run("bench", "--quick", "--json", "-", "--suite", "python", "--device", "sim")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert {r["suite"] for r in report["rows"]} == {"python"}


def test_bench_device_option_errors():
    out = run("bench", "--quick", "--device", "sim:99")
    assert out.returncode != 0 and "no index 99" in out.stderr
    missing = [b for b in zehal.backends() if not b.available]
    if missing:
        out = run("bench", "--quick", "--device", missing[0].name)
        assert out.returncode != 0 and "no device" in out.stderr


def test_python_round_trip_rows(sim):
    rows = bench.python_round_trip(sim, quick=True)
    assert rows and all(r["suite"] == "python" and r["unit"] == "us" and r["value"] > 0 for r in rows)
    assert all(r["baseline"] > 0 and r["ratio"] == pytest.approx(r["baseline"] / r["value"]) for r in rows)


def test_run_selected_suites_and_unknown(sim):
    rows = bench.run(sim, quick=True, suites=["ring"])
    assert rows and {r["suite"] for r in rows} == {"ring"}
    with pytest.raises(ValueError):
        bench.run(sim, quick=True, suites=["nope"])


def test_format_table():
    rows = [bench._row("python", "x", 2.0, "us", 1.0, "memmove"), bench._row("copy", "y", 0.5, "GB/s")]
    text = bench.format_table(rows)
    lines = text.splitlines()
    assert lines[0].split()[:4] == ["suite", "name", "value", "unit"]
    assert "0.50x" in text and "memmove" in text
    assert len(lines) == 4


def test_format_table_notes():
    rows = [
        bench._row("copy", "a", 1.0, "us", 2.0, "memcpy", note="known cause"),
        bench._row("copy", "b", 1.0, "us", 2.0, "memcpy", note="known cause"),
        bench._row("copy", "c", 1.0, "us", 2.0, "memcpy", note="another"),
        bench._row("copy", "d", 1.0, "us", 2.0, "memcpy"),
    ]
    lines = bench.format_table(rows).splitlines()
    assert lines[2].endswith("2.00x [1]") and lines[3].endswith("2.00x [1]") and lines[4].endswith("2.00x [2]")
    assert lines[5].endswith("2.00x")
    assert lines[6:] == ["[1] known cause", "[2] another"]


def test_parse_device():
    assert bench.parse_device(None) == zehal.default_device()
    assert bench.parse_device("sim") == zehal.devices("sim")[0]
    assert bench.parse_device("sim:0") == zehal.devices("sim")[0]
    with pytest.raises(SystemExit):
        bench.parse_device("sim:5")


def test_trace(tmp_path):
    out_path = tmp_path / "trace.json"
    script = tmp_path / "work.py"
    script.write_text(
        "import zehal\n"
        "d = zehal.default_device()\n"
        "a = zehal.Area.device(d)\n"
        "x, y = a.mmap(1 << 16), a.mmap(1 << 16)\n"
        "dma = zehal.Dma(d)\n"
        "for _ in range(10):\n"
        "    dma.copy(y, x).wait()\n"
    )
    out = run("trace", "--output", str(out_path), "--", sys.executable, str(script))
    assert out.returncode == 0, out.stderr
    if not default_device_traces():
        assert "has no tracer: the command runs untraced" in out.stderr
        return
    trace = json.loads(out_path.read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    assert isinstance(events, list) and events


def test_trace_passes_exit_status(tmp_path):
    out = run("trace", "--output", str(tmp_path / "t.json"), "--", sys.executable, "-c", "raise SystemExit(3)")
    assert out.returncode == 3


def test_main_entry_module():
    # `python -m zehal.bench` works like `zehal bench`.
    out = subprocess.run(
        [sys.executable, "-m", "zehal.bench", "--quick", "--suite", "ring"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert "ring" in out.stdout
    assert Path(bench.__file__).name == "bench.py"


def test_output_closed_early():
    # `zehal info | head -n 0`: the reader is gone before anything is written.
    exe = shutil.which("zehal")
    cmd = [exe, "info"] if exe else [sys.executable, "-m", "zehal", "info"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert b"Traceback" not in err and b"Exception ignored" not in err, err.decode()
