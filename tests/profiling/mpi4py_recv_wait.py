"""mpi4py's blocking comm.recv waits in MPI_Mprobe and MPI_Mrecv: with
libflexmpi preloaded that wait is MPI time, not computation. Rank 1 sends
after 0.3 s; tests/profiling/CMakeLists.txt checks rank 0's MPI time."""
import time

from mpi4py import MPI

comm = MPI.COMM_WORLD
if comm.Get_rank() == 1:
    time.sleep(0.3)
    comm.send({"payload": list(range(10))}, dest=0, tag=5)
else:
    message = comm.recv(source=1, tag=5)
    assert message["payload"][9] == 9
    print("rank 0: received")
