#!/usr/bin/env python3
"""Training speed on two processes against one (issue 31; README, "Training on several
processes or machines"): for each size and batch, `s2s bench` as one process with two
threads (two shards, one per core) and as `mpirun -np 2` with one shard each (the same
two shards, one per process) on one thread, and a second for the exchange during the
backward pass (the overlap; --no-overlap runs one thread a process), alternated ROUNDS times in the same run; prints the medians
of target tokens per second, their ratio, the seconds per step rank 0 spent in MPI and
the bytes it sent a step. Both runs compute the same numbers (the final losses are
compared), so the ratio is the price of the processes alone.

Then, on paper, for N machines each training a batch of the same size (throughput
scaling): the bytes a step moves against the step's compute, measured here on one
machine, at 10 and 100 Gbit/s.

usage: scripts/bench/bench-mpi.py [--s2s ./s2s] [--rounds 3] [--only S/32,M/64] [--save F.json]
       scripts/bench/bench-mpi.py --paper-from F.json
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

# (size, batch, timed steps, warm-up steps)
CONFIGS = [("S", 32, 100, 10), ("S", 64, 60, 6), ("M", 32, 16, 3), ("M", 64, 10, 2),
           ("L", 32, 6, 2), ("L", 64, 4, 1)]
# Open MPI as root, in a container without ptrace rights (README)
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl_vader_single_copy_mechanism": "none", "OMPI_MCA_btl": "self,vader"}


def result(cmd, env):
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    line = [l for l in out.splitlines() if l.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--s2s", default="./s2s")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--save", help="also write the measured medians to this JSON file")
    ap.add_argument("--paper-from", help="only the table on paper, from a --save file")
    args = ap.parse_args()
    if args.paper_from:
        with open(args.paper_from) as f:
            paper(json.load(f))
        return
    if not shutil.which("mpirun"):
        sys.exit("bench-mpi: mpirun is missing (sh scripts/install-deps.sh)")
    env = dict(os.environ, **MPI_ENV)
    env.pop("OPENBLAS_NUM_THREADS", None)
    only = set(filter(None, args.only.split(",")))
    rows = []
    for size, batch, steps, warmup in CONFIGS:
        name = "%s/%d" % (size, batch)
        if only and name not in only:
            continue
        common = [args.s2s, "bench", "--size", size, "--batch", str(batch), "--steps",
                  str(steps), "--warmup", str(warmup)]
        one, two, late = [], [], []
        # a thread for the shard's pass, and one to send the output layer's gradient
        # during it (training.threads 2: s2s starts no thread it was not given)
        mpi = ["mpirun", "-np", "2"] + common + ["--threads", "2", "--shards", "2"]
        mpi_late = ["mpirun", "-np", "2"] + common + ["--threads", "1", "--shards", "2"]
        for r in range(args.rounds):
            one.append(result(common + ["--threads", "2", "--shards", "2"], env))
            two.append(result(mpi, env))
            late.append(result(mpi_late + ["--no-overlap"], env))
            print("%s round %d: one process %.0f tok/s, 2 processes %.0f tok/s (exchange after "
                  "the passes %.4f s/step; without overlap %.4f)" % (
                      name, r + 1, one[-1]["tgt_tokens_per_s"], two[-1]["tgt_tokens_per_s"],
                      two[-1]["exposed_s_per_step"], late[-1]["exposed_s_per_step"]), flush=True)
            losses = {x[-1]["final_loss"] for x in (one, two, late)}
            if len(losses) != 1:
                sys.exit("bench-mpi: %s: the final losses differ: %r" % (name, losses))
        med = lambda runs, key: statistics.median(x[key] for x in runs)
        rows.append((name, med(one, "tgt_tokens_per_s"), med(two, "tgt_tokens_per_s"),
                     med(one, "s_per_step_median"), med(two, "s_per_step_median"),
                     med(two, "mpi_s_per_step"), med(two, "mpi_bytes_per_step"),
                     med(two, "overlapped_bytes_per_step"), med(two, "exposed_s_per_step"),
                     med(late, "exposed_s_per_step"), med(late, "tgt_tokens_per_s")))
    print()
    print("| size/batch | 1 process, 2 threads: tok/s | mpirun -np 2, 1 shard each: tok/s "
          "| ratio | s/step (1 process) | s/step (2 processes) | s/step in MPI (rank 0) "
          "| MB sent a step (rank 0) | of which during the backward pass | s/step of exchange "
          "after the passes | the same without overlap | tok/s without overlap |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, a, b, sa, sb, mpi, sent, overlapped, exposed, late, late_tok in rows:
        print("| %s | %.0f | %.0f | %.2f | %.4f | %.4f | %.4f | %.1f | %.1f | %.4f | %.4f | %.0f |"
              % (name, a, b, b / a, sa, sb, mpi, sent / 1e6, overlapped / 1e6, exposed, late,
                 late_tok))
    if args.save:
        with open(args.save, "w") as f:
            json.dump(rows, f)
    paper(rows)


# The exchange (src/train/shard_exchange.h) passes the partial sum from rank to rank and
# the final sum around the ring, in 1 MiB chunks: on 2 machines each link carries the
# gradient once each way (as a ring all-reduce does); on N > 2 the busiest link carries
# it twice (a ring all-reduce: 2 (N - 1) / N times), plus the pipeline's fill, a chunk per
# hop on the way there and back.
CHUNK_BYTES = 1 << 20


def exchange_seconds(n, gradient_bytes, bytes_per_s):
    if gradient_bytes <= 0:
        return 0.0
    loads = 1 if n == 2 else 2
    chunk = min(CHUNK_BYTES, gradient_bytes)
    return (loads * gradient_bytes + 2 * (n - 1) * chunk) / bytes_per_s


def paper(rows):
    """N machines, each training the measured batch on all its cores (the one-process
    step time) and exchanging the gradient rank 0 sent on 2 processes: all of it after
    the backward pass, or (overlap, as s2s does) the output layer's part during it, so
    that only the rest waits -- as long as the output layer's part arrives within the
    backward pass, which the table checks against half the step (the backward pass is
    about two thirds of it)."""
    print()
    print("On paper, N machines each training this batch on its own cores: the exchange "
          "that waits after the backward pass, and the speedup over one machine, without "
          "and with the output layer's part sent during the backward pass:")
    print()
    print("| size/batch | step (s) | MB a step (during backward) | N | 10 Gbit/s: no overlap | "
          "10 Gbit/s: overlap | 100 Gbit/s: no overlap | 100 Gbit/s: overlap |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        name, a, b, sa, sb, mpi, sent = row[:7]
        overlapped = row[7] if len(row) > 7 else 0
        for n in (2, 4, 8, 16, 64):
            cells = []
            for gbit in (10, 100):
                rate = gbit * 1e9 / 8
                for early in (0, overlapped):
                    comm = exchange_seconds(n, sent - early, rate)
                    hidden = exchange_seconds(n, early, rate) if early else 0
                    fits = hidden <= sa / 2
                    cells.append("%.4f s, %.2fx%s" % (comm, n * sa / (sa + comm),
                                                       "" if fits else " (overlap does not fit)"))
            print("| %s | %.4f | %.1f (%.1f) | %d | %s |" % (
                name, sa, sent / 1e6, overlapped / 1e6, n, " | ".join(cells)))

if __name__ == "__main__":
    main()
