"""``zehal bench --compare BASE.json``: each figure of this run beside the same figure of
a saved run (``zehal bench --json BASE.json``) and the change between them, so that a
change to the code can be judged against the last run on the same machine."""

from __future__ import annotations

import json
from typing import Any

Row = dict[str, Any]

# Units whose figures are times: lower is better. Every other unit is a rate.
TIME_UNITS = frozenset({"s", "ms", "us", "ns"})


class CompareError(Exception):
    """The saved run cannot be read or is not a ``zehal bench --json`` report."""


def load_report(path: str) -> dict[str, Any]:
    """The report saved at ``path``, checked to hold rows as ``zehal bench --json`` writes
    them; raises CompareError saying what is wrong otherwise."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise CompareError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise CompareError(f"{path} is not a zehal bench report (not UTF-8 text)") from None
    try:
        report = json.loads(text)
    except json.JSONDecodeError as e:
        raise CompareError(f"{path} is not a zehal bench report (invalid JSON: {e})") from None
    rows = report.get("rows") if isinstance(report, dict) else None
    if not isinstance(rows, list):
        raise CompareError(f"{path} is not a zehal bench report (no list of rows; save one with --json)")
    for i, row in enumerate(rows):
        if not _is_row(row):
            raise CompareError(f"{path} is not a zehal bench report (row {i} lacks suite, name, unit or value)")
    return report


def _is_row(row: object) -> bool:
    if not isinstance(row, dict):
        return False
    text_fields = all(isinstance(row.get(k), str) for k in ("suite", "name", "unit"))
    value = row.get("value")
    return text_fields and isinstance(value, (int, float)) and not isinstance(value, bool)


def _key(row: Row) -> tuple[str, str, str, str]:
    """What identifies a figure across runs: the same row may sit beside several baselines."""
    return (row["suite"], row["name"], row["unit"], str(row.get("baseline_name") or ""))


def change(value: float, base: float, unit: str) -> tuple[float, str]:
    """``(value / base - 1, verdict)``: the relative change and whether it is "better",
    "worse" or "same" (equal figures), times being better when lower."""
    if base == 0:
        return 0.0, "-"
    rel = value / base - 1.0
    if rel == 0:
        return 0.0, "same"
    lower_is_better = unit in TIME_UNITS
    return rel, "better" if (rel < 0) == lower_is_better else "worse"


def compare(rows: list[Row], base_rows: list[Row]) -> list[Row]:
    """One entry per figure of ``rows`` (with ``base`` None where the saved run lacks it),
    then one per figure only the saved run has (``value`` None)."""
    base_by_key: dict[tuple[str, str, str, str], Row] = {}
    for b in base_rows:
        base_by_key.setdefault(_key(b), b)
    out: list[Row] = []
    seen = set()
    for r in rows:
        k = _key(r)
        seen.add(k)
        b = base_by_key.get(k)
        entry = {"suite": r["suite"], "name": r["name"], "unit": r["unit"], "baseline_name": k[3], "value": r["value"]}
        entry["base"] = b["value"] if b is not None else None
        entry["change"], entry["verdict"] = change(r["value"], b["value"], r["unit"]) if b is not None else (0.0, "new")
        out.append(entry)
    for k, b in base_by_key.items():
        if k not in seen:
            entry = {"suite": k[0], "name": k[1], "unit": k[2], "baseline_name": k[3], "value": None}
            entry.update(base=b["value"], change=0.0, verdict="not run")
            out.append(entry)
    return out


def _fmt(value: float | None) -> str:
    if value is None or value == 0:
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def format_comparison(entries: list[Row]) -> str:
    """The comparison as an aligned text table: suite, name (with its baseline), this run,
    the saved run, unit, change in percent and the verdict."""
    header = ("suite", "name", "now", "saved", "unit", "change", "")
    cells = [header]
    for e in entries:
        name = e["name"] + (f" [vs {e['baseline_name']}]" if e["baseline_name"] else "")
        moved = f"{e['change'] * 100:+.1f}%" if e["verdict"] in ("better", "worse") else "-"
        cells.append((e["suite"], name, _fmt(e["value"]), _fmt(e["base"]), e["unit"], moved, e["verdict"]))
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    numeric = {2, 3, 5}
    lines = []
    for k, c in enumerate(cells):
        parts = [
            v.rjust(w) if i in numeric and k else v.ljust(w) for i, (v, w) in enumerate(zip(c, widths, strict=True))
        ]
        lines.append("  ".join(parts).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def describe_difference(report: dict[str, Any], device: dict[str, Any], quick: bool) -> list[str]:
    """Warnings where the saved run was not measured as this one is (another device, or
    one run quick and the other not)."""
    notes = []
    saved = report.get("device")
    if isinstance(saved, dict):
        for field in ("backend", "name"):
            if field in saved and saved.get(field) != device.get(field):
                notes.append(
                    f"note: the saved run's device {field} was {saved.get(field)!r}, this run's {device.get(field)!r}"
                )
    if "quick" in report and bool(report["quick"]) != quick:
        saved_kind = "" if report["quick"] else "not "
        this_kind = "" if quick else " not"
        notes.append(f"note: the saved run was {saved_kind}a --quick run, this one is{this_kind}")
    return notes
