"""A small MPI program for ``zehal trace``: every rank copies blocks to its device on two
copy engines, then the ranks take turns (ordered by barriers) for a last copy.

    mpiexec -n 4 zehal trace -o run.pftrace -- python examples/mpi_ranks.py
    zehal trace --merge run.pftrace.ranks -o run.pftrace --plot timeline.png

Open run.pftrace in https://ui.perfetto.dev: one process per rank, its engines and queues.
"""

import zehal
from mpi4py import MPI

comm = MPI.COMM_WORLD
device = zehal.default_device()
host = zehal.Area.host().mmap(1 << 20)
dev = zehal.Area.device(device).mmap(1 << 20)

engines = [zehal.Dma(device, 1, index) for index in range(2)]
for _ in range(4):
    # Both engines at once: a bigger block on engine 0, a smaller one on engine 1.
    requests = [dma.copy(dev, host, (256 << 10) >> (2 * k)) for k, dma in enumerate(engines)]
    for r in requests:
        r.wait()
comm.Barrier()
for turn in range(comm.size):
    if turn == comm.rank:
        engines[0].copy(dev, host, 512 << 10).wait()
    comm.Barrier()
for dma in engines:
    dma.close()
if comm.rank == 0:
    print(f"{comm.size} ranks done")
