"""What every gallery example shares: its command line (`--size`, `--out`, `--source`), the
folder its pictures go to, a GPU timer, and the line it prints about what it did.

An example is one file with `main(argv=None) -> list[pathlib.Path]` (the pictures it wrote);
it checks itself and raises `CheckFailed` when the GPU disagrees with its numpy reference.
`python examples/NAME.py --help` lists its options; the tests call `main([...])` at a small
size (tests/examples).
"""

from __future__ import annotations

import argparse
import pathlib
import time

import pyshader_tx as tx

DEFAULT_OUT = pathlib.Path(__file__).resolve().parent / "output"


class CheckFailed(AssertionError):
    """The GPU's result is not the numpy reference's."""


def parser(description: str, size: int, size_help: str = "problem size") -> argparse.ArgumentParser:
    """A command line with the options every example takes; add your own to it."""
    cli = argparse.ArgumentParser(description=description.strip().splitlines()[0])
    cli.add_argument("--size", type=int, default=size, help=f"{size_help} (default {size})")
    cli.add_argument(
        "--out", type=pathlib.Path, default=DEFAULT_OUT, help="folder for the pictures"
    )
    cli.add_argument(
        "--source",
        choices=("wgsl", "spirv"),
        default=None,
        help="what the runtime hands to wgpu: wgsl or spirv (default: tx.options)",
    )
    return cli


def setup(args: argparse.Namespace) -> pathlib.Path:
    """Apply `--source` and make the output folder; returns it."""
    if args.source is not None:
        tx.options.shader_source = args.source
    args.out.mkdir(parents=True, exist_ok=True)
    return args.out


def gpu_seconds(call, *, reps: int = 1) -> float:
    """Wall time of `call()` including the GPU work it queued (the best of `reps` runs,
    after one warm-up run that compiles its kernels)."""
    call()
    tx.synchronize()
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        call()
        tx.synchronize()
        best = min(best, time.perf_counter() - start)
    return best


def report(name: str, size: str, seconds: float, pictures=(), note: str = "") -> None:
    """One line about the run: adapter, size, time, what was written."""
    wrote = ", ".join(str(p) for p in pictures)
    print(f"{name}: {size} on {tx.adapter_summary()} ({tx.options.shader_source})")
    print(f"  {seconds * 1e3:.2f} ms{' - ' + note if note else ''}")
    if wrote:
        print(f"  wrote {wrote}")


def check_close(name: str, got, expected, *, atol: float = 0.0, rtol: float = 0.0) -> None:
    """Raise CheckFailed unless `got` matches the numpy reference `expected`."""
    import numpy as np

    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        raise CheckFailed(f"{name}: shape {got.shape}, numpy has {expected.shape}")
    if not np.allclose(got, expected, atol=atol, rtol=rtol, equal_nan=True):
        bad = np.count_nonzero(~np.isclose(got, expected, atol=atol, rtol=rtol, equal_nan=True))
        raise CheckFailed(f"{name}: {bad} of {got.size} values differ from numpy")
    print(f"  check: {name} matches numpy")
