"""The ``zehal`` command: ``info``, ``bench`` and ``trace``."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO


def _format_bytes(n: int) -> str:
    value = float(n)
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    k = 0
    while value >= 1024 and k < len(units) - 1:
        value /= 1024
        k += 1
    unit = units[k]
    return f"{int(value)} {unit}" if value.is_integer() else f"{value:.1f} {unit}"


def print_info(out: TextIO | None = None) -> None:
    """Prints the backends (with why one is unavailable) and every device with its
    properties."""
    import zehal

    out = sys.stdout if out is None else out
    print(f"zehal {zehal.__version__}", file=out)
    print("backends:", file=out)
    statuses = zehal.backends()
    width = max(len(b.name) for b in statuses)
    for b in statuses:
        state = "available" if b.available else f"unavailable: {b.reason}"
        print(f"  {b.name:<{width}}  {state}", file=out)
    try:
        driver = zehal.ze_driver_path()
    except zehal.UnsupportedError as e:
        driver = f"none ({e})"
    print(f"Level Zero driver: {driver}", file=out)
    try:
        default = zehal.default_device()
    except zehal.Error as e:
        default = None
        print(f"default device: none ({e})", file=out)
    for b in statuses:
        if not b.available:
            continue
        for i, d in enumerate(zehal.devices(b.name)):
            mark = "  (default)" if d == default else ""
            print(f"device {b.name}:{i}  {d.name}{mark}", file=out)
            p = d.properties
            # Every field of DeviceProperties.FIELDS, some with a unit or a yes/no.
            shown = {
                "memory_bytes": _format_bytes,
                "max_allocation_bytes": _format_bytes,
                "timer_hz": lambda hz: f"{hz} Hz",
                "limits": lambda why: why or "none",
                "uuid_bytes": None,
                "name": None,
            }
            rows = []
            for field in type(p).FIELDS:
                value = getattr(p, field)
                fmt = shown.get(field, _yes if isinstance(value, bool) else str)
                if fmt is not None:
                    rows.append((field.replace("_", " "), fmt(value)))
            for key, value in rows:
                print(f"    {key:<28}{value}", file=out)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _parser() -> argparse.ArgumentParser:
    from . import bench

    p = argparse.ArgumentParser(prog="zehal", description="zehal devices, benchmarks and tracing.")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="backends (and why one is unavailable), devices and their properties")
    b = sub.add_parser("bench", help="benchmarks on the default device, each beside a baseline")
    bench.add_arguments(b)
    t = sub.add_parser(
        "trace",
        help="run a command (or each rank of an MPI job) with tracing on and write one timeline",
        usage="zehal trace [--output trace.json] [--format F] [--plot PNG] -- command [args...]\n"
        "       zehal trace --merge DIR [--output run.pftrace] [--format F] [--plot PNG]",
    )
    t.add_argument("--output", "-o", default=None, help="where to write the trace (default trace.json)")
    t.add_argument(
        "--format",
        choices=("perfetto", "json", "otf2"),
        default=None,
        help="perfetto protobuf, Chrome JSON or OTF2 (default: from the output's name; perfetto unless *.json)",
    )
    t.add_argument("--merge", metavar="DIR", help="merge the rank files of a run (DIR: its .ranks folder)")
    t.add_argument("--plot", metavar="PNG", help="also draw the merged timeline into a PNG (needs matplotlib)")
    t.add_argument("cmd", nargs=argparse.REMAINDER, help="the command to run, after --")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``zehal`` command; returns the exit status."""
    try:
        status = _run(argv)
        sys.stdout.flush()  # a closed reader shows here, inside the handler below
        return status
    except BrokenPipeError:
        # The reader of our output went away (`zehal info | head`): stop quietly, as the
        # Python documentation recommends, with stdout pointed at /dev/null so that the
        # interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _run(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "info":
        print_info()
        return 0
    if args.command == "bench":
        from . import bench

        return bench.run_from_args(args)
    return _trace(args)


def _trace(args: argparse.Namespace) -> int:
    from . import timeline, trace_merge

    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if args.merge is not None:
        if cmd:
            print("zehal trace: --merge takes no command", file=sys.stderr)
            return 2
        output = args.output or "run.pftrace"
        try:
            merged = timeline.merge(args.merge, output, args.format)
        except trace_merge.TraceFileError as e:
            print(f"zehal trace: {e}", file=sys.stderr)
            return 1
        for r in merged.ranks:
            state = "" if r.complete else "  (stopped early: kept what it flushed)"
            print(
                f"rank {r.rank}: {r.events} events, offset {r.offset_ns} ns, drift {r.drift_ppb} ppb, "
                f"error bound {r.error_ns} ns{state}"
            )
        status = 0
    else:
        if not cmd:
            print("zehal trace: no command given (zehal trace --output trace.json -- cmd ...)", file=sys.stderr)
            return 2
        output = args.output or "trace.json"
        status = timeline.trace_command(cmd, output, args.format)
    if args.plot:
        from . import trace_plot

        try:
            trace_plot.plot_file(output, args.plot, args.format)
        except (ImportError, ValueError, OSError) as e:
            print(f"zehal trace: cannot plot: {e}", file=sys.stderr)
            return status or 1
    return int(status) if isinstance(status, int) else 0


if __name__ == "__main__":
    sys.exit(main())
