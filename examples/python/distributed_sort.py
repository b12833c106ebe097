#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A sort across processes with gpuprim's distributed calls (experimental).

    mpirun -np 4 python3 distributed_sort.py [--count N] [--library path/to/libgpuprim.so]

One process per rank, started by mpirun; each makes its own keys (a
different count on every rank), and distributed_sort() sorts the
concatenation of all ranks' keys in rank order: afterwards rank r holds its
part of the sorted data, as many keys as it gave. The program checks the
result (sorted within each rank and across rank boundaries, the payload a
permutation of the global positions), shows distributed_topk() and
distributed_scan(), and prints the time of the sort on rank 0.

This runs on the CPU backend: numpy arrays and an mpi4py communicator
(python3 -m pip install mpi4py; mpi4py must use the MPI that libgpuprim was
built with). Exit status: 0 all results right, 1 a wrong result, 2 setup
failed, 77 numpy or mpi4py is not installed.

On GPUs (one process per GPU, torchrun or mpirun) the arrays are CUDA
tensors or CuPy arrays and the communicator is an NCCL one on that GPU,
made by the program (the library never creates one). With torchrun and
CuPy's NCCL bindings, rank 0 makes the NCCL id and the others receive it
through torch.distributed (any channel will do: a file, MPI_Bcast, ...):

    # torchrun --nproc-per-node 4 my_sort.py
    import os, torch, torch.distributed as dist, cupy, gpuprim
    from cupy.cuda import nccl
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("gloo")                    # only to share the NCCL id
    box = [nccl.get_unique_id() if rank == 0 else None]
    dist.broadcast_object_list(box, src=0)
    with cupy.cuda.Device(torch.cuda.current_device()):
        comm = nccl.NcclCommunicator(size, box[0], rank)   # keep it alive while in use
    keys = torch.rand(1 << 26, device="cuda")
    part = gpuprim.distributed_sort(keys, comm=comm)   # or comm=comm.comm (the int ncclComm_t)

With nccl4py (NVIDIA's NCCL Python bindings) the communicator is an
nccl.core.Communicator, passed as it is (or its .ptr). An explicit context
takes the communicator once:

    with gpuprim.Context("cuda", device=local_rank) as gpu:
        gpu.attach_communicator(comm)
        part = gpu.distributed_sort(keys)

The GPU path needs a libgpuprim built with NCCL (GPUPRIM_WITH_NCCL); CUDA
tensors and CuPy arrays run on the framework's current stream, and every
distributed call returns when its results are complete.
"""
import argparse
import os
import sys

try:
    import numpy as np
    from mpi4py import MPI
except ImportError as missing:
    print(f"distributed_sort.py: skipped, {missing.name} is not installed "
          "(python3 -m pip install numpy mpi4py)")
    sys.exit(77)


def import_gpuprim(library):
    if library:
        os.environ["GPUPRIM_LIBRARY"] = library
        source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
        sys.path.insert(0, os.path.normpath(source))
    import gpuprim
    return gpuprim


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", help="path to a built shared libgpuprim (.so/.dylib/.dll)")
    parser.add_argument("--count", type=int, default=1_000_000,
                        help="keys on the last rank (rank r has about (r + 1) / ranks of that)")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()

    try:
        gpuprim = import_gpuprim(args.library)
        if not gpuprim.has_distributed():
            raise RuntimeError(f"{gpuprim.LIBRARY_PATH} has no distributed calls")
        context = gpuprim.Context("cpu")
        context.attach_communicator(comm)  # BACKEND_UNAVAILABLE: built without MPI
        setup_error = None
    except (ImportError, OSError, RuntimeError, ValueError) as error:
        setup_error = f"rank {rank}: {error}"
    # Every rank stops when one cannot start (one collective call, no hang).
    errors = [e for e in comm.allgather(setup_error) if e]
    if errors:
        if rank == 0:
            print("distributed_sort.py: cannot start:", "; ".join(errors))
        return 2

    # Each rank's keys: a different count per rank, float32 with repeats.
    rng = np.random.default_rng([2026, rank])
    n = args.count * (rank + 1) // size
    keys = rng.integers(0, 1 << 20, size=n).astype(np.float32) / 7
    counts = comm.allgather(n)
    offsets = [sum(counts[:r]) for r in range(size)]   # global position of each rank's first key
    offset, total = offsets[rank], sum(counts)
    origin = np.arange(offset, offset + n, dtype=np.uint64)   # the payload: global positions

    comm.Barrier()
    start = MPI.Wtime()
    sorted_keys, moved = context.distributed_sort(keys, values=origin)
    seconds = comm.allreduce(MPI.Wtime() - start, op=MPI.MAX)

    failures = []

    def check(condition, what):
        if not condition:
            failures.append(f"rank {rank}: {what}")

    # This rank's part: as many keys as it gave, sorted, and its keys are the
    # ones the payload names (the payload moved with its keys).
    check(sorted_keys.size == n, "holds as many keys as it gave")
    check(bool(np.all(sorted_keys[1:] >= sorted_keys[:-1])), "sorted within the rank")
    # Across ranks: every non-empty rank's first key is not below the last
    # key of the non-empty ranks before it.
    ends = [pair for pair in comm.allgather((sorted_keys[0], sorted_keys[-1]) if n else None) if pair]
    check(all(ends[i][1] <= ends[i + 1][0] for i in range(len(ends) - 1)), "sorted across ranks")
    # The payloads form a permutation of 0 .. total-1: the distributed sum of
    # the payloads and of their squares (mod 2^64) are those of 0 .. total-1.
    wide = moved.astype(np.uint64)
    check(int(context.distributed_reduce(wide)) == total * (total - 1) // 2 % (1 << 64),
          "payload sum")
    check(int(context.distributed_reduce(wide * wide)) ==
          (total - 1) * total * (2 * total - 1) // 6 % (1 << 64), "payload sum of squares")
    check(int(context.distributed_reduce(moved, "max")) == max(total - 1, 0), "payload max")
    # The keys the payload names: this rank asks the owners for them.
    owners = np.searchsorted(np.array(offsets, np.uint64), moved, side="right") - 1
    wanted = [moved[owners == r] - np.uint64(offsets[r]) for r in range(size)]
    answered = comm.alltoall([keys[w.astype(np.int64)] for w in comm.alltoall(wanted)])
    looked_up = np.empty(n, np.float32)
    for r in range(size):
        looked_up[owners == r] = answered[r]
    check(bool(np.array_equal(looked_up, sorted_keys)), "payload moved with its keys")

    # The 5 largest keys of all ranks (the same on every rank) and a global
    # prefix sum: the exclusive scan of ones is each key's global position.
    top_values, top_positions = context.distributed_topk(keys, min(5, total))
    check(bool(np.array_equal(top_values, np.sort(np.concatenate(comm.allgather(
        np.sort(keys)[-5:])))[::-1][:min(5, total)])), "top 5")
    positions = context.distributed_scan(np.ones(n, np.int64), exclusive=True)
    check(bool(np.array_equal(positions, np.arange(offset, offset + n))), "exclusive scan")

    all_failures = [f for part in comm.allgather(failures) for f in part]
    if rank == 0:
        print(f"gpuprim {gpuprim.__version__}, libgpuprim {gpuprim.library_version()} "
              f"({gpuprim.LIBRARY_PATH})")
        print(f"{size} ranks, {total} float32 keys with uint64 payloads "
              f"({', '.join(str(c) for c in counts)} per rank)")
        print(f"distributed_sort: {seconds * 1e3:.1f} ms, {total / seconds / 1e6:.1f} Mkeys/s "
              "(slowest rank)")
        print(f"5 largest: {top_values.tolist()} at global positions {top_positions.tolist()}")
        for failure in all_failures:
            print("WRONG", failure)
        print("all results right" if not all_failures else f"{len(all_failures)} wrong results")
    context.close()
    return 1 if all_failures else 0


if __name__ == "__main__":
    sys.exit(main())
