"""zehal.timeline: Chrome trace JSON from decoded entries, record(), and tracing a script
(``zehal trace --output trace.json -- python script.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import zehal
from conftest import default_device_traces
from zehal import _zehal, timeline


def group(device, name):
    for g in device.metric_groups():
        if g.name == name:
            return g
    raise LookupError(name)


def traced(device, work):
    groups = [group(device, "EngineEvents")]
    zehal.activate_metric_groups(device, groups)
    with zehal.MetricTracer(device, groups) as t:
        dec = zehal.MetricDecoder(t)
        t.enable()
        work()
        t.disable()
        chunks = []
        while True:
            try:
                chunks.append(t.read())
            except zehal.NotReadyError:
                break
    return b"".join(chunks), dec


def copies_on_two_engines(device, n=3):
    host = zehal.Area.host().mmap(4096)
    dev = zehal.Area.device(device).mmap(4096)

    def work():
        for index in (0, 1):
            with zehal.Dma(device, 1, index) as dma:
                for _ in range(n):
                    dma.copy(dev, host).wait()

    return work


def slices(trace):
    return [e for e in trace["traceEvents"] if e["ph"] == "X"]


def track_names(trace, pid):
    return {
        e["tid"]: e["args"]["name"]
        for e in trace["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == pid
    }


def test_one_track_per_engine_and_per_queue(sim_backend):
    d = zehal.sim_device(copy_engines=2, async_records_per_s=0)
    raw, dec = traced(d, copies_on_two_engines(d))
    entries, _ = dec.decode(raw)
    trace = timeline.chrome_trace(entries, dec.decodable_metrics)
    json.dumps(trace)  # plain JSON
    xs = slices(trace)
    commands = int(np.count_nonzero(entries["metric_index"] == 0))
    assert len(xs) == 2 * commands  # each on its engine's track and its queue's track
    engines = track_names(trace, 1)
    queues = track_names(trace, 2)
    assert set(engines.values()) >= {"copy engine 0", "copy engine 1"}
    assert len(queues) >= 2 and all(name.startswith("queue ") for name in queues.values())
    copies = [e for e in xs if e["name"] == "copy" and e["pid"] == 1]
    assert len(copies) == 6
    for e in copies:
        assert e["dur"] >= 0
        assert e["args"]["BytesMoved"] == 4096
    # Timestamps are host microseconds of the decoded entries.
    starts = entries[entries["metric_index"] == 0]["timestamp"]
    assert min(e["ts"] for e in xs) == pytest.approx(starts.min() / 1000.0)
    assert any(e["ph"] == "C" for e in trace["traceEvents"])  # queue depth counters
    assert trace["displayTimeUnit"] == "ns"


def test_metric_names_may_be_given_as_strings_and_unknown_events_are_instants():
    names = ["AsyncCounter", "ExportWrite"]
    entries = np.zeros(2, dtype=_zehal.METRIC_ENTRY_DTYPE)
    entries["metric_index"] = [0, 1]
    entries["timestamp"] = [1000, 2000]
    entries["value"] = [5, 0xABABABAB]
    trace = timeline.chrome_trace(entries, names)
    instants = [e for e in trace["traceEvents"] if e["ph"] == "i"]
    assert [e["name"] for e in instants] == names
    assert instants[1]["args"]["first_word"] == "0xabababab"
    assert timeline.chrome_trace(entries[:0], names)["traceEvents"]  # metadata only


def test_export_writes_json_from_raw_or_entries(sim_backend, tmp_path):
    d = zehal.sim_device(async_records_per_s=0)
    raw, dec = traced(d, copies_on_two_engines(d, 1))
    out = tmp_path / "t.json"
    trace = timeline.export(out, raw=raw, decoder=dec)
    assert json.loads(out.read_text()) == trace
    entries, _ = dec.decode(raw)
    assert timeline.export(None, entries, dec.decodable_metrics) == trace
    with pytest.raises(ValueError):
        timeline.export(None)
    with pytest.raises(ValueError):
        timeline.export(None, entries)


def test_record_traces_a_block(sim_backend, tmp_path):
    d = zehal.sim_device(async_records_per_s=0)
    out = tmp_path / "block.json"
    with timeline.record(out, device=d) as result:
        copies_on_two_engines(d, 2)()
    assert len(result["entries"]) > 0
    loaded = json.loads(out.read_text())
    assert len(slices(loaded)) >= 8
    # The tracer is gone afterwards: the device can be traced again.
    zehal.MetricTracer(d, [group(d, "EngineEvents")]).close()


SCRIPT = textwrap.dedent(
    """
    import sys, zehal
    dma = zehal.Dma.default()
    host = zehal.Area.default_host().mmap(1 << 12)
    dev = zehal.Area.default_device().mmap(1 << 12)
    for _ in range(5):
        dma.copy(dev, host).wait()
    print("args", sys.argv[1:])
    sys.exit(int(sys.argv[1]))
    """
)


def clean_env():
    env = dict(os.environ)
    env.pop("ZEHAL_BACKEND", None)
    env.pop(timeline.ENV_RAW, None)
    return env


def test_trace_command_runs_a_script_and_writes_its_timeline(tmp_path):
    script = tmp_path / "work.py"
    script.write_text(SCRIPT)
    out = tmp_path / "trace.json"
    code = (
        "import sys, zehal.timeline as t\n"
        f"sys.exit(t.trace_command([sys.executable, {str(script)!r}, '3'], {str(out)!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=clean_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr  # the script's status
    assert "args ['3']" in done.stdout
    if not default_device_traces(clean_env()):
        assert "has no tracer: the command runs untraced" in done.stderr
        return
    trace = json.loads(out.read_text())
    copies = [e for e in slices(trace) if e["name"] == "copy"]
    assert len(copies) >= 10  # 5 copies, on an engine track and a queue track each


def test_zehal_trace_cli(tmp_path):
    script = tmp_path / "work.py"
    script.write_text(SCRIPT)
    out = tmp_path / "cli.json"
    done = subprocess.run(
        [sys.executable, "-m", "zehal", "trace", "--output", str(out), "--", sys.executable, str(script), "0"],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    if not default_device_traces(clean_env()):
        assert "has no tracer: the command runs untraced" in done.stderr
        return
    assert len(slices(json.loads(out.read_text()))) >= 10


def test_trace_command_through_another_program(tmp_path):
    """A command that is not Python: processes that run the traced runner record too."""
    script = tmp_path / "work.py"
    script.write_text(SCRIPT)
    out = tmp_path / "sh.json"
    inner = f"{sys.executable} -m zehal.timeline {script} 0"
    code = f"import sys, zehal.timeline as t\nsys.exit(t.trace_command(['sh', '-c', {inner!r}], {str(out)!r}))\n"
    done = subprocess.run([sys.executable, "-c", code], env=clean_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    if not default_device_traces(clean_env()):
        assert "has no tracer: the command runs untraced" in done.stderr
        return
    assert len(slices(json.loads(out.read_text()))) >= 10


def test_trace_command_of_something_that_records_nothing(tmp_path):
    out = tmp_path / "empty.json"
    status = timeline.trace_command(["true"], str(out))
    assert status == 0
    trace = json.loads(out.read_text())
    assert slices(trace) == []
    assert timeline.trace_command(["/nonexistent/program"], str(out)) == 127
    with pytest.raises(ValueError):
        timeline.trace_command([], str(out))
