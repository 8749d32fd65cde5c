"""A picture of a merged timeline: one row per track, grouped by rank, slices as bars and
instants as ticks, on rank 0's clock (``zehal trace --plot timeline.png``). Needs matplotlib.
"""

from __future__ import annotations

import json
import os

from .trace_formats import Process, load

__all__ = ["plot", "plot_file"]


def plot(processes: list[Process], png: str | os.PathLike, title: str = "zehal trace") -> None:
    """Draws the slice tracks of ``processes`` into the PNG file ``png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows: list[tuple[str, list[tuple[int, int]], list[int], int]] = []
    for k, p in enumerate(processes):
        for t in sorted(p.tracks, key=lambda t: t.name):
            slices = [(s.start, s.end) for s in p.slices.get(t.uuid, [])]
            instants = [e.ts for e in p.instants.get(t.uuid, [])]
            if slices or instants:
                rows.append((f"{p.track.name}: {t.name}", slices, instants, k))
    if not rows:
        raise ValueError("the trace has no slices or instants to draw")
    origin = min(min([s for s, _ in r[1]] + r[2]) for r in rows)
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(rows) + 1.2))
    colours = plt.get_cmap("tab10")
    for y, (_, slices, instants, rank) in enumerate(rows):
        bars = [((s - origin) / 1e3, max(e - s, 1) / 1e3) for s, e in slices]
        ax.broken_barh(bars, (y - 0.35, 0.7), color=colours(rank % 10))
        if instants:
            ax.vlines([(t - origin) / 1e3 for t in instants], y - 0.4, y + 0.4, color="black", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("µs on rank 0's clock")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def plot_file(trace: str | os.PathLike, png: str | os.PathLike, fmt: str | None = None) -> None:
    """Draws the merged Perfetto trace in file ``trace`` into ``png``."""
    path = os.fspath(trace)
    if fmt == "json" or path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            json.load(f)
        raise ValueError(f"{path}: plotting reads Perfetto traces (write one with --format perfetto)")
    with open(path, "rb") as f:
        processes = load(f.read())
    plot(processes, png, f"{os.path.basename(path)}: {len(processes)} ranks on rank 0's clock")
