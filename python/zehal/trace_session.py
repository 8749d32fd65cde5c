"""Tracing one process of a (possibly MPI) run into one timeline.

:func:`start` runs inside each traced process (``zehal trace`` starts it through
``ZEHAL_TRACE_OUTPUT``). Under MPI (mpi4py importable and more than one rank, or any
``mpiexec`` launch) the ranks agree on a run id, measure their clocks against rank 0's, and
stream their records to ``<output>.ranks/rank-NNNNN.pftrace``; at exit they measure their
clocks again and merge over MPI into ``output``. Without MPI the process is rank 0 of 1.
"""

from __future__ import annotations

import atexit
import os
import sys
import uuid
from typing import Any

from .api_calls import ApiCalls
from .clock_sync import ClockModel, LocalClock, Sample, exchange
from .rank_trace import RankTrace
from .trace_merge import merge_over_mpi, rank_file_name

__all__ = ["ENV_OUTPUT", "ENV_FORMAT", "Session", "start", "ranks_folder", "world"]

#: Environment variable naming the merged trace a traced run writes.
ENV_OUTPUT = "ZEHAL_TRACE_OUTPUT"
#: Environment variable naming its format: perfetto (default), json or otf2.
ENV_FORMAT = "ZEHAL_TRACE_FORMAT"

_POLL_S = 0.02  # how often the stream's native thread drains the tracer and the API calls

# Variables a launcher of Open MPI, MPICH or Slurm sets in every rank it starts.

_MPI_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS", "SLURM_STEP_NUM_TASKS")


def launched_by_mpi() -> bool:
    """Whether an MPI launcher started this process."""
    return any(v in os.environ for v in _MPI_VARIABLES)


def world() -> Any:
    """MPI's world communicator when this process is an MPI rank and mpi4py is installed;
    None otherwise."""
    if not launched_by_mpi():
        return None
    try:
        from mpi4py import MPI
    except ImportError:
        print("zehal trace: mpi4py is not installed: each process is traced as rank 0 of 1", file=sys.stderr)
        return None
    return MPI.COMM_WORLD


def _finalized() -> bool:
    from mpi4py import MPI

    return bool(MPI.Is_finalized())


def ranks_folder(output: str) -> str:
    """The folder of the rank files of a run whose merged trace is ``output``."""
    return output + ".ranks"


class Session:
    """The trace of this process as rank ``rank`` of ``comm`` (None: rank 0 of 1)."""

    def __init__(self, output: str, fmt: str = "perfetto", comm: Any = None) -> None:
        self.output = os.path.abspath(output)
        self.format = fmt
        self.comm = comm
        self.rank = comm.Get_rank() if comm is not None else 0
        self.size = comm.Get_size() if comm is not None else 1
        run = uuid.uuid4().hex[:16]
        if comm is not None:
            run = comm.bcast(run, root=0)
        folder = ranks_folder(self.output)
        os.makedirs(folder, exist_ok=True)
        self.clock = LocalClock(self.rank)
        self.trace = RankTrace(os.path.join(folder, rank_file_name(self.rank)), self.rank, self.size, run, self.clock)
        self.start_sample = self._sample()
        self.trace.add_clock_sample(self.start_sample, "start")
        self.recorder: Any = None
        self.api_calls = ApiCalls()

    def _sample(self) -> Sample:
        if self.comm is None:
            now = self.clock.now()
            return Sample(now, now, 0)
        return exchange(self.comm, self.clock)

    def record_device(self, device: Any) -> None:
        """Streams what ``device`` does, and the host API calls of this process, into this
        rank's file until :meth:`finish`, both on the stream's native thread."""
        from .timeline import Recorder

        self.recorder = Recorder(device, poll_s=_POLL_S, stream=self.trace.stream, api_calls=True)
        self.api_calls.install()  # after the recorder: its own calls are not the program's

    def record_api_calls(self) -> None:
        """Streams the host API calls of this process into this rank's file until
        :meth:`finish`, without a device (one with no tracer)."""
        self.trace.stream.start(None, _POLL_S, api_calls=True)
        self.api_calls.install()

    def finish(self) -> None:
        """Stops recording, measures the clock again, closes this rank's file and merges
        the run into the output (collective under MPI)."""
        self.api_calls.uninstall()
        if self.recorder is not None:
            self.recorder.finish()
        self.trace.stream.stop()  # writes the device's last records and API calls (nothing when not started)
        if self.comm is not None and _finalized():
            # The program ended MPI itself: no end sample and no collective merge.
            self.trace.finish()
            print(
                f"zehal trace: rank {self.rank}: MPI was finalized before the trace ended; merge the ranks "
                f"with: zehal trace --merge {ranks_folder(self.output)} -o {self.output}",
                file=sys.stderr,
            )
            return
        end = self._sample()
        self.trace.add_clock_sample(end, "end")
        self.trace.finish()
        model = ClockModel(self.start_sample, end)
        target = self.output if self.format == "perfetto" else self.output + ".pftrace"
        if self.comm is not None:
            merge_over_mpi(self.comm, self.trace.path, model, target)
        else:
            from .trace_merge import merge_files

            merge_files([self.trace.path], target, processes=1)
        if self.rank == 0 and self.format != "perfetto":
            from .trace_formats import convert

            convert(target, self.output, self.format)
            os.remove(target)


def start(device: Any = None) -> Session | None:
    """Starts tracing this process into ``$ZEHAL_TRACE_OUTPUT``, merged at exit; None when
    the variable is unset. ``device``: the device to record (None: the default device)."""
    output = os.environ.get(ENV_OUTPUT)
    if not output:
        return None
    import zehal

    session = Session(output, os.environ.get(ENV_FORMAT, "perfetto"), world())
    device = device if device is not None else zehal.default_device()
    if device.properties.tracer:
        session.record_device(device)
    else:
        print(
            f"zehal trace: {device.name} ({device.backend}) has no tracer: rank {session.rank} records host API "
            "calls only"
        )
        session.record_api_calls()
    atexit.register(session.finish)
    return session
