"""Neighbour search on sorted particles: stdlib.sort bins them into grid cells, then an SPH density.

Finding each particle's neighbours by testing all pairs costs n**2. The usual GPU answer is
a uniform grid whose cells are as wide as the search radius h, built by sorting:

1. `cell_keys` gives every particle the key of its cell. The key is the cell's Morton
   (Z-order) code, its x and y bits interleaved, so that cells near each other in space are
   mostly near each other in the key order too;
2. `tx.stdlib.sort(keys, values=indices)` sorts the (key, particle index) pairs: a radix
   sort, stable, so the particles of one cell stay in their original order;
   `tx.stdlib.gather` then copies the positions into the sorted order, so the particles of
   one cell lie side by side in memory;
3. `cell_ranges` looks at each pair of neighbours in the sorted keys: where the key changes,
   one cell ends and the next begins, so `start[key]` and `end[key]` are written by the
   one invocation that sees the boundary (no atomics; empty cells keep start = end = 0);
4. `sph_density` visits, for each particle, the 3 x 3 cells around its own and runs over
   `start..end` of each, adding the 2-D poly6 kernel `4 / (pi h^2) (1 - r^2/h^2)^3` of
   every particle closer than h (itself included). Particles are processed in sorted order,
   so the invocations of one workgroup read the same few cells: their loads hit the cache.
   `tx.stdlib.scatter` puts the densities back in the particles' original order.

The particles form a spiral galaxy with a few satellite clusters. The check runs the
brute-force search in numpy (all pairs) and compares the densities; it also checks the sort
against `np.argsort(kind="stable")` and the cell ranges against `np.searchsorted`. The
picture shows the particles coloured by their place in the sorted order (the Z-order curve
through the cells) and by their SPH density.
"""

from __future__ import annotations

import math

import numpy as np

import _common
import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32, vec2f, vec2u


@tx.func
def spread_bits(v: u32) -> u32:
    """The 16 low bits of v moved to the even bit positions (0, 2, 4, ...)."""
    v = (v | (v << 8)) & 0x00FF00FF
    v = (v | (v << 4)) & 0x0F0F0F0F
    v = (v | (v << 2)) & 0x33333333
    return (v | (v << 1)) & 0x55555555


@tx.func
def morton(cx: u32, cy: u32) -> u32:
    """The Z-order key of cell (cx, cy): x bits at even positions, y bits at odd ones."""
    return spread_bits(cx) | (spread_bits(cy) << 1)


@tx.func
def cell_of(p: vec2f, cells: u32) -> vec2u:
    """The grid cell of a position in the unit square (clamped to the grid)."""
    c = tx.clamp(tx.vec2i(tx.floor(p * f32(cells))), tx.vec2i(0), tx.vec2i(i32(cells) - 1))
    return tx.vec2u(c)


@tx.kernel(workgroup_size=64)
def cell_keys(positions: Array[vec2f], cells: u32, keys: Array[u32], indices: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(positions):
        c = cell_of(positions[i], cells)
        keys[i] = morton(c.x, c.y)
        indices[i] = i  # the values sorted with the keys


@tx.kernel(workgroup_size=64)
def cell_ranges(keys: Array[u32], start: Array[u32], end: Array[u32]):
    """Where the sorted keys change, a cell ends and the next begins."""
    i = tx.global_invocation_id().x
    n = len(keys)
    if i < n:
        key = keys[i]
        if i == 0 or keys[i - 1] != key:
            start[key] = i
        if i == n - 1 or keys[i + 1] != key:
            end[key] = i + 1


@tx.kernel(workgroup_size=64)
def sph_density(
    positions: Array[vec2f],
    start: Array[u32],
    end: Array[u32],
    cells: u32,
    h: f32,
    mass: f32,
    density: Array[f32],
):
    """The density at each (sorted) particle: the poly6 kernel summed over the particles of
    the 3 x 3 cells around it."""
    i = tx.global_invocation_id().x
    if i >= len(positions):
        return
    p = positions[i]
    home = tx.vec2i(cell_of(p, cells))
    last = i32(cells) - 1
    inverse_h2 = 1.0 / (h * h)
    total = 0.0
    for cy in range(max(home.y - 1, 0), min(home.y + 1, last) + 1):
        for cx in range(max(home.x - 1, 0), min(home.x + 1, last) + 1):
            key = morton(u32(cx), u32(cy))
            for j in range(start[key], end[key]):  # the particles of that cell
                offset = positions[j] - p
                q = tx.dot(offset, offset) * inverse_h2
                if q < 1.0:
                    w = 1.0 - q
                    total += w * w * w
    density[i] = total * mass * inverse_h2 * (4.0 / math.pi)


def galaxy(n: int, seed: int = 11) -> np.ndarray:
    """(n, 2) f32 positions in the unit square: two spiral arms, a bulge, a few clusters."""
    rng = np.random.default_rng(seed)
    kinds = rng.choice(3, size=n, p=[0.62, 0.22, 0.16])
    positions = np.empty((n, 2))
    arm = kinds == 0
    t = rng.random(arm.sum()) ** 0.7
    angle = 4.2 * t + np.pi * rng.integers(0, 2, arm.sum())
    radius = 0.04 + 0.36 * t
    scatter = rng.normal(0, 1, (arm.sum(), 2)) * (0.012 + 0.03 * t)[:, None]
    positions[arm] = 0.5 + radius[:, None] * np.stack([np.cos(angle), np.sin(angle)], 1) + scatter
    bulge = kinds == 1
    positions[bulge] = 0.5 + rng.normal(0, 0.045, (bulge.sum(), 2))
    clusters = kinds == 2
    centres = rng.uniform(0.12, 0.88, (6, 2))
    which = rng.integers(0, len(centres), clusters.sum())
    positions[clusters] = centres[which] + rng.normal(0, 0.018, (clusters.sum(), 2))
    return np.clip(positions, 0.0, np.nextafter(1.0, 0.0)).astype(np.float32)


def morton_numpy(cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
    def spread(v):
        v = v.astype(np.uint32)
        for shift, mask in ((8, 0x00FF00FF), (4, 0x0F0F0F0F), (2, 0x33333333), (1, 0x55555555)):
            v = (v | (v << shift)) & mask
        return v

    return spread(cx) | (spread(cy) << 1)


def brute_force_density(positions: np.ndarray, h: float, mass: float):
    """Every pair tested (in blocks of rows, in float64): the densities and the mean number
    of neighbours closer than h."""
    p = positions.astype(np.float64)
    density = np.empty(len(p))
    neighbours = 0
    for first in range(0, len(p), 512):
        block = p[first : first + 512]
        q = ((block[:, None, :] - p[None, :, :]) ** 2).sum(-1) / (h * h)
        density[first : first + 512] = (np.clip(1.0 - q, 0.0, None) ** 3).sum(1)
        neighbours += np.count_nonzero(q < 1.0) - len(block)
    return density * mass * 4.0 / (math.pi * h * h), neighbours / len(p)


def main(argv=None):
    cli = _common.parser(__doc__, size=8192, size_help="number of particles")
    cli.add_argument("--cells", type=int, default=64, help="grid cells per side (power of 2)")
    args = cli.parse_args(argv)
    out_dir = _common.setup(args)
    cells = args.cells
    if cells < 1 or cells & (cells - 1) or cells > 1 << 16:
        raise ValueError(f"--cells must be a power of 2 up to 65536, not {cells}")
    n, h = args.size, 1.0 / cells
    mass = 1.0 / n  # the mean density over the unit square is 1

    positions = galaxy(n)
    device_positions = tx.to_device(positions)
    keys = tx.empty(n, np.uint32)
    indices = tx.empty(n, np.uint32)
    start = tx.empty(cells * cells, np.uint32)
    end = tx.empty(cells * cells, np.uint32)
    sorted_density = tx.empty(n, np.float32)
    density = tx.empty(n, np.float32)
    results = {}

    def run():
        cell_keys(device_positions, cells, keys, indices, threads=n)
        sorted_keys, order = tx.stdlib.sort(keys, values=indices)
        sorted_positions = tx.stdlib.gather(device_positions, order)
        start.write(np.zeros(cells * cells, np.uint32))  # empty cells: start = end = 0
        end.write(np.zeros(cells * cells, np.uint32))
        cell_ranges(sorted_keys, start, end, threads=n)
        sph_density(sorted_positions, start, end, cells, h, mass, sorted_density, threads=n)
        tx.stdlib.scatter(sorted_density, order, density)  # back to the original order
        results.update(keys=sorted_keys, order=order)

    seconds = _common.gpu_seconds(run, reps=3)
    got_keys, got_order = results["keys"].numpy(), results["order"].numpy()

    # numpy: the same keys and sort, the ranges, and the densities by brute force
    cell = np.clip(np.floor(positions * np.float32(cells)).astype(np.int64), 0, cells - 1)
    expected_keys = morton_numpy(cell[:, 0], cell[:, 1])
    expected_order = np.argsort(expected_keys, kind="stable")
    _common.check_close("sorted cell keys", got_keys, expected_keys[expected_order])
    _common.check_close("particle order", got_order, expected_order)
    all_keys = np.arange(cells * cells)
    first = np.searchsorted(expected_keys[expected_order], all_keys, "left")
    last = np.searchsorted(expected_keys[expected_order], all_keys, "right")
    occupied = last > first
    _common.check_close("cell starts", start.numpy()[occupied], first[occupied])
    _common.check_close("cell ends", end.numpy()[occupied], last[occupied])
    got_density = density.numpy()
    expected_density, neighbours = brute_force_density(positions, h, mass)
    _common.check_close(
        "SPH density", got_density, expected_density, rtol=1e-4, atol=1e-4 * expected_density.max()
    )

    picture = out_dir / "particles_sort.png"
    draw(positions, got_order, got_density, cells, picture)
    _common.report(
        "particles_sort",
        f"{n} particles, {cells}x{cells} cells",
        seconds,
        [picture],
        f"sort + ranges + density; {neighbours:.1f} neighbours a particle on average",
    )
    return [picture]


def draw(positions, order, density, cells, path) -> None:
    """Left: the particles coloured by their place in the sorted order, over the grid.
    Right: coloured by SPH density (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.colors
    import matplotlib.pyplot as plt

    background, ink = "#07080d", "#d8dce6"
    figure, axes = plt.subplots(1, 2, figsize=(12, 6.3), facecolor=background)
    rank = np.empty(len(order))
    rank[order] = np.arange(len(order)) / max(len(order) - 1, 1)
    dot = max(0.5, min(8.0, 16000 / len(positions)))
    panels = (
        (
            "sorted by cell (Z-order key): colour = place in the order",
            rank,
            "turbo",
            None,
        ),
        (
            "SPH density from the 3 x 3 neighbour cells",
            density,
            "inferno",
            matplotlib.colors.LogNorm(vmin=max(density.min(), 1e-3), vmax=density.max()),
        ),
    )
    for axis, (title, values, colours, norm) in zip(axes, panels):
        axis.set_facecolor(background)
        draw_order = np.argsort(values)  # the brightest on top
        axis.scatter(
            positions[draw_order, 0],
            positions[draw_order, 1],
            c=values[draw_order],
            s=dot,
            cmap=colours,
            norm=norm,
            linewidths=0,
        )
        axis.set_xlim(0, 1)
        axis.set_ylim(1, 0)
        axis.set_aspect("equal")
        axis.set_xticks([])
        axis.set_yticks([])
        for spine in axis.spines.values():
            spine.set_color("#30343e")
        axis.set_title(title, color=ink, fontsize=11)
    if cells <= 64:  # the grid, faintly, under the sorted particles
        for k in range(1, cells):
            axes[0].axhline(k / cells, color="#ffffff", alpha=0.05, linewidth=0.5, zorder=0)
            axes[0].axvline(k / cells, color="#ffffff", alpha=0.05, linewidth=0.5, zorder=0)
    figure.tight_layout()
    figure.savefig(path, dpi=80, facecolor=background)
    plt.close(figure)


if __name__ == "__main__":
    main()
