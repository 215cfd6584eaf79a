"""Long differential fuzzing runs: random valid kernels against the reference evaluator.

    python tools/fuzz.py --n 10000 --seed 1 [--start K] [--sections 1] [--without const_fold]

Generates `--n` kernels (kernel k has seed `seed * 1_000_000 + k` and `--sections` random
programs), checks each as `tests/fuzz/harness.py` describes (naga, Tint, spirv-val, every
executor against the reference), prints progress with kernels/s, and at the end a summary
per failure class. The first failure of each class is minimised (`--minimize-budget`
seconds each) and printed as kernel source. Exit status 1 when anything failed. Runs of
more than `--chunk` kernels go to worker processes of that many kernels each (a process
that runs thousands of distinct kernels keeps growing: about 1 MB per kernel and executor).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time

REPOSITORY_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPOSITORY_ROOT)

from tests.fuzz import harness  # noqa: E402
from tests.fuzz.generator import DEFAULT_FEATURES, FEATURES, generate  # noqa: E402
from tests.fuzz.program import render  # noqa: E402


def seed_of(run_seed: int, index: int) -> int:
    return run_seed * 1_000_000 + index


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="kernels to generate")
    parser.add_argument("--seed", type=int, default=0, help="run seed")
    parser.add_argument("--start", type=int, default=0, help="first kernel index")
    parser.add_argument("--sections", type=int, default=1, help="programs per kernel")
    parser.add_argument("--batch", type=int, default=50, help="kernels per Tint call")
    parser.add_argument(
        "--chunk",
        type=int,
        default=500,
        help="kernels per worker process (0: all in this one); a process that runs thousands "
        "of distinct kernels grows by about 1 MB per kernel and executor",
    )
    parser.add_argument(
        "--without",
        action="append",
        default=[],
        choices=sorted(FEATURES),
        help="leave out a program class (see tests/fuzz/generator.py FEATURES)",
    )
    parser.add_argument("--minimize-budget", type=float, default=120.0)
    parser.add_argument("--no-minimize", action="store_true")
    parser.add_argument("--summary", help=argparse.SUPPRESS)  # a worker's results (JSON)
    args = parser.parse_args(argv)
    features = frozenset(DEFAULT_FEATURES) - set(args.without)

    stats = harness.Stats()
    print(
        f"fuzz: {args.n} kernels x {args.sections} programs, seed {args.seed}, "
        f"features {sorted(features) or 'none'}, executors {list(harness.EXECUTORS)}",
        flush=True,
    )
    started = time.perf_counter()
    if args.chunk and args.n > args.chunk:
        run_in_workers(args, stats, started)
    else:
        run_here(args, features, stats, started)
    if args.summary:
        write_summary(args.summary, stats)
        return 0

    elapsed = time.perf_counter() - started
    by_class = collections.Counter(f.key for f in stats.failures)
    print(f"\n== {stats.kernels} kernels ({stats.programs} programs) in {elapsed:.0f} s")
    print(f"{stats.kernels / elapsed:.2f} kernels/s; outputs compared {stats.compared},")
    print(f"not compared (unreliable floats or branches on them) {stats.skipped}")
    print(f"failures: {len(stats.failures)}")
    for key, count in by_class.most_common():
        print(f"  {count:5d}  {key}")

    if not args.no_minimize:
        first_of_class = {}
        for failure in stats.failures:
            first_of_class.setdefault(failure.key, failure)
        for key, failure in first_of_class.items():
            print(f"\n== minimising seed {failure.seed}: {key}", flush=True)
            program = generate(failure.seed, features, args.sections)
            small = harness.minimize(program, failure, args.minimize_budget, log=print)
            print(render(small))
            again = harness.check_programs([small], tint=True)
            for f in again:
                print(f"   {f}".rstrip()[:2000])
    return 1 if stats.failures else 0


def run_here(args, features, stats, started) -> None:
    """Check kernels `args.start ..` in this process, printing progress per batch."""
    for begin in range(args.start, args.start + args.n, args.batch):
        end = min(begin + args.batch, args.start + args.n)
        seeds = [seed_of(args.seed, k) for k in range(begin, end)]
        failures = harness.check_seeds(seeds, features, args.sections, stats)
        for failure in failures:
            print(f"FAIL {failure}".splitlines()[0][:300], flush=True)
        elapsed = time.perf_counter() - started
        print(
            f"{end - args.start} kernels, {stats.programs} programs, "
            f"{len(stats.failures)} failures, {elapsed:.0f} s, "
            f"{(end - args.start) / elapsed:.2f} kernels/s",
            flush=True,
        )


def run_in_workers(args, stats, started) -> None:
    """Check the kernels in worker processes of `args.chunk` kernels each, one after the
    other, and add up their results."""
    with tempfile.TemporaryDirectory(prefix="pyshader_tx_fuzz_") as folder:
        for begin in range(args.start, args.start + args.n, args.chunk):
            count = min(args.chunk, args.start + args.n - begin)
            summary = os.path.join(folder, f"{begin}.json")
            command = [sys.executable, os.path.abspath(__file__), "--n", str(count)]
            command += ["--start", str(begin), "--seed", str(args.seed), "--chunk", "0"]
            command += ["--sections", str(args.sections), "--batch", str(args.batch)]
            command += [f"--without={name}" for name in args.without]
            command += ["--no-minimize", "--summary", summary]
            output = subprocess.run(command, capture_output=True, text=True)
            for line in output.stdout.splitlines():
                if line.startswith("FAIL"):
                    print(line, flush=True)
            if output.returncode != 0 or not os.path.exists(summary):
                raise RuntimeError(f"worker for kernels {begin}..: {output.stderr[-2000:]}")
            read_summary(summary, stats)
            done = begin + count - args.start
            elapsed = time.perf_counter() - started
            print(
                f"{done} kernels, {len(stats.failures)} failures, {elapsed:.0f} s, "
                f"{done / elapsed:.2f} kernels/s",
                flush=True,
            )


def write_summary(path: str, stats) -> None:
    fields = ("kernels", "programs", "compared", "skipped", "seconds")
    data = {name: getattr(stats, name) for name in fields}
    data["failures"] = [dataclasses.asdict(f) for f in stats.failures]
    with open(path, "w", encoding="utf-8") as file:
        json.dump(data, file)


def read_summary(path: str, stats) -> None:
    with open(path, encoding="utf-8") as file:
        data = json.load(file)
    for name in ("kernels", "programs", "compared", "skipped", "seconds"):
        setattr(stats, name, getattr(stats, name) + data[name])
    stats.failures.extend(harness.Failure(**f) for f in data["failures"])


if __name__ == "__main__":
    sys.exit(main())
