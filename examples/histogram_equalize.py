"""Contrast equalisation of a hazy grey photo: stdlib.histogram, stdlib.exclusive_scan, a lookup table.

Histogram equalisation spreads an image's grey levels so that each output level is used by
about the same number of pixels: a pixel's new value is its rank among all pixels, scaled
to 0..255. On the GPU that is three steps, each a whole-array primitive or one small kernel:

1. `tx.stdlib.histogram(pixels, 256)` counts the pixels of each grey level (per-workgroup
   counts in workgroup memory, then one atomic add per bin and workgroup);
2. `tx.stdlib.exclusive_scan(counts)` turns the counts into the cumulative distribution:
   `below[v]`, the number of pixels darker than level v (a single-pass scan);
3. the `equalize` kernel maps every pixel through a 256-entry lookup table. Each workgroup
   of 256 invocations first builds the table in workgroup memory, one entry per
   invocation (entry v is the middle of level v's ranks, `below[v] + counts[v] / 2`, as a
   fraction of all pixels), waits at a barrier, and then each invocation looks its pixel
   up there: 256 loads of the scan's result per workgroup instead of one per pixel.

The table is computed in u32 arithmetic, exactly (`rank * 255` fits in 32 bits for images
up to 4096 x 4096), so the GPU's result is checked bit for bit against numpy's `bincount`,
`cumsum` and table. The input is a procedural landscape (sky, sun, mountain ridges, a lake,
some texture) squeezed into a narrow, hazy band of grey levels; the picture shows it before
and after, with the two histograms and cumulative distributions underneath.
"""

from __future__ import annotations

import numpy as np

import _common
import pyshader_tx as tx
from pyshader_tx import Array, u32

LEVELS = 256


@tx.func
def equalized_level(count: u32, below: u32, n: u32) -> u32:
    """The output level of a grey level with `count` pixels and `below` darker ones: the
    middle of its ranks, scaled to 0..255 and rounded (exact in u32 for n <= 2**24)."""
    middle_rank = below + count // 2
    return min((middle_rank * 255 + n // 2) // n, u32(255))


@tx.kernel(workgroup_size=LEVELS)
def equalize(pixels: Array[u32], counts: Array[u32], below: Array[u32], out: Array[u32]):
    table = tx.workgroup_array(u32, LEVELS)
    level = tx.local_invocation_index()
    n = len(pixels)
    # every workgroup builds the whole lookup table: one entry per invocation
    table[level] = equalized_level(counts[level], below[level], n)
    tx.workgroup_barrier()  # the table is complete before anyone reads it
    i = tx.global_invocation_id().x
    if i < n:
        out[i] = table[pixels[i]]


def smooth_noise(rng, shape, cells: int) -> np.ndarray:
    """Value noise: a random grid of cells x cells values, bilinearly interpolated."""
    grid = rng.random((cells + 1, cells + 1))
    height, width = shape
    y = np.linspace(0, cells, height, endpoint=False)[:, None]
    x = np.linspace(0, cells, width, endpoint=False)[None, :]
    y0, x0 = y.astype(int), x.astype(int)
    fy, fx = y - y0, x - x0
    fy, fx = fy * fy * (3 - 2 * fy), fx * fx * (3 - 2 * fx)  # smoothstep between cells
    top = grid[y0, x0] * (1 - fx) + grid[y0, x0 + 1] * fx
    bottom = grid[y0 + 1, x0] * (1 - fx) + grid[y0 + 1, x0 + 1] * fx
    return top * (1 - fy) + bottom * fy


def ridge(rng, width: int, scale: float, octaves: int = 5) -> np.ndarray:
    """A mountain skyline: octaves of 1-D value noise, heights in image rows (upwards)."""
    height = np.zeros(width)
    for octave in range(octaves):
        height += smooth_noise(rng, (1, width), 3 * 2**octave)[0] / 2.1**octave
    return (height - height.mean()) * scale


def hazy_landscape(size: int, seed: int = 5) -> np.ndarray:
    """A (size, size) u8 grey landscape photo with poor contrast (levels ~ 90..170)."""
    rng = np.random.default_rng(seed)
    rows = np.arange(size)[:, None] / size
    cols = np.arange(size)[None, :] / size
    shape = (size, size)
    clouds = smooth_noise(rng, shape, 5) + 0.5 * smooth_noise(rng, shape, 11)
    image = 0.50 + 0.30 * rows + 0.10 * clouds  # sky: brighter towards the horizon
    glow = ((cols - 0.70) ** 2 + (rows - 0.24) ** 2) / 0.003
    image = image + 0.45 * np.exp(-glow) + 0.08 * np.exp(-glow / 6)  # the sun and its halo
    horizon = 0.66
    texture = smooth_noise(rng, shape, 60) + 0.6 * smooth_noise(rng, shape, 25)
    far = horizon - 0.17 - ridge(rng, size, 0.22)[None, :]
    near = horizon - 0.07 - ridge(rng, size, 0.12)[None, :]
    image = np.where(rows > far, 0.62 - 0.5 * (rows - far) + 0.05 * texture, image)
    image = np.where(rows > near, 0.30 - 0.3 * (rows - near) + 0.09 * texture, image)
    # a lake below the horizon mirrors the land and sky above it, with ripples
    mirror_row = np.clip((2 * horizon - rows[:, 0]) * size, 0, size - 1).astype(int)
    ripples = np.sin(2 * np.pi * (rows * 140 + 1.5 * smooth_noise(rng, shape, 8)))
    reflection = 0.75 * image[mirror_row] + 0.05 + 0.012 * ripples
    image = np.where(rows > horizon, reflection, image)
    image = image + 0.008 * rng.standard_normal(shape)  # sensor noise
    hazy = 60 + 110 * np.clip(image, 0, 1)  # the haze: only a narrow band of levels
    return hazy.round().astype(np.uint8)


def reference(image: np.ndarray):
    """numpy's counts, exclusive cumulative counts and equalised image."""
    n = image.size
    counts = np.bincount(image.ravel(), minlength=LEVELS).astype(np.uint64)
    below = np.cumsum(counts) - counts
    table = np.minimum(((below + counts // 2) * 255 + n // 2) // n, 255)
    return counts, below, table[image].astype(np.uint8)


def main(argv=None):
    cli = _common.parser(__doc__, size=512, size_help="image side in pixels")
    args = cli.parse_args(argv)
    out_dir = _common.setup(args)
    if not 1 <= args.size <= 4096:
        raise ValueError(
            "--size must be 1..4096 (the u32 lookup table is exact up to 2**24 pixels)"
        )

    image = hazy_landscape(args.size)
    pixels = tx.to_device(image.ravel().astype(np.uint32))
    equalized = tx.empty(image.size, np.uint32)
    results = {}

    def run():
        counts = tx.stdlib.histogram(pixels, LEVELS)
        below = tx.stdlib.exclusive_scan(counts)
        equalize(pixels, counts, below, equalized, threads=image.size)
        results.update(counts=counts, below=below)

    seconds = _common.gpu_seconds(run, reps=3)
    counts, below = results["counts"].numpy(), results["below"].numpy()
    after = equalized.numpy().reshape(image.shape).astype(np.uint8)

    expected_counts, expected_below, expected_after = reference(image)
    _common.check_close("histogram", counts, expected_counts)
    _common.check_close("exclusive_scan", below, expected_below)
    _common.check_close("equalised image", after, expected_after)

    picture = out_dir / "histogram_equalize.png"
    draw(image, after, picture)
    _common.report("histogram_equalize", f"{args.size}x{args.size} pixels", seconds, [picture])
    return [picture]


def draw(before: np.ndarray, after: np.ndarray, path) -> None:
    """Before and after side by side, each with its histogram and cumulative distribution."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    background, ink, accent = "#14161c", "#d8dce6", "#f0a040"
    figure, axes = plt.subplots(
        2,
        2,
        figsize=(10, 6.8),
        gridspec_kw={"height_ratios": [4, 1.3]},
        facecolor=background,
    )
    for column, (title, image) in enumerate((("before", before), ("after equalisation", after))):
        top, bottom = axes[0, column], axes[1, column]
        top.imshow(image, cmap="gray", vmin=0, vmax=255, interpolation="antialiased")
        top.set_title(title, color=ink, fontsize=12)
        top.set_axis_off()
        counts = np.bincount(image.ravel(), minlength=LEVELS)
        bottom.set_facecolor(background)
        bottom.bar(np.arange(LEVELS), counts, width=1.0, color="#7aa2d6", linewidth=0)
        bottom.set_xlim(0, LEVELS - 1)
        bottom.set_ylim(0, counts.max() * 1.05)
        bottom.set_yticks([])
        bottom.tick_params(colors=ink, labelsize=8)
        for side in ("top", "right", "left"):
            bottom.spines[side].set_visible(False)
        bottom.spines["bottom"].set_color(ink)
        cdf = bottom.twinx()
        cdf.plot(np.cumsum(counts) / image.size, color=accent, linewidth=1.6)
        cdf.set_ylim(0, 1.05)
        cdf.set_axis_off()
    axes[1, 0].set_ylabel("pixels per level", color=ink, fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=80, facecolor=background)
    plt.close(figure)


if __name__ == "__main__":
    main()
