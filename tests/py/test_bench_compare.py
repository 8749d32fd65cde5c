"""``zehal bench --compare BASE.json``: a saved run beside a new one; unreadable saved runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from zehal import bench, bench_compare


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    exe = shutil.which("zehal")
    cmd = [exe, *args] if exe else [sys.executable, "-m", "zehal", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def test_compare_against_saved_run(tmp_path):
    base = tmp_path / "base.json"
    out = run("bench", "--quick", "--suite", "ring", "--device", "sim", "--json", str(base))
    assert out.returncode == 0, out.stderr
    saved = json.loads(base.read_text())
    out = run("bench", "--quick", "--suite", "ring", "--device", "sim", "--compare", str(base))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert str(base) in lines[1]
    assert lines[2].split()[:6] == ["suite", "name", "now", "saved", "unit", "change"]
    body = lines[4:]
    assert len(body) == len(saved["rows"])
    for row in saved["rows"]:
        line = next(x for x in body if row["name"] in x and row["unit"] in x.split())
        assert bench_compare._fmt(row["value"]) in line.split()
        assert line.split()[-1] in ("better", "worse", "same")
    assert "not run" not in out.stdout and "new" not in out.stdout.split()


def test_compare_also_saves_and_reports_rows_on_one_side_only(tmp_path):
    base = tmp_path / "base.json"
    base.write_text(
        json.dumps(
            {
                "version": "0",
                "quick": False,
                "device": {"backend": "other", "name": "elsewhere"},
                "rows": [{"suite": "gone", "name": "old figure", "unit": "us", "value": 3.0, "baseline_name": ""}],
            }
        )
    )
    new = tmp_path / "new.json"
    out = run("bench", "--quick", "--suite", "ring", "--device", "sim", "--compare", str(base), "--json", str(new))
    assert out.returncode == 0, out.stderr
    assert "old figure" in out.stdout and "not run" in out.stdout
    assert "new" in out.stdout.split()
    assert "device backend was 'other'" in out.stdout
    assert "--quick" in out.stdout
    assert {r["suite"] for r in json.loads(new.read_text())["rows"]} == {"ring"}


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "cannot read"),
        ("{not json", "invalid JSON"),
        (b"\xff\xfe\x00garbage", "not UTF-8"),
        ("[1, 2]", "no list of rows"),
        ('{"rows": {}}', "no list of rows"),
        ('{"rows": [{"suite": "a", "name": "b", "unit": "us"}]}', "row 0 lacks"),
        ('{"rows": [{"suite": "a", "name": "b", "unit": "us", "value": "1"}]}', "row 0 lacks"),
        ('{"rows": [{"suite": "a", "name": "b", "unit": "us", "value": true}]}', "row 0 lacks"),
    ],
)
def test_unreadable_saved_run(tmp_path, content, message):
    path = tmp_path / "base.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(bench_compare.CompareError, match=message):
        bench_compare.load_report(str(path))


def test_unreadable_saved_run_cli(tmp_path):
    garbage = tmp_path / "garbage.json"
    garbage.write_text("not a report")
    for path in (tmp_path / "missing.json", garbage, tmp_path):
        out = run("bench", "--quick", "--suite", "ring", "--compare", str(path))
        assert out.returncode == 2
        assert "--compare: " in out.stderr and str(path) in out.stderr
        assert "Traceback" not in out.stderr
        assert out.stdout == ""  # nothing measured


def test_change_direction():
    assert bench_compare.change(1.0, 2.0, "us") == (-0.5, "better")
    assert bench_compare.change(2.0, 1.0, "us") == (1.0, "worse")
    assert bench_compare.change(2.0, 1.0, "GB/s") == (1.0, "better")
    assert bench_compare.change(1.0, 2.0, "Mrec/s") == (-0.5, "worse")
    assert bench_compare.change(1.0, 1.0, "us") == (0.0, "same")
    assert bench_compare.change(1.0, 0.0, "us") == (0.0, "-")


def test_compare_keys_rows_by_baseline_too():
    rows = [bench._row("python", "x", 2.0, "us", 1.0, "memmove"), bench._row("python", "x", 2.0, "us", 3.0, "cupy")]
    base = [bench._row("python", "x", 4.0, "us", 1.0, "cupy")]
    entries = bench_compare.compare(rows, base)
    assert [(e["baseline_name"], e["verdict"]) for e in entries] == [("memmove", "new"), ("cupy", "better")]
    text = bench_compare.format_comparison(entries)
    assert "[vs cupy]" in text and "-50.0%" in text
