"""The entries of `bench_peers.py`: for each kernel, how to make its inputs at a
scale, the pyshader_tx launches of one call (`peer_kernels.py`; Numba's are
`peer_numba.run_<numba>`), the numpy reference and how close a result must be. Also what
runs a call's launches on `tx.DeviceArray`s and checks outputs, shared with the test
(`tests/exec/test_peer_kernels.py`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import peer_kernels as pk
from pyshader_tx.runtime import pool

# -- what a benchmark entry is ---------------------------------------------------------


@dataclass
class Launch:
    """One pyshader_tx launch: `kernel(*args, threads=..., workgroups=...)`; an argument
    that is a str names an array of the entry's arrays."""

    kernel: object
    args: tuple
    threads: object = None
    workgroups: object = None


@dataclass
class Copy:
    """A device-to-device copy of array `src` into array `dst` (to restore an input that
    the kernel changes in place)."""

    src: str
    dst: str


@dataclass
class Expect:
    """What an output array must hold: `value` at `index` of it, within `rtol`/`atol`
    (`atol` may be an array broadcast against `value`), with at most `max_mismatch` (a
    fraction) of the elements outside."""

    value: np.ndarray
    index: object = Ellipsis
    rtol: float = 0.0
    atol: object = 0.0
    max_mismatch: float = 0.0

    def problem(self, got: np.ndarray) -> str | None:
        got = np.asarray(got)[self.index]
        want = np.asarray(self.value)
        if want.dtype.names:  # records: compare their f32 fields
            got, want = _fields(got), _fields(want)
        if got.shape != want.shape:
            return f"shape {got.shape}, expected {want.shape}"
        bad = ~np.isclose(got, want, rtol=self.rtol, atol=self.atol)
        if bad.mean() <= self.max_mismatch:
            return None
        where = np.argwhere(bad)[0]
        at = tuple(int(i) for i in where)
        return (
            f"{int(bad.sum())} of {bad.size} elements differ; first at {at}: "
            f"{got[tuple(where)]!r}, expected {want[tuple(where)]!r}"
        )


def _fields(records: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(records).view(np.float32).reshape(records.shape + (-1,))


@dataclass
class Peer:
    """One benchmark entry (see the module doc)."""

    name: str
    size: str  # the problem size in words
    make: Callable  # rng -> (arrays: {name: numpy array}, params: {name: value})
    steps: Callable  # (arrays, params) -> [Launch | Copy]: one call on the tx side
    reference: Callable  # (arrays, params) -> {output name: Expect}
    numba: str  # peer_numba.run_<numba>(device arrays, params) is one call
    # name -> the attribute of peer_numba with the dtype Numba views that array as
    numba_dtypes: dict = field(default_factory=dict)
    note: str = ""
    earlier: float | None = None  # tx/Numba measured earlier with ad-hoc code (issue 26)


def pow2(n: float, minimum: int = 2 * pk.BLOCK) -> int:
    """The power of two nearest `n` (at least `minimum`)."""
    return max(minimum, 1 << max(0, round(math.log2(max(n, 1)))))


def side(n: float, multiple: int = 32, minimum: int = 64) -> int:
    """`n` rounded to a multiple of `multiple` (at least `minimum`)."""
    return max(minimum, int(round(n / multiple)) * multiple)


# -- the sixteen entries ---------------------------------------------------------------


def peers(scale: float) -> list:
    """The entries at `scale` (1: the sizes for an H200, each launch ~0.1 ms or more)."""
    s = scale
    f32 = np.float32
    entries = []

    # 1. saxpy
    n1 = pow2(2**28 * s)
    entries.append(
        Peer(
            "saxpy",
            f"2^{n1.bit_length() - 1}",
            lambda rng, n=n1: (
                {
                    "x": rng.random(n, f32),
                    "y": rng.random(n, f32),
                    "out": np.zeros(n, f32),
                },
                {"a": f32(2.0)},
            ),
            lambda a, p: [Launch(pk.saxpy, (p["a"], "x", "y", "out"), threads=len(a["out"]))],
            lambda a, p: {"out": Expect(p["a"] * a["x"] + a["y"], rtol=1e-6, atol=1e-6)},
            "saxpy",
            earlier=0.93,
        )
    )

    # 2. Jacobi 5-point stencil
    n2 = side(8192 * s**0.5)

    def jacobi_reference(a, p):
        u = a["u"].astype(np.float64)
        want = u.copy()
        want[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        return {"u_new": Expect(want, rtol=1e-5, atol=1e-6)}

    entries.append(
        Peer(
            "jacobi",
            f"{n2}^2",
            lambda rng, n=n2: ({"u": rng.random((n, n), f32), "u_new": np.zeros((n, n), f32)}, {}),
            lambda a, p: [Launch(pk.jacobi, ("u", "u_new"), threads=a["u"].shape[::-1])],
            jacobi_reference,
            "jacobi",
            earlier=0.90,
        )
    )

    # 3. histogram
    n3 = pow2(2**28 * s)
    groups = min(1024, n3 // pk.BLOCK)
    entries.append(
        Peer(
            "histogram",
            f"2^{n3.bit_length() - 1}, {pk.BINS} bins",
            lambda rng, n=n3: (
                {
                    "data": rng.integers(0, pk.BINS, n, dtype=np.uint32),
                    "bins": np.zeros(pk.BINS, np.uint32),
                },
                {"groups": groups},
            ),
            lambda a, p: [Launch(pk.histogram, ("data", "bins"), workgroups=(p["groups"], 1, 1))],
            lambda a, p: {
                "bins": Expect(np.bincount(a["data"], minlength=pk.BINS).astype(np.uint32))
            },
            "histogram",
            note=f"grid-stride loop over {groups} workgroups",
            earlier=0.85,
        )
    )
    entries.append(
        Peer(
            "histogram_for",
            f"2^{n3.bit_length() - 1}, {pk.BINS} bins",
            entries[-1].make,
            lambda a, p: [
                Launch(pk.histogram_for, ("data", "bins"), workgroups=(p["groups"], 1, 1))
            ],
            entries[-1].reference,
            "histogram_for",
            note="the grid-stride loop as a range() with a runtime step (both sides)",
        )
    )

    # 4. Mandelbrot
    n4 = side(4096 * s**0.5)
    mandelbrot_params = {
        "x0": f32(-2.0),
        "y0": f32(-1.25),
        "step": f32(2.5 / n4),
        "max_iterations": np.uint32(256),
    }

    def mandelbrot_reference(a, p):
        # numpy needs ~25 s for every row at 4096^2: every 64th row (at most 64 rows)
        rows = np.arange(0, n4, max(1, n4 // 64))
        cr = p["x0"] + np.arange(n4, dtype=f32) * p["step"]
        ci = p["y0"] + rows.astype(f32) * p["step"]
        cr, ci = np.broadcast_to(cr, (len(rows), n4)), np.broadcast_to(ci[:, None], (len(rows), n4))
        zr, zi = np.zeros_like(cr), np.zeros_like(cr)
        counts = np.zeros(cr.shape, np.uint32)
        for _ in range(int(p["max_iterations"])):
            going = zr * zr + zi * zi <= f32(4.0)
            if not going.any():
                break
            counts += going
            zr, zi = (
                np.where(going, zr * zr - zi * zi + cr, zr),
                np.where(going, f32(2.0) * zr * zi + ci, zi),
            )
        # f32 orbits near the set's edge depend on rounding (and on FMA contraction)
        return {"counts": Expect(counts, index=rows, max_mismatch=0.02)}

    entries.append(
        Peer(
            "mandelbrot",
            f"{n4}^2, 256 iterations",
            lambda rng, n=n4: ({"counts": np.zeros((n, n), np.uint32)}, dict(mandelbrot_params)),
            lambda a, p: [
                Launch(
                    pk.mandelbrot,
                    (p["x0"], p["y0"], p["step"], p["max_iterations"], "counts"),
                    threads=a["counts"].shape[::-1],
                )
            ],
            mandelbrot_reference,
            "mandelbrot",
            note="checked on every 64th row (at most 64 rows); <= 2% of the counts may differ",
            earlier=0.76,
        )
    )

    # 5. transpose
    n5 = side(8192 * s**0.5)
    entries.append(
        Peer(
            "transpose",
            f"{n5}^2",
            lambda rng, n=n5: ({"src": rng.random((n, n), f32), "dst": np.zeros((n, n), f32)}, {}),
            lambda a, p: [
                Launch(
                    pk.transpose,
                    ("src", "dst"),
                    workgroups=(
                        -(-a["src"].shape[1] // pk.TILE_DIM),
                        -(-a["src"].shape[0] // pk.TILE_DIM),
                        1,
                    ),
                )
            ],
            lambda a, p: {"dst": Expect(a["src"].T)},
            "transpose",
            earlier=0.61,
        )
    )

    # 6. tree reduction + one atomic per workgroup
    n6 = pow2(2**28 * s)
    entries.append(
        Peer(
            "block_sum",
            f"2^{n6.bit_length() - 1}",
            lambda rng, n=n6: ({"x": rng.random(n, f32), "total": np.zeros(1, f32)}, {}),
            lambda a, p: [Launch(pk.block_sum, ("x", "total"), threads=len(a["x"]))],
            lambda a, p: {"total": Expect(np.array([a["x"].sum(dtype=np.float64)]), rtol=1e-3)},
            "block_sum",
            note="f32 atomic adds in any order: within 1e-3 of the f64 sum; native: our SPIR-V"
            " adds f32 atomically by a compare-exchange loop (no float atomics in it)",
            earlier=0.56,
        )
    )

    # 7. tiled matmul (Numba's documented fast_matmul)
    n7 = side(2048 * s ** (1 / 3), multiple=pk.TPB, minimum=32)
    entries.append(
        Peer(
            "fast_matmul",
            f"{n7}^3",
            lambda rng, n=n7: (
                {
                    "A": rng.random((n, n), f32),
                    "B": rng.random((n, n), f32),
                    "C": np.zeros((n, n), f32),
                },
                {},
            ),
            lambda a, p: [Launch(pk.fast_matmul, ("A", "B", "C"), threads=a["C"].shape[::-1])],
            lambda a, p: {
                "C": Expect(
                    a["A"].astype(np.float64) @ a["B"].astype(np.float64),
                    rtol=1e-4,
                    atol=1e-4,
                )
            },
            "fast_matmul",
            note=f"{pk.TPB}x{pk.TPB} tiles",
            earlier=0.34,
        )
    )

    # 8. all-pairs n-body
    n8 = side(16384 * s**0.5, multiple=pk.BLOCK, minimum=pk.BLOCK)

    def make_bodies(rng, n=n8):
        bodies = np.empty((n, 4), f32)
        bodies[:, :3] = rng.standard_normal((n, 3), f32)
        bodies[:, 3] = rng.uniform(0.5, 1.5, n).astype(f32) / n  # masses
        return {"bodies": bodies, "accelerations": np.zeros((n, 4), f32)}, {"softening": f32(0.05)}

    def nbody_reference(a, p):
        # all 16384^2 pairs in numpy take long: 256 bodies against all
        bodies = a["bodies"].astype(np.float64)
        which = np.linspace(0, len(bodies) - 1, min(256, len(bodies))).astype(int)
        d = bodies[None, :, :3] - bodies[which, None, :3]
        r2 = (d * d).sum(-1) + float(p["softening"]) ** 2
        terms = d * (bodies[None, :, 3] / (r2 * np.sqrt(r2)))[..., None]
        want = np.zeros((len(which), 4))
        want[:, :3] = terms.sum(1)
        # f32 sums of n terms: errors relative to the sum of the terms' sizes
        scale = np.abs(terms).sum(1).max(1)[:, None]
        return {"accelerations": Expect(want, index=which, atol=1e-4 * scale)}

    entries.append(
        Peer(
            "nbody",
            f"{n8} bodies",
            make_bodies,
            lambda a, p: [
                Launch(
                    pk.nbody_accelerations,
                    ("bodies", "accelerations", p["softening"]),
                    threads=len(a["bodies"]),
                )
            ],
            nbody_reference,
            "nbody",
            note="checked on 256 bodies (against all)",
            earlier=1.94,
        )
    )

    # 9. softmax per row
    rows9, cols9 = side(16384 * s**0.5, 16, 16), side(4096 * s**0.5, pk.BLOCK, pk.BLOCK)

    def softmax_reference(a, p):
        x = a["x"].astype(np.float64)
        e = np.exp(x - x.max(1, keepdims=True))
        return {"out": Expect(e / e.sum(1, keepdims=True), rtol=1e-4, atol=1e-9)}

    entries.append(
        Peer(
            "softmax",
            f"{rows9}x{cols9}",
            lambda rng, r=rows9, c=cols9: (
                {"x": rng.standard_normal((r, c), f32) * 4, "out": np.zeros((r, c), f32)},
                {},
            ),
            lambda a, p: [Launch(pk.softmax, ("x", "out"), workgroups=(a["x"].shape[0], 1, 1))],
            softmax_reference,
            "softmax",
            note="tx: stdlib.workgroup_reduce; Numba: shared-memory trees",
        )
    )

    # 10. 1-D convolution
    n10 = pow2(2**27 * s)
    taps = 2 * pk.RADIUS + 1

    def convolve_reference(a, p):
        x, w = a["x"].astype(np.float64), a["weights"].astype(np.float64)
        padded = np.pad(x, pk.RADIUS)
        want = sum(w[k] * padded[k : k + len(x)] for k in range(taps))
        return {"out": Expect(want, rtol=1e-5, atol=1e-6)}

    entries.append(
        Peer(
            "convolve",
            f"2^{n10.bit_length() - 1}, {taps} taps",
            lambda rng, n=n10: (
                {
                    "x": rng.random(n, f32),
                    "weights": rng.random(taps, f32),
                    "out": np.zeros(n, f32),
                },
                {},
            ),
            lambda a, p: [Launch(pk.convolve, ("x", "weights", "out"), threads=len(a["x"]))],
            convolve_reference,
            "convolve",
        )
    )

    # 11. SpMV CSR
    rows11 = pow2(2**22 * s, minimum=pk.BLOCK)

    def make_csr(rng, n=rows11):
        per_row = rng.integers(8, 25, n)  # 8..24 entries a row, 16 on average
        indptr = np.zeros(n + 1, np.int32)
        np.cumsum(per_row, out=indptr[1:])
        nnz = int(indptr[-1])
        arrays = {
            "indptr": indptr,
            "indices": rng.integers(0, n, nnz, dtype=np.int32),
            "data": rng.random(nnz, f32),
            "x": rng.random(n, f32),
            "y": np.zeros(n, f32),
        }
        return arrays, {}

    def spmv_reference(a, p):
        products = a["data"].astype(np.float64) * a["x"][a["indices"]]
        return {"y": Expect(np.add.reduceat(products, a["indptr"][:-1]), rtol=1e-5, atol=1e-6)}

    entries.append(
        Peer(
            "spmv_csr",
            f"2^{rows11.bit_length() - 1} rows, 16 nnz/row",
            make_csr,
            lambda a, p: [
                Launch(pk.spmv_csr, ("indptr", "indices", "data", "x", "y"), threads=len(a["y"]))
            ],
            spmv_reference,
            "spmv",
        )
    )

    # 12. bitonic sort, one launch per step
    n12 = pow2(2**24 * s)
    log_n = n12.bit_length() - 1

    def bitonic_steps(a, p):
        n = len(a["keys"])
        steps = [Copy("source", "keys")]
        k = 2
        while k <= n:
            j = k // 2
            while j > 0:
                steps.append(Launch(pk.bitonic_step, ("keys", j, k), threads=n))
                j //= 2
            k *= 2
        return steps

    entries.append(
        Peer(
            "bitonic_sort",
            f"2^{log_n} keys, {log_n * (log_n + 1) // 2} launches",
            lambda rng, n=n12: (
                {
                    "source": rng.integers(0, 2**32, n, dtype=np.uint32),
                    "keys": np.zeros(n, np.uint32),
                },
                {},
            ),
            bitonic_steps,
            lambda a, p: {"keys": Expect(np.sort(a["source"]))},
            "bitonic",
            note="a call: copy the unsorted keys in, then every step",
        )
    )

    # 13. separable blur
    n13 = side(8192 * s**0.5)
    blur_taps = 2 * pk.BLUR_RADIUS + 1

    def blur_reference(a, p):
        image, w = a["image"].astype(np.float64), a["weights"].astype(np.float64)
        r = pk.BLUR_RADIUS
        for axis in (1, 0):
            pad = [(0, 0), (0, 0)]
            pad[axis] = (r, r)
            padded = np.pad(image, pad, mode="edge")
            size = image.shape[axis]
            image = sum(
                w[k] * np.take(padded, np.arange(k, k + size), axis=axis) for k in range(blur_taps)
            )
        return {"blurred": Expect(image, rtol=1e-5, atol=1e-6)}

    entries.append(
        Peer(
            "blur",
            f"{n13}^2, {blur_taps} taps, 2 passes",
            lambda rng, n=n13: (
                {
                    "image": rng.random((n, n), f32),
                    "weights": (np.ones(blur_taps) / blur_taps).astype(f32),
                    "across": np.zeros((n, n), f32),
                    "blurred": np.zeros((n, n), f32),
                },
                {},
            ),
            lambda a, p: [
                Launch(
                    pk.blur_rows, ("image", "weights", "across"), threads=a["image"].shape[::-1]
                ),
                Launch(
                    pk.blur_columns,
                    ("across", "weights", "blurred"),
                    threads=a["image"].shape[::-1],
                ),
            ],
            blur_reference,
            "blur",
        )
    )

    # 14. workgroup inclusive scan
    n14 = pow2(2**27 * s)
    entries.append(
        Peer(
            "block_scan",
            f"2^{n14.bit_length() - 1}",
            lambda rng, n=n14: (
                {"x": rng.integers(0, 10, n).astype(f32), "out": np.zeros(n, f32)},
                {},
            ),
            lambda a, p: [Launch(pk.block_scan, ("x", "out"), threads=len(a["x"]))],
            lambda a, p: {
                "out": Expect(a["x"].reshape(-1, pk.BLOCK).cumsum(1, dtype=f32).reshape(-1))
            },
            "block_scan",
            note="tx: stdlib.workgroup_inclusive_scan; Numba: Hillis-Steele in shared memory",
        )
    )

    # 15. particles (array of structs)
    n15 = pow2(2**24 * s)
    particle_params = {"gravity": (f32(0.0), f32(-9.81), f32(0.0)), "dt": f32(0.01)}

    def make_particles(rng, n=n15):
        particles = np.zeros(n, pk.Particle.dtype)
        particles["position"] = rng.random((n, 3), f32)
        particles["velocity"] = rng.standard_normal((n, 3), f32)
        particles["mass"] = rng.uniform(0.5, 2.0, n).astype(f32)
        return {"particles": particles}, dict(particle_params)

    def particles_reference(a, p):
        want = a["particles"].copy()
        g, dt = np.array(p["gravity"], f32), p["dt"]
        want["velocity"] += g * dt
        want["position"] += want["velocity"] * dt
        below = want["position"][:, 1] < 0
        want["position"][below, 1] *= -1
        want["velocity"][below, 1] *= f32(-0.5)
        want["age"] += dt
        return {"particles": Expect(want, rtol=1e-5, atol=1e-6)}

    entries.append(
        Peer(
            "particles",
            f"2^{n15.bit_length() - 1} particles",
            make_particles,
            lambda a, p: [
                Launch(
                    pk.move_particles,
                    ("particles", p["gravity"], p["dt"]),
                    threads=len(a["particles"]),
                )
            ],
            particles_reference,
            "particles",
            numba_dtypes={"particles": "PARTICLE"},
            note="tx: Array[Particle]; Numba: a record array of the same 32 bytes",
        )
    )
    return entries


# -- running and checking on pyshader_tx ----------------------------------------------


def diagnostics(scale: float) -> list:
    """Variants that explain a ratio of the suite (`bench_peers.py --diagnostics`): SpMV with
    u32 indices and unrolled by hand with its loads first (the compiler's share of its
    ratio), and a chain of launches that do next to nothing, on 2^10 and 2^24 elements (what a
    launch costs by itself, the bitonic sort's 300 launches)."""
    s = scale
    entries = []
    spmv = next(p for p in peers(scale) if p.name == "spmv_csr")

    def as_u32(rng, make=spmv.make):
        arrays, params = make(rng)
        for name in ("indptr", "indices"):
            arrays[name] = arrays[name].astype(np.uint32)
        return arrays, params

    names = ("indptr", "indices", "data", "x", "y")
    entries.append(
        Peer(
            "spmv_u32",
            spmv.size,
            as_u32,
            lambda a, p: [Launch(pk.spmv_csr_u32, names, threads=len(a["y"]))],
            spmv.reference,
            "spmv_u32",
            note="indices, row pointers (and Numba's too) and the counter in u32",
        )
    )
    entries.append(
        Peer(
            "spmv_loads_first",
            spmv.size,
            spmv.make,
            lambda a, p: [Launch(pk.spmv_csr_loads_first, names, threads=len(a["y"]))],
            spmv.reference,
            "spmv_loads_first",
            note="unrolled by hand by 4 on both sides, every load of 4 trips first",
        )
    )
    for log2 in (10, max(10, round(math.log2(2**24 * s)))):
        n = 1 << log2
        entries.append(
            Peer(
                f"touch_chain_2^{log2}",
                f"2^{log2}, 300 launches",
                lambda rng, n=n: ({"x": np.zeros(n, np.uint32)}, {"launches": 300, "marker": 7}),
                lambda a, p: [
                    Launch(pk.touch, ("x", np.uint32(7)), threads=len(a["x"]))
                    for _ in range(p["launches"])
                ],
                lambda a, p: {"x": Expect(np.zeros(len(a["x"]), np.uint32))},
                "touch_chain",
                note="300 launches that read 4 bytes an invocation and write nothing",
            )
        )
    return entries


def check(expected: dict, read) -> str | None:
    """None when every output matches, else what differs (`read(name)` reads it back)."""
    problems = []
    for name, expect in expected.items():
        problem = expect.problem(read(name))
        if problem:
            problems.append(f"{name}: {problem}")
    return "; ".join(problems) or None


def tx_call(steps: list, device: dict, kernels: dict | None = None) -> Callable:
    """A function making one call of `steps` on the DeviceArrays `device` (by name), each
    kernel replaced by its entry in `kernels` where it has one."""
    kernels = kernels or {}

    def call():
        for step in steps:
            if isinstance(step, Copy):
                pool.copy(device[step.src], device[step.dst])
                continue
            kernel = kernels.get(step.kernel, step.kernel)
            args = [device[a] if isinstance(a, str) else a for a in step.args]
            kernel(*args, threads=step.threads, workgroups=step.workgroups)

    return call
