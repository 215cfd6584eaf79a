"""Tile binning (piet-metal style): thousands of shapes binned into 16x16-pixel tiles with subgroup ballots, then each tile rasterised from its own list.

A 2-D renderer on the GPU cannot let every pixel look at every shape: a 512x512 picture of
2000 shapes would be half a billion coverage tests. Raph Levien's piet-metal (and the
"binning" stage of its successors piet-gpu and Vello) splits the picture into 16x16-pixel
tiles, first works out which shapes touch which tile ("binning"), then rasterises every
tile from its own short list. This example renders a scene of filled circles and thick
line segments (capsules: a circle is a segment of length zero), painted in order with
anti-aliased edges, in two kernels:

Stage 1, `bin_shapes`: invocation (shape s, tile row r) tests one shape against a row of
tiles: the shape's bounding box (its extent plus a pixel for the anti-aliased fringe)
against each tile's square. A subgroup of S lanes holds S consecutive shapes; the row's
tiles are taken S at a time, and for tile k of such a run every lane asks "does my shape
touch tile k?" and `tx.subgroup_ballot` collects the S answers into one bitmask (bit l is
lane l's shape). Lane k keeps the k-th ballot: after S ballots the S x S bit matrix
(shapes x tiles) has been transposed across the subgroup, and each lane holds the mask of
the subgroup's shapes that touch *its* tile, without any memory traffic. Each lane then
ORs its mask into the tile's list. The mask width follows the subgroup size: a ballot is a
vec4u of up to 128 bits; with S = 32 (NVIDIA) a mask is one word, with S = 64 (AMD) two,
with S = 8 (lavapipe) a quarter of one. A tile's list is kept as words of 32 shapes each
(`bins[tile, w]` bit b: shape 32 w + b touches the tile), so the layout is the same for
every S: a ballot of S >= 32 lanes fills S / 32 whole words, and 32 / S subgroups of S < 32
lanes share a word, which they combine with `tx.atomic_or` (empty masks write nothing).
Every ballot sits in uniform control flow: lanes past the last shape take part with
"no hit".

Stage 2, `paint_tiles`: a workgroup of 16x16 invocations per tile, one pixel each. The
whole workgroup walks the tile's words in order and the set bits of each word from the
lowest (`first_trailing_bit`), so shapes come in scene order: the painter's algorithm.
Each pixel blends the shape's colour over what it has with the shape's alpha times its
coverage, `clamp(0.5 - d, 0, 1)` for the signed distance d from the pixel centre to the
shape's edge (a one-pixel anti-aliasing ramp). All invocations read the same word and the
same shape at the same time, so the loads are broadcasts, and a tile that no shape
touches costs one pass over zero words.

The example checks both stages against numpy: the bins against a numpy binning of the
same bounding boxes (bit for bit), and the picture against a numpy rasteriser that paints
every shape over the whole picture with the same coverage rule (it never looks at bins).
The picture shows the scene and, beside it, the number of shapes binned into each tile.
"""

from __future__ import annotations

import pathlib

import numpy as np

import _common
import pyshader_tx as tx
from pyshader_tx import Array, Array2D, Atomic, f32, u32, vec2f, vec3f, vec4f

TILE = 16  # pixels per tile side
#: Invocations per workgroup of stage 1: a multiple of every subgroup size (1..128), so
#: subgroups are whole.
BIN_WORKGROUP = 128
#: What a shape's bounding box adds to its extent: its coverage is zero beyond half a
#: pixel, and the other half pixel keeps the boxes conservative under rounding.
FRINGE = 1.0
TOP = (0.035, 0.045, 0.11)  # background at the top of the picture
BOTTOM = (0.13, 0.06, 0.16)  # ... and at the bottom


@tx.struct
class Shape:
    """A capsule: the points within `radius` of the segment a-b (a circle where a == b),
    painted with `color.rgb` at opacity `color.a`."""

    color: vec4f
    a: vec2f
    b: vec2f
    radius: f32


@tx.func
def bounding_box(shape: Shape) -> vec4f:
    """(min x, min y, max x, max y) of the shape's pixels with any coverage."""
    grow = shape.radius + FRINGE
    low = tx.min(shape.a, shape.b) - vec2f(grow)
    high = tx.max(shape.a, shape.b) + vec2f(grow)
    return vec4f(low, high)


@tx.func
def coverage(p: vec2f, shape: Shape) -> f32:
    """How much of the pixel centred at p the shape covers: 1 inside, 0 outside, a linear
    ramp one pixel wide across the edge (the signed distance to the edge, clamped)."""
    pa = p - shape.a
    ba = shape.b - shape.a
    h = tx.clamp(tx.dot(pa, ba) / max(tx.dot(ba, ba), 1e-12), 0.0, 1.0)
    distance = tx.length(pa - ba * h) - shape.radius
    return tx.clamp(0.5 - distance, 0.0, 1.0)


@tx.kernel(workgroup_size=BIN_WORKGROUP)
def bin_shapes(shapes: Array[Shape], bins: Array2D[Atomic[u32]], tiles_x: u32):
    """Stage 1. Invocation (s, r): shape s against tile row r (workgroups (shapes/128, rows)).
    bins[tile, w] (zeroed) gets bit b set where shape 32 w + b touches the tile."""
    s = tx.global_invocation_id().x
    row = tx.workgroup_id().y
    lanes = tx.subgroup_size()
    lane = tx.subgroup_invocation_id()
    first_shape = s - lane  # the subgroup's shapes are first_shape .. first_shape + lanes - 1
    # The shape's box, and whether it spans this row at all (lanes past the end: no box).
    box = vec4f(1.0, 1.0, -1.0, -1.0)
    if s < len(shapes):
        box = bounding_box(shapes[s])
    y0 = f32(row * u32(TILE))
    in_row = box.y < y0 + f32(TILE) and box.w > y0
    start = u32(0)  # the first tile of the current run of `lanes` tiles
    while start < tiles_x:
        mine = tx.vec4u(0)  # the mask of lane k's tile (start + k)
        for k in range(lanes):
            x0 = f32((start + k) * u32(TILE))
            hit = in_row and box.x < x0 + f32(TILE) and box.z > x0
            votes = tx.subgroup_ballot(hit)  # bit l: lane l's shape touches tile start + k
            mine = tx.select(mine, votes, lane == k)
        column = start + lane
        if column < tiles_x:
            tile = row * tiles_x + column
            # The ballot's word j holds lanes 32 j .. 32 j + 31: the shapes from
            # first_shape + 32 j on, at bit first_shape % 32 of their word when lanes < 32.
            word = first_shape // u32(32)
            shift = first_shape % u32(32)
            if mine.x != u32(0):
                tx.atomic_or_(bins[tile, word], mine.x << shift)
            if mine.y != u32(0):
                tx.atomic_or_(bins[tile, word + u32(1)], mine.y)
            if mine.z != u32(0):
                tx.atomic_or_(bins[tile, word + u32(2)], mine.z)
            if mine.w != u32(0):
                tx.atomic_or_(bins[tile, word + u32(3)], mine.w)
        start += lanes


@tx.kernel(workgroup_size=(TILE, TILE))
def paint_tiles(
    shapes: Array[Shape], bins: Array2D[u32], image: Array2D[vec4f], top: vec3f, bottom: vec3f
):
    """Stage 2. One workgroup per tile, one invocation per pixel: the tile's shapes in scene
    order (its words in order, each word's bits from the lowest), blended over a vertical
    gradient from `top` to `bottom`."""
    pixel = tx.global_invocation_id().xy
    height = image.shape[0]
    width = image.shape[1]
    tiles_x = tx.num_workgroups().x
    tile = tx.workgroup_id().y * tiles_x + tx.workgroup_id().x
    p = vec2f(pixel) + vec2f(0.5)  # the pixel's centre
    color = tx.mix(top, bottom, p.y / f32(height))
    for w in range(bins.shape[1]):
        word = bins[tile, w]
        while word != u32(0):
            bit = tx.first_trailing_bit(word)
            word &= word - u32(1)  # clear the lowest set bit
            shape = shapes[w * u32(32) + bit]
            alpha = shape.color.w * coverage(p, shape)
            color = tx.mix(color, shape.color.xyz, alpha)
    if pixel.x < width and pixel.y < height:
        image[pixel.y, pixel.x] = vec4f(color, 1.0)


# ---------------------------------------------------------------------------- the scene

#: The palette the strokes are coloured from (dusk: violet, magenta, coral, amber, pale gold).
PALETTE = np.array(
    [
        [0.36, 0.22, 0.62],
        [0.72, 0.22, 0.55],
        [0.96, 0.42, 0.40],
        [0.99, 0.68, 0.30],
        [1.0, 0.90, 0.62],
    ],
    np.float32,
)


def palette(t):
    """Colours along PALETTE for t in [0, 1]."""
    t = np.clip(np.asarray(t, np.float64), 0.0, 1.0) * (len(PALETTE) - 1)
    low = np.minimum(t.astype(int), len(PALETTE) - 2)
    frac = (t - low)[..., None]
    return (PALETTE[low] * (1 - frac) + PALETTE[low + 1] * frac).astype(np.float32)


def make_scene(size: int, seed: int = 1) -> np.ndarray:
    """A size x size scene, in drawing order: soft discs (bokeh), a spiral galaxy of brush
    strokes (dense arms and core, empty corners: lists of very different lengths), then
    small bright stars. About size^2 / 150 shapes."""
    rng = np.random.default_rng(seed)
    scale = size / 512
    area = size * size
    discs, strokes, stars = max(2, area // 3000), max(8, area // 200), max(2, area // 1800)
    total = discs + strokes + stars
    shapes = np.zeros(total, Shape.dtype)

    centres = rng.uniform(0, size, (discs, 2))
    shapes["a"][:discs] = shapes["b"][:discs] = centres
    shapes["radius"][:discs] = rng.uniform(8, 36, discs) * scale
    shapes["color"][:discs, :3] = palette(rng.uniform(0.0, 0.45, discs)) * 0.8
    shapes["color"][:discs, 3] = rng.uniform(0.1, 0.25, discs)

    # Strokes along three trailing spiral arms: t = 0 at the core, 1 at the rim.
    t = rng.uniform(0, 1, strokes) ** 0.8
    arm = rng.integers(0, 3, strokes)
    angle = arm * (2 * np.pi / 3) + 4.0 * t + rng.normal(0, 0.32, strokes) * (1.1 - 0.6 * t)
    radius = (0.03 + 0.42 * t) * size + rng.normal(0, 0.012 * size, strokes)
    mid = size / 2 + radius[:, None] * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    heading = angle + np.pi / 2 + 0.45  # along the arm
    half = rng.uniform(4, 12, strokes)[:, None] * scale * (0.6 + 0.6 * t[:, None])
    direction = np.stack([np.cos(heading), np.sin(heading)], axis=1)
    body = slice(discs, discs + strokes)
    shapes["a"][body] = mid - direction * half
    shapes["b"][body] = mid + direction * half
    shapes["radius"][body] = rng.uniform(0.9, 2.6, strokes) * scale
    shapes["color"][body, :3] = palette(1.0 - t + rng.normal(0, 0.08, strokes))
    shapes["color"][body, 3] = rng.uniform(0.5, 0.85, strokes)

    last = slice(discs + strokes, total)
    spots = rng.uniform(0, size, (stars, 2))
    shapes["a"][last] = shapes["b"][last] = spots
    shapes["radius"][last] = rng.uniform(0.8, 2.2, stars) * scale
    shapes["color"][last, :3] = palette(rng.uniform(0.8, 1.0, stars))
    shapes["color"][last, 3] = 0.9
    return shapes


# ---------------------------------------------------------------------------- numpy


def numpy_boxes(shapes) -> np.ndarray:
    """`bounding_box` of every shape, in float32 as the GPU computes it."""
    a = shapes["a"].astype(np.float32)
    b = shapes["b"].astype(np.float32)
    grow = (shapes["radius"].astype(np.float32) + np.float32(FRINGE))[:, None]
    return np.concatenate([np.minimum(a, b) - grow, np.maximum(a, b) + grow], axis=1)


def numpy_bins(shapes, tiles_x: int, tiles_y: int) -> np.ndarray:
    """The bins stage 1 must produce: [tile, word] bit b set where shape 32 word + b's box
    overlaps the tile's square."""
    box = numpy_boxes(shapes)
    x0 = (np.arange(tiles_x, dtype=np.float32) * TILE)[None, :]
    y0 = (np.arange(tiles_y, dtype=np.float32) * TILE)[None, :]
    in_column = (box[:, 0:1] < x0 + TILE) & (box[:, 2:3] > x0)  # [shape, tile column]
    in_row = (box[:, 1:2] < y0 + TILE) & (box[:, 3:4] > y0)  # [shape, tile row]
    hits = in_row[:, :, None] & in_column[:, None, :]  # [shape, row, column]
    words = -(-len(shapes) // 32)
    hits = np.concatenate([hits, np.zeros((words * 32 - len(shapes),) + hits.shape[1:], bool)])
    hits = hits.reshape(words, 32, tiles_y * tiles_x).astype(np.uint64)
    weights = (np.uint64(1) << np.arange(32, dtype=np.uint64))[None, :, None]
    return (hits * weights).sum(axis=1).astype(np.uint32).T.copy()  # [tile, word]


def numpy_paint(shapes, size: int) -> np.ndarray:
    """The picture painted by numpy: every shape in order over the pixels of its box (it has
    no coverage elsewhere), with `coverage`'s rule, in float32."""
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) + np.float32(0.5)
    t = (y / np.float32(size))[..., None]
    image = (np.float32(TOP) * (1 - t) + np.float32(BOTTOM) * t).astype(np.float32)
    box = numpy_boxes(shapes)
    for shape, (lx, ly, hx, hy) in zip(shapes, box):
        cols = slice(max(0, int(np.floor(lx))), min(size, int(np.ceil(hx)) + 1))
        rows = slice(max(0, int(np.floor(ly))), min(size, int(np.ceil(hy)) + 1))
        px, py = x[rows, cols], y[rows, cols]
        a, b = shape["a"].astype(np.float32), shape["b"].astype(np.float32)
        pax, pay = px - a[0], py - a[1]
        bax, bay = b[0] - a[0], b[1] - a[1]
        h = np.clip((pax * bax + pay * bay) / max(bax * bax + bay * bay, np.float32(1e-12)), 0, 1)
        distance = np.hypot(pax - bax * h, pay - bay * h) - shape["radius"]
        alpha = (shape["color"][3] * np.clip(0.5 - distance, 0, 1))[..., None]
        region = image[rows, cols]
        image[rows, cols] = region + (shape["color"][:3] - region) * alpha
    return image


# ---------------------------------------------------------------------------- the GPU


def bin_stage(shapes, size: int):
    """Stage 1 on the GPU: bins [tile, word] (u32) of `shapes` (a DeviceArray)."""
    tiles = size // TILE
    bins = tx.zeros((tiles * tiles, -(-len(shapes) // 32)), tx.u32)
    bin_shapes(shapes, bins, tiles, workgroups=(-(-len(shapes) // BIN_WORKGROUP), tiles, 1))
    return bins


def paint_stage(shapes, bins, size: int):
    """Stage 2 on the GPU: the picture [size, size, 4] (f32 RGBA) painted from the bins."""
    image = tx.empty((size, size), tx.vec4f)
    tiles = size // TILE
    paint_tiles(shapes, bins, image, TOP, BOTTOM, workgroups=(tiles, tiles, 1))
    return image


def render(shapes, size: int):
    """Both stages: (bins, image) as DeviceArrays."""
    gpu_shapes = tx.to_device(shapes)
    bins = bin_stage(gpu_shapes, size)
    return bins, paint_stage(gpu_shapes, bins, size)


# ---------------------------------------------------------------------------- the picture


def to_pixels(image) -> np.ndarray:
    """float RGB(A) in [0, 1] -> uint8 RGB."""
    return (np.clip(np.asarray(image)[..., :3], 0.0, 1.0) * 255 + 0.5).astype(np.uint8)


def counts_per_tile(bins, tiles: int) -> np.ndarray:
    """How many shapes each tile's list holds, [tile row, tile column]."""
    bits = np.unpackbits(np.ascontiguousarray(bins).view(np.uint8), axis=1)
    return bits.sum(axis=1).reshape(tiles, tiles)


def bins_panel(pixels: np.ndarray, counts: np.ndarray):
    """The scene, faint, under its tile grid, each tile coloured by its number of shapes
    (viridis: dark blue few, yellow many; black: none)."""
    from matplotlib import colormaps
    from PIL import Image, ImageDraw

    heat = colormaps["viridis"](counts / max(1, counts.max()))[..., :3]
    heat[counts == 0] = 0.0
    heat = np.repeat(np.repeat(heat, TILE, axis=0), TILE, axis=1)
    panel = Image.fromarray(to_pixels(pixels / 255.0 * 0.3 + heat * 0.75))
    draw = ImageDraw.Draw(panel)
    size = counts.shape[0] * TILE
    for edge in range(0, size, TILE):
        draw.line([(edge, 0), (edge, size - 1)], fill=(10, 10, 20))
        draw.line([(0, edge), (size - 1, edge)], fill=(10, 10, 20))
    if size >= 256:
        draw_legend(panel, int(counts.max()))
    return panel


def draw_legend(panel, most: int) -> None:
    """A key in the panel's lower right corner: the colour strip from 1 to `most` shapes."""
    from matplotlib import colormaps
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=13)
    width, height = 190, 58
    left, top = panel.width - width - 10, panel.height - height - 10
    draw = ImageDraw.Draw(panel)
    draw.rounded_rectangle(
        [left, top, left + width, top + height], 6, fill=(12, 12, 24), outline=(90, 90, 110)
    )
    draw.text((left + 10, top + 6), "shapes per 16x16 tile", font=font, fill=(230, 230, 240))
    ramp = colormaps["viridis"](np.linspace(1 / max(1, most), 1, width - 60))[:, :3]
    strip = Image.fromarray(to_pixels(np.repeat(ramp[None], 10, axis=0)))
    panel.paste(strip, (left + 30, top + 26))
    draw.text((left + 10, top + 24), "1", font=font, fill=(230, 230, 240))
    draw.text((left + width - 26, top + 24), str(most), font=font, fill=(230, 230, 240))
    draw.text((left + 10, top + 40), "black: empty list", font=font, fill=(170, 170, 190))


def save_picture(path: pathlib.Path, pixels: np.ndarray, counts: np.ndarray) -> None:
    """The scene and its bins side by side."""
    from PIL import Image

    size = pixels.shape[0]
    gap = max(4, size // 64)
    picture = Image.new("RGB", (2 * size + gap, size), (8, 8, 16))
    picture.paste(Image.fromarray(pixels), (0, 0))
    picture.paste(bins_panel(pixels, counts), (size + gap, 0))
    picture.save(path)


# ---------------------------------------------------------------------------- main


def main(argv=None) -> list[pathlib.Path]:
    cli = _common.parser(__doc__, size=512, size_help="picture side in pixels, a multiple of 16")
    cli.add_argument("--seed", type=int, default=1, help="the scene's random seed")
    args = cli.parse_args(argv)
    if args.size <= 0 or args.size % TILE:
        cli.error(f"--size must be a positive multiple of {TILE}, not {args.size}")
    out = _common.setup(args)
    size, tiles = args.size, args.size // TILE
    shapes = make_scene(size, args.seed)

    bins, image = render(shapes, size)
    got_bins, got_image = bins.numpy(), image.numpy()
    expected_bins = numpy_bins(shapes, tiles, tiles)
    if not np.array_equal(got_bins, expected_bins):
        wrong = np.count_nonzero(got_bins != expected_bins)
        raise _common.CheckFailed(f"bins: {wrong} of {got_bins.size} words differ from numpy")
    print("  check: bins match numpy's binning bit for bit")
    # Coverage is continuous in the distance, so float rounding (sqrt, division, fused
    # multiply-adds: they differ between GPUs) moves a pixel by far less than 1/255.
    _common.check_close("picture", got_image[..., :3], numpy_paint(shapes, size), atol=1e-3)

    gpu_shapes = tx.to_device(shapes)
    binning = _common.gpu_seconds(lambda: bin_stage(gpu_shapes, size), reps=3)
    painting = _common.gpu_seconds(lambda: paint_stage(gpu_shapes, bins, size), reps=3)
    counts = counts_per_tile(got_bins, tiles)
    path = out / "tile_binning.png"
    save_picture(path, to_pixels(got_image), counts)
    pairs = int(counts.sum())
    _common.report(
        "tile_binning",
        f"{size}x{size} pixels, {len(shapes)} shapes, {tiles * tiles} tiles",
        binning + painting,
        [path],
        f"binning {binning * 1e3:.2f} ms + painting {painting * 1e3:.2f} ms; {pairs} (shape, "
        f"tile) pairs, {pairs / counts.size:.1f} shapes "
        f"per tile (at most {counts.max()}), subgroup size {subgroup_size_used()}",
    )
    return [path]


@tx.kernel(workgroup_size=BIN_WORKGROUP)
def probe_subgroup_size(out: Array[u32]):
    if tx.local_invocation_index() == u32(0):
        out[0] = tx.subgroup_size()


def subgroup_size_used() -> int:
    """The subgroup size a kernel of BIN_WORKGROUP invocations gets here."""
    out = np.zeros(1, np.uint32)
    probe_subgroup_size(out, workgroups=(1, 1, 1))
    return int(out[0])


if __name__ == "__main__":
    main()
