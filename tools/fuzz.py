"""Long differential fuzzing runs: random valid kernels against the reference evaluator.

    python tools/fuzz.py --n 10000 --seed 1 [--start K] [--sections 1] [--without const_fold]

Generates `--n` kernels (kernel k has seed `seed * 1_000_000 + k` and `--sections` random
programs), checks each as `tests/fuzz/harness.py` describes (naga, Tint, spirv-val, every
executor against the reference), prints progress with kernels/s, and at the end a summary
per failure class. The first failure of each class is minimised (`--minimize-budget`
seconds each) and printed as kernel source. Exit status 1 when anything failed.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
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
    parser.add_argument("--batch", type=int, default=25, help="kernels per Tint call")
    parser.add_argument(
        "--without",
        action="append",
        default=[],
        choices=sorted(FEATURES),
        help="leave out a program class (see tests/fuzz/generator.py FEATURES)",
    )
    parser.add_argument("--minimize-budget", type=float, default=120.0)
    parser.add_argument("--no-minimize", action="store_true")
    args = parser.parse_args(argv)
    features = frozenset(DEFAULT_FEATURES) - set(args.without)

    stats = harness.Stats()
    print(
        f"fuzz: {args.n} kernels x {args.sections} programs, seed {args.seed}, "
        f"features {sorted(features) or 'none'}, executors {list(harness.EXECUTORS)}",
        flush=True,
    )
    started = time.perf_counter()
    first_of_class = {}
    for begin in range(args.start, args.start + args.n, args.batch):
        end = min(begin + args.batch, args.start + args.n)
        seeds = [seed_of(args.seed, k) for k in range(begin, end)]
        failures = harness.check_seeds(seeds, features, args.sections, stats)
        for failure in failures:
            print(f"FAIL {failure}".splitlines()[0][:300], flush=True)
            first_of_class.setdefault(failure.key, failure)
        elapsed = time.perf_counter() - started
        print(
            f"{end - args.start} kernels, {stats.programs} programs, "
            f"{len(stats.failures)} failures, {elapsed:.0f} s, "
            f"{(end - args.start) / elapsed:.2f} kernels/s",
            flush=True,
        )

    elapsed = time.perf_counter() - started
    by_class = collections.Counter(f.key for f in stats.failures)
    print(f"\n== {stats.kernels} kernels ({stats.programs} programs) in {elapsed:.0f} s")
    print(f"{stats.kernels / elapsed:.2f} kernels/s; outputs compared {stats.compared},")
    print(f"not compared (unreliable floats or branches on them) {stats.skipped}")
    print(f"failures: {len(stats.failures)}")
    for key, count in by_class.most_common():
        print(f"  {count:5d}  {key}")

    if not args.no_minimize:
        for key, failure in first_of_class.items():
            print(f"\n== minimising seed {failure.seed}: {key}", flush=True)
            program = generate(failure.seed, features, args.sections)
            small = harness.minimize(program, failure, args.minimize_budget, log=print)
            print(render(small))
            again = harness.check_programs([small], tint=True)
            for f in again:
                print(f"   {f}".rstrip()[:2000])
    return 1 if stats.failures else 0


if __name__ == "__main__":
    sys.exit(main())
