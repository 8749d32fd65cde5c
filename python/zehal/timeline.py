"""Timelines of what a device did, as Chrome trace event JSON that Perfetto
(https://ui.perfetto.dev) and ``chrome://tracing`` open.

From decoded tracer entries (:meth:`zehal.MetricDecoder.decode`), every command becomes a
slice on the track of its engine and on the track of its queue; queue depth becomes a
counter per engine; writes into exported metric memory and other device events become
instant events.

- :func:`chrome_trace` builds the trace (a dict) from entries and their metrics;
  :func:`export` writes it to a file, from entries or from raw tracer data.
- :func:`record` traces a block of Python code on a device and writes the file at its end.
- :func:`trace_command` runs a Python script with tracing on (``zehal trace --output
  trace.json -- python script.py``); with a Perfetto or OTF2 output, or under ``mpiexec``,
  every rank streams its records and the ranks are merged into one timeline with their
  clocks aligned (docs/tracing.md).
- :func:`merge` merges the per-rank files of such a run afterwards.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import json
import os
import subprocess
import sys
import tempfile
import threading
import uuid
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from . import _zehal

__all__ = ["ENV_RAW", "ENV_RUN", "chrome_trace", "export", "record", "trace_command", "format_of", "merge", "Recorder"]

#: Environment variable naming where a traced process writes its data (``<value>.<pid>.npz``).
ENV_RAW = "ZEHAL_TRACE_RAW"
#: Environment variable naming the run of a traced native program (one without Python).
ENV_RUN = "ZEHAL_TRACE_RUN"

# ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: what a device without a tracer raises.
_UNSUPPORTED_FEATURE = 0x78000003

_COMMAND_NAMES = {0: "copy", 1: "fill", 2: "barrier", 3: "kernel"}
_ENGINE_GROUPS = {0: "compute", 1: "copy"}
_PID_ENGINES = 1
_PID_QUEUES = 2
_PID_EVENTS = 3


def _names(metrics: Sequence[Any]) -> list[str]:
    return [m if isinstance(m, str) else m.name for m in metrics]


def _us(ns: int) -> float:
    return ns / 1000.0


class _Tracks:
    """Thread ids of named tracks inside one process of the trace."""

    def __init__(self, pid: int, process: str, events: list[dict]) -> None:
        self.pid = pid
        self.ids: dict[Any, int] = {}
        self.events = events
        events.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": process}})
        events.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_sort_index", "args": {"sort_index": pid}})

    def tid(self, key: Any, label: str) -> int:
        tid = self.ids.get(key)
        if tid is None:
            tid = len(self.ids) + 1
            self.ids[key] = tid
            self.events.append({"ph": "M", "pid": self.pid, "tid": tid, "name": "thread_name", "args": {"name": label}})
            self.events.append(
                {"ph": "M", "pid": self.pid, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": tid}}
            )
        return tid


def _engine_label(ordinal: int | None, index: int | None, subdevice: int | None) -> str:
    group = _ENGINE_GROUPS.get(ordinal, f"group {ordinal}") if ordinal is not None else "engine"
    label = f"{group} engine {index if index is not None else '?'}"
    if subdevice is not None:
        label += f" (sub-device {subdevice})"
    return label


def chrome_trace(entries: np.ndarray, metrics: Sequence[Any], *, pid_offset: int = 0, label: str = "") -> dict:
    """The Chrome trace (a dict with ``traceEvents``) of decoded ``entries``.

    ``metrics`` names the entries' ``metric_index`` values: the Metric objects (or names)
    passed to, or decodable by, the decoder. Entries of a command are the records an
    engine wrote together, starting with ``CommandStart``; ``pid_offset`` and ``label``
    keep the processes of several traces apart when they are merged.
    """
    names = _names(metrics)
    events: list[dict] = []
    suffix = f" {label}" if label else ""
    engines = _Tracks(pid_offset + _PID_ENGINES, "engines" + suffix, events)
    queues = _Tracks(pid_offset + _PID_QUEUES, "queues" + suffix, events)
    others = _Tracks(pid_offset + _PID_EVENTS, "device events" + suffix, events)
    if len(entries) == 0:
        return {"traceEvents": events, "displayTimeUnit": "ns"}

    # One pass over plain Python lists: no per-entry NumPy scalars.
    values = entries["value"].tolist()
    stamps = entries["timestamp"].tolist()
    index = entries["metric_index"].tolist()
    on_sub = entries["on_subdevice"].tolist()
    sub_id = entries["subdevice_id"].tolist()

    command: dict[str, Any] | None = None

    def close_command() -> None:
        if command is None or "start" not in command:
            return
        start = command["start"]
        end = command.get("end", start)
        ordinal, engine = command.get("EngineOrdinal"), command.get("EngineIndex")
        sub = command.get("subdevice")
        kind = command.get("CommandType")
        name = _COMMAND_NAMES.get(kind, f"command {kind}") if kind is not None else "command"
        args = {
            k: command[k]
            for k in ("BytesMoved", "QueueId", "EngineOrdinal", "EngineIndex", "QueueDepth", "id")
            if k in command
        }
        slice_ = {"ph": "X", "name": name, "ts": _us(start), "dur": _us(max(end - start, 0)), "args": args}
        etid = engines.tid(("engine", ordinal, engine, sub), _engine_label(ordinal, engine, sub))
        events.append({**slice_, "pid": engines.pid, "tid": etid})
        queue = command.get("QueueId")
        qtid = queues.tid(("queue", queue), f"queue {queue}" if queue is not None else "queue ?")
        events.append({**slice_, "pid": queues.pid, "tid": qtid})
        if "QueueDepth" in command:
            events.append(
                {
                    "ph": "C",
                    "pid": engines.pid,
                    "tid": etid,
                    "name": "queue depth " + _engine_label(ordinal, engine, sub),
                    "ts": _us(end),
                    "args": {"depth": command["QueueDepth"]},
                }
            )

    for k in range(len(values)):
        i = index[k]
        name = names[i] if i < len(names) else f"metric {i}"
        sub = sub_id[k] if on_sub[k] else None
        if name == "CommandStart":
            close_command()
            command = {"start": stamps[k], "id": values[k], "subdevice": sub}
        elif command is not None and name == "CommandEnd":
            command["end"] = stamps[k]
        elif command is not None and name in (
            "BytesMoved",
            "EngineOrdinal",
            "EngineIndex",
            "QueueId",
            "CommandType",
            "QueueDepth",
        ):
            command[name] = values[k]
        else:
            where = f" (sub-device {sub})" if sub is not None else ""
            tid = others.tid(("metric", name, sub), name + where)
            args = {"value": values[k]}
            if name == "ExportWrite":
                args["first_word"] = f"0x{values[k] & 0xFFFFFFFF:08x}"
            events.append(
                {"ph": "i", "s": "t", "name": name, "ts": _us(stamps[k]), "pid": others.pid, "tid": tid, "args": args}
            )
    close_command()
    return {"traceEvents": events, "displayTimeUnit": "ns"}


def export(
    output: str | os.PathLike | None,
    entries: np.ndarray | None = None,
    metrics: Sequence[Any] | None = None,
    *,
    raw: bytes | None = None,
    decoder: Any = None,
) -> dict:
    """Writes the Chrome trace of tracer data to ``output`` (None: only returns it).

    Give ``entries`` and ``metrics`` (decoded already), or ``raw`` data and the
    ``decoder`` of its tracer (its decodable metrics name the entries). Returns the trace.
    """
    if entries is None:
        if raw is None or decoder is None:
            raise ValueError("export: give entries and metrics, or raw and decoder")
        metrics = decoder.decodable_metrics
        entries = decoder.decode(raw)[0] if len(raw) else np.empty(0, dtype=_zehal.METRIC_ENTRY_DTYPE)
    elif metrics is None:
        raise ValueError("export: entries need their metrics")
    trace = chrome_trace(entries, metrics)
    if output is not None:
        with open(output, "w", encoding="utf-8") as f:
            json.dump(trace, f)
    return trace


class Recorder:
    """Traces the command and export-memory groups of a device until :meth:`finish`.

    A reader thread empties the tracer while it runs, so long runs lose nothing. With a
    ``stream`` (a :class:`zehal._zehal.RankStream`), the stream's native thread drains the
    tracer into its file instead, without the interpreter's lock, and nothing is kept; with
    ``api_calls`` too, that thread also writes the host API calls of the process
    (:mod:`zehal.api_calls`).
    """

    def __init__(
        self,
        device: Any = None,
        groups: Iterable[Any] | None = None,
        poll_s: float = 0.02,
        stream: Any = None,
        api_calls: bool = False,
    ) -> None:
        import zehal  # the package, for the device helpers

        self.device = device if device is not None else zehal.default_device()
        if not self.device.properties.tracer:
            _zehal._raise_result(
                _UNSUPPORTED_FEATURE, f"Recorder: {self.device.name} ({self.device.backend}) has no tracer"
            )
        if groups is None:
            groups = [
                g
                for g in self.device.metric_groups()
                if g.tracer_based and (g.name == "EngineEvents" or g.type_flags & _zehal.GROUP_TYPE_EXPORT_DMA_BUF)
            ]
        self.groups = list(groups)
        _zehal.activate_metric_groups(self.device, self.groups)
        self.tracer = _zehal.MetricTracer(self.device, self.groups)
        self.decoder = _zehal.MetricDecoder(self.tracer)
        self._chunks: list[bytes] = []
        self._stop = threading.Event()
        self._poll_s = poll_s
        self._stream = stream
        self._finished = False
        self.tracer.enable()
        self._reader: threading.Thread | None = None
        if stream is not None:
            # A sim device's synchronized timestamps carry the test-only clock skew itself.
            try:
                stream.start(self.tracer, poll_s, on_rank_clock=self.device.backend == "sim", api_calls=api_calls)
            except BaseException:
                self.tracer.disable()
                self.tracer.close()
                self.decoder.close()
                raise
        else:
            self._reader = threading.Thread(target=self._drain, name="zehal-timeline", daemon=True)
            self._reader.start()

    def _drain(self) -> None:
        while not self._stop.wait(self._poll_s):
            data = self.tracer.read()
            if data:
                self._chunks.append(data)

    def finish(self) -> tuple[bytes, np.ndarray, list[str]]:
        """Stops tracing; returns (raw data, decoded entries, metric names)."""
        if self._finished:
            raise RuntimeError("Recorder.finish: already finished")
        self._finished = True
        self._stop.set()
        if self._reader is not None:
            self._reader.join()
        if self._stream is not None:
            self._stream.stop()  # disables the tracer and drains what is left into the file
        else:
            self.tracer.disable()
        while True:
            try:
                data = self.tracer.read()
            except _zehal.NotReadyError:
                break
            if data:
                self._chunks.append(data)
        self.tracer.close()
        raw = b"".join(self._chunks)
        entries = self.decoder.decode(raw)[0] if raw else np.empty(0, dtype=_zehal.METRIC_ENTRY_DTYPE)
        names = _names(self.decoder.decodable_metrics)
        self.decoder.close()
        return raw, entries, names


@contextlib.contextmanager
def record(output: str | os.PathLike | None, device: Any = None, groups: Iterable[Any] | None = None) -> Iterator[dict]:
    """Traces the ``with`` block on ``device`` (None: the default device) and writes its
    Chrome trace to ``output`` at the end. Yields a dict that holds, afterwards, the
    ``trace``, the ``raw`` data and the decoded ``entries``.

    With an output not named ``*.json`` (``run.pftrace``, ``run.otf2``), or inside an MPI
    program of several ranks, every rank streams its records and the block's end merges
    the ranks into ``output`` (collective: every rank runs the block); the dict then holds
    the ``path`` written and this rank's ``rank_file``."""
    from . import trace_session

    result: dict = {}
    comm = trace_session.world()
    if output is not None and (format_of(os.fspath(output)) != "json" or (comm is not None and comm.Get_size() > 1)):
        import zehal  # the package, for the device helpers

        session = trace_session.Session(os.fspath(output), format_of(os.fspath(output)), comm)
        session.record_device(device if device is not None else zehal.default_device())
        try:
            yield result
        finally:
            session.finish()
            result.update(path=session.output, rank_file=session.trace.path)
        return
    rec = Recorder(device, groups)
    try:
        yield result
    finally:
        raw, entries, names = rec.finish()
        result.update(raw=raw, entries=entries, metrics=names)
        result["trace"] = export(output, entries, names)


# --- tracing a whole process -------------------------------------------------------------

_process_recorders: list[Recorder] = []
_ACTIVE = "_ZEHAL_TRACE_ACTIVE_PID"


def _save(path: str, raw: bytes, entries: np.ndarray, names: list[str], device: str = "") -> None:
    np.savez(
        path,
        raw=np.frombuffer(raw, dtype=np.uint8),
        entries=entries,
        metrics=np.array(names, dtype=str),
        pid=np.array(os.getpid()),
        device=np.array(device, dtype=str),
    )


def _start_from_env() -> None:
    """Starts tracing this process on every device of the default backend that has a tracer
    when ``ZEHAL_TRACE_RAW`` is set; each device's data goes to
    ``$ZEHAL_TRACE_RAW.<pid>.<device index>.npz`` at exit, so that its engines get tracks of
    their own. Once per process."""
    from . import trace_session

    base = os.environ.get(ENV_RAW)
    streamed = os.environ.get(trace_session.ENV_OUTPUT)
    # The marker holds for this process only (children have other pids), and for every
    # copy of this module (``python -m zehal.timeline`` runs one as __main__).
    if not (base or streamed) or os.environ.get(_ACTIVE) == str(os.getpid()):
        return
    os.environ[_ACTIVE] = str(os.getpid())
    if streamed:
        trace_session.start()
        return
    import zehal  # the package, for the device helpers

    default = zehal.default_device()
    devices = [d for d in zehal.devices(default.backend) if d.properties.tracer]
    if not devices:
        print(
            f"zehal trace: {default.name} ({default.backend}) has no tracer: the command runs untraced",
            file=sys.stderr,
        )
        return
    for k, device in enumerate(devices):
        recorder = Recorder(device)
        _process_recorders.append(recorder)
        path = f"{base}.{os.getpid()}.{k}.npz"

        def finish(recorder: Recorder = recorder, path: str = path, name: str = device.name) -> None:
            raw, entries, names = recorder.finish()
            _save(path, raw, entries, names, name)

        atexit.register(finish)


def _is_python(program: str) -> bool:
    name = os.path.basename(program)
    return name.startswith("python") or os.path.realpath(program) == os.path.realpath(sys.executable)


def _merge(paths: list[str]) -> dict:
    trace: dict = {"traceEvents": [], "displayTimeUnit": "ns"}
    for k, path in enumerate(sorted(paths)):
        with np.load(path) as data:
            names = [str(n) for n in data["metrics"]]
            device = str(data["device"]) if "device" in data.files else ""
            label = f"pid {int(data['pid'])}" + (f" {device}" if device else "")
            part = chrome_trace(data["entries"], names, pid_offset=10 * k, label=label)
        trace["traceEvents"].extend(part["traceEvents"])
    return trace


def format_of(output: str) -> str:
    """The trace format an output name implies: json for ``*.json``, otf2 for ``*.otf2``,
    else perfetto."""
    if output.endswith(".json"):
        return "json"
    return "otf2" if output.endswith(".otf2") else "perfetto"


def _trace_streamed(cmd: list[str], output: str, fmt: str) -> int:
    """Runs ``cmd`` with each of its zehal processes streaming its rank's trace, merged into
    ``output`` at exit. Under an MPI launcher this process becomes the command (so that the
    rank it was started as is the one traced); otherwise it waits for it."""
    from . import trace_session

    env = dict(os.environ)
    env[trace_session.ENV_OUTPUT] = os.path.abspath(output)
    env[trace_session.ENV_FORMAT] = fmt
    env.pop(_ACTIVE, None)
    if trace_session.launched_by_mpi():
        # A native program's ranks name their run by the launcher's job id, and measure their
        # clocks through zehal's MPI library.
        env.pop(ENV_RUN, None)
        if not _is_python(cmd[0]):
            from . import mpi_preload

            mpi_preload.preload(cmd, env)
        try:
            os.execvpe(cmd[0], cmd, env)
        except OSError as e:
            print(f"zehal trace: cannot run {cmd[0]}: {e}", file=sys.stderr)
            return 127
    env[ENV_RUN] = uuid.uuid4().hex[:16]
    try:
        status = subprocess.call(cmd, env=env)
    except OSError as e:
        print(f"zehal trace: cannot run {cmd[0]}: {e}", file=sys.stderr)
        return 127
    folder = trace_session.ranks_folder(os.path.abspath(output))
    if not os.path.exists(output) and glob.glob(os.path.join(folder, "rank-*.pftrace")):
        # A native program (the C API, the Level Zero driver) streamed its rank file, or a
        # Python one ended before its own merge: merge what was written.
        from .trace_merge import TraceFileError

        try:
            merge(folder, output, fmt)
        except TraceFileError as e:
            print(f"zehal trace: {e}", file=sys.stderr)
    if not os.path.exists(output):
        print("zehal trace: the command recorded nothing (did it use zehal?)", file=sys.stderr)
    return status


def trace_command(argv: list[str], output: str, fmt: str | None = None) -> int:
    """Runs ``argv`` with tracing on and writes the trace of what the default device did
    to ``output``; returns the command's exit status.

    ``fmt`` (None: from the output's name, :func:`format_of`): json writes a Chrome trace
    of every process that used zehal; perfetto and otf2, and any format under an MPI
    launcher (``mpiexec -n 4 zehal trace -o run.pftrace -- python app.py``), stream each
    rank's records to ``output + ".ranks"`` and merge them, clocks aligned, at exit
    (:mod:`zehal.trace_session`).

    A Python command (``python script.py ...``, ``python -m module ...``) runs under
    ``python -m zehal.timeline``, which traces from the start; any other command is run
    with ``ZEHAL_TRACE_RAW`` (or ``ZEHAL_TRACE_OUTPUT``) set, so processes that import
    zehal trace themselves.
    """
    from . import trace_session

    if not argv:
        raise ValueError("trace_command: no command")
    fmt = fmt or format_of(output)
    if fmt not in ("json", "perfetto", "otf2"):
        raise ValueError(f"trace_command: format {fmt!r} is not one of json, perfetto, otf2")
    if fmt != "json" or trace_session.launched_by_mpi():
        cmd = list(argv)
        if _is_python(cmd[0]):
            cmd = [cmd[0], "-m", "zehal.timeline", *cmd[1:]]
        return _trace_streamed(cmd, output, fmt)
    with tempfile.TemporaryDirectory(prefix="zehal-trace-") as tmp:
        base = os.path.join(tmp, "raw")
        env = dict(os.environ)
        env[ENV_RAW] = base
        cmd = list(argv)
        if _is_python(cmd[0]):
            cmd = [cmd[0], "-m", "zehal.timeline", *cmd[1:]]
        try:
            status = subprocess.call(cmd, env=env)
        except OSError as e:
            print(f"zehal trace: cannot run {argv[0]}: {e}", file=sys.stderr)
            return 127
        paths = glob.glob(base + ".*.npz")
        if not paths:
            print("zehal trace: the command recorded nothing (did it use zehal?)", file=sys.stderr)
        trace = _merge(paths)
    with open(output, "w", encoding="utf-8") as f:
        json.dump(trace, f)
    return status


def merge(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    output: str | os.PathLike | None = None,
    fmt: str | None = None,
    processes: int | None = None,
) -> Any:
    """Merges the per-rank Perfetto files of a run (``paths``, or their folder) into one
    timeline, each rank's clock mapped to rank 0's, and writes it to ``output`` (None: only
    returns it) in ``fmt`` (None: from the output's name). Returns a
    :class:`zehal.trace_merge.Merged`: the Perfetto bytes and a summary per rank.
    Raises :class:`zehal.trace_merge.TraceFileError`, naming the file, for a truncated or
    foreign file, a missing rank or two runs mixed. The Perfetto bytes are in the result
    unless they were written to a Perfetto ``output``."""
    from . import trace_formats, trace_merge

    fmt = fmt or (format_of(os.fspath(output)) if output is not None else "perfetto")
    if fmt not in trace_formats.FORMATS:
        raise ValueError(f"merge: format {fmt!r} is not one of {', '.join(trace_formats.FORMATS)}")
    merged = trace_merge.merge_files(paths, output if fmt == "perfetto" else None, processes)
    if output is not None and fmt != "perfetto":
        processes_ = trace_formats.load(merged.data)
        if fmt == "json":
            with open(output, "w", encoding="utf-8") as f:
                json.dump(trace_formats.chrome_json(processes_), f)
        else:
            trace_formats.write_otf2(processes_, os.fspath(output))
    return merged


def _main(argv: list[str]) -> int:
    """``python -m zehal.timeline script.py args...`` or ``-m module args...``: runs it traced."""
    import runpy

    if not argv:
        print("usage: python -m zehal.timeline script.py [args...] | -m module [args...]", file=sys.stderr)
        return 2
    _start_from_env()
    if argv[0] == "-m" and len(argv) > 1:
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv[0] == "-c" and len(argv) > 1:
        sys.argv = ["-c", *argv[2:]]
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
    else:
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    try:
        code = _main(sys.argv[1:])
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    sys.exit(code)
