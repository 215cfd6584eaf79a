"""Separable Gaussian blur with workgroup tiles and halos: a generated photo, before and after.

A Gaussian blur of radius R averages (2R + 1)^2 pixels per output pixel, but the Gaussian is
separable: blurring the rows, then the columns of the result, gives the same picture with
2 (2R + 1) reads per pixel. Both passes are one kernel, `blur_pass`, compiled twice
(`VERTICAL` and `RADIUS` are `tx.Const` parameters: each value is its own specialisation,
in which the direction and the tile's shape are constants).

Neighbouring outputs read almost the same inputs, so each 16x16 workgroup first copies what
its block needs into workgroup memory (`tx.workgroup_array`): its 16 lines of pixels along the
blur direction, each extended by R pixels on both sides -- the halo. With R = 12 that is
16 x 40 pixels loaded by 256 invocations (two or three each, in a strided loop), then
`tx.workgroup_barrier()` so that every load is visible, then each invocation sums 2R + 1
neighbours from on-chip memory. The tile is kept in image order (16 rows of 40 pixels, or 40
rows of 16), so that neighbouring invocations load neighbouring pixels of a row from the
image (coalesced reads) and read neighbouring words of the tile. Each input pixel is read from the image 2.5 times per pass
instead of 25 times. Pixels past the image's edge are clamped to the edge ("clamp to edge",
as a texture sampler would), which also makes the partial blocks at the right and bottom
edges safe: their extra invocations load clamped pixels and store nothing, but still reach
the barrier (a barrier must be reached by the whole workgroup, so the bounds test comes after
it, not as an early return).

The test image is generated with numpy: a sunset over mountains and a lake, with sharp
details (stars, a pier, thin reeds, film grain) that the blur visibly softens. The image
stays on the GPU between the passes (`tx.to_device`, `tx.empty`); the check compares the
result with the same two passes in numpy (edge-padded), to 1e-5.
"""

from __future__ import annotations

import math

import numpy as np

import _common
import pyshader_tx as tx
from pyshader_tx import Array, Array2D, f32, i32, vec2i, vec4f

TILE = 16  # each workgroup blurs a TILE x TILE block


@tx.kernel(workgroup_size=(TILE, TILE))
def blur_pass(
    source: Array2D[vec4f],
    target: Array2D[vec4f],
    weights: Array[f32],  # 2 * RADIUS + 1 Gaussian weights, summing to 1
    RADIUS: tx.Const[int],
    VERTICAL: tx.Const[bool],
):
    size = vec2i(i32(source.shape[1]), i32(source.shape[0]))  # (width, height)
    # The direction of the blur, and how far the tile reaches past the block that way.
    direction = vec2i(0, 1) if VERTICAL else vec2i(1, 0)
    reach = direction * RADIUS
    # The tile holds the block and its halo in image order (row by row): TILE + 2 * RADIUS
    # columns of TILE rows for the horizontal pass, TILE columns of TILE + 2 * RADIUS rows for
    # the vertical one. Either way neighbouring invocations load neighbouring pixels of a row
    # (coalesced reads) and read neighbouring words of the tile.
    tile = tx.workgroup_array(vec4f, TILE * (TILE + 2 * RADIUS))
    tile_width = TILE + 2 * reach.x
    corner = vec2i(tx.workgroup_id().xy * TILE) - reach  # image position of tile pixel (0, 0)

    # 1. Load the tile, all invocations together; positions are clamped to the image.
    for k in range(i32(tx.local_invocation_index()), len(tile), TILE * TILE):
        at = tx.clamp(corner + vec2i(k % tile_width, k // tile_width), vec2i(0), size - 1)
        tile[k] = source[at.y, at.x]
    tx.workgroup_barrier()  # the whole tile is loaded

    # 2. Each invocation blurs its pixel, which is tile pixel local + reach: 2 * RADIUS + 1
    # taps along the direction, from RADIUS before it (tile pixel local) to RADIUS after it.
    pixel = vec2i(tx.global_invocation_id().xy)
    if pixel.x < size.x and pixel.y < size.y:
        first = vec2i(tx.local_invocation_id().xy)
        total = vec4f(0.0)
        for i in range(2 * RADIUS + 1):
            tap = first + direction * i
            total += tile[tap.y * tile_width + tap.x] * weights[i]
        target[pixel.y, pixel.x] = total


def gaussian_weights(sigma: float) -> np.ndarray:
    radius = math.ceil(3 * sigma)
    x = np.arange(-radius, radius + 1)
    w = np.exp(-0.5 * (x / sigma) ** 2)
    return (w / w.sum()).astype(np.float32)


def gpu_blur(image: np.ndarray, weights: np.ndarray) -> tx.DeviceArray:
    """Horizontal pass into a temporary DeviceArray, vertical pass into the result."""
    height, width = image.shape[:2]
    source = tx.to_device(image)
    across = tx.empty(image.shape, tx.f32)
    blurred = tx.empty(image.shape, tx.f32)
    radius = len(weights) // 2
    for src, dst, vertical in ((source, across, False), (across, blurred, True)):
        blur_pass(src, dst, weights, RADIUS=radius, VERTICAL=vertical, threads=(width, height))
    return blurred


def reference_blur(image: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The same two passes in numpy (float64), clamp-to-edge borders."""
    radius = len(weights) // 2
    result = image.astype(np.float64)
    for axis in (1, 0):
        pad = [(0, 0)] * 3
        pad[axis] = (radius, radius)
        padded = np.pad(result, pad, mode="edge")
        size = result.shape[axis]
        result = sum(
            w * np.take(padded, np.arange(i, i + size), axis=axis) for i, w in enumerate(weights)
        )
    return result


def test_image(width: int, height: int, seed: int = 5) -> np.ndarray:
    """A photo-like RGBA float32 picture: sunset, mountains, lake, pier, reeds, stars, grain."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width] / height  # y: 0 at the top, 1 at the bottom
    x = x * height / width  # 0..1 across
    horizon = 0.62

    def blend(a, b, t):
        return a + (b - a) * np.clip(t, 0, 1)[..., None]

    # Sky: deep blue at the top to orange at the horizon, a sun with a glow, a few stars.
    sky = blend(np.array([0.10, 0.12, 0.35]), np.array([1.0, 0.55, 0.25]), (y / horizon) ** 1.6)
    sun_distance = np.hypot(x - 0.68, (y - 0.47) * height / width)
    sky += (np.exp(-((sun_distance / 0.12) ** 2)) * 0.5)[..., None] * [1.0, 0.7, 0.4]
    sky = np.where((sun_distance < 0.045)[..., None], [1.0, 0.95, 0.8], sky)
    stars = (rng.random((height, width)) < 0.0015) & (y < 0.3)
    sky = np.where(stars[..., None], 1.0, sky)

    # Two mountain ranges (sums of sines), the far one hazy.
    picture = sky
    for base, amplitude, colour, phase in [
        (0.50, 0.10, [0.45, 0.30, 0.45], 1.0),
        (0.58, 0.08, [0.18, 0.12, 0.25], 4.0),
    ]:
        ridge = base - amplitude * (
            0.6 * np.sin(9 * x + phase) + 0.3 * np.sin(23 * x + 2 * phase) + 0.1 * np.sin(61 * x)
        )
        shade = colour * (1 - 0.4 * (y - ridge)[..., None])
        picture = np.where((y > ridge)[..., None], shade, picture)

    # The lake: the sky mirrored, darker, with ripples; a pier and reeds in front.
    mirrored = np.clip(2 * horizon - y, 0, None)
    rows = np.clip((mirrored * height).astype(int), 0, height - 1)
    ripple = (3 * np.sin(140 * y + 8 * np.sin(30 * x))).astype(int)
    columns = np.clip((x * width).astype(int) + ripple, 0, width - 1)
    water = picture[rows, columns] * 0.6 + [0.0, 0.02, 0.06]
    picture = np.where((y > horizon)[..., None], water, picture)
    pier = (y > horizon + 0.05) & (y < horizon + 0.07) & (x > 0.05) & (x < 0.45)
    posts = (y > horizon + 0.05) & (y < horizon + 0.16) & (np.abs((x - 0.07) % 0.08) < 0.008)
    picture = np.where(((pier | posts) & (x < 0.45))[..., None], [0.12, 0.07, 0.05], picture)
    for _ in range(40):  # reeds: thin dark strokes rising from the bottom
        root, height_, lean = rng.uniform(0.55, 1.0), rng.uniform(0.12, 0.3), rng.uniform(-0.1, 0.1)
        t = (1 - y) / height_
        reed = (t < 1) & (np.abs(x - root - lean * t**2) < 0.002 * (1.3 - t))
        picture = np.where(reed[..., None], [0.05, 0.06, 0.03], picture)

    picture = picture + rng.normal(0, 0.025, picture.shape)  # film grain
    rgba = np.concatenate([np.clip(picture, 0, 1), np.ones((height, width, 1))], axis=2)
    return rgba.astype(np.float32)


def side_by_side(before: np.ndarray, after: np.ndarray, path):
    """Save before | after as one PNG, with a gap and a label on each half."""
    from PIL import Image, ImageDraw

    height, width = before.shape[:2]
    gap = max(4, width // 64)
    canvas = np.full((height, 2 * width + gap, 3), 255, np.uint8)
    canvas[:, :width] = np.round(before[..., :3] * 255)
    canvas[:, width + gap :] = np.round(after[..., :3] * 255)
    image = Image.fromarray(canvas)
    draw = ImageDraw.Draw(image)
    for label, left in (("original", 0), ("blurred", width + gap)):
        draw.text((left + 8, 6), label, fill=(255, 255, 255))
    image.save(path)


def main(argv=None):
    cli = _common.parser(__doc__, size=512, size_help="picture width in pixels")
    cli.add_argument("--sigma", type=float, default=4.0, help="Gaussian sigma in pixels")
    args = cli.parse_args(argv)
    out = _common.setup(args)

    width, height = args.size, args.size * 3 // 4
    image = test_image(width, height)
    weights = gaussian_weights(args.sigma)
    result = []

    def run():
        result[:] = [gpu_blur(image, weights)]

    seconds = _common.gpu_seconds(run)
    blurred = result[0].numpy()
    _common.check_close("blur", blurred, reference_blur(image, weights), atol=1e-5)

    path = out / "blur.png"
    side_by_side(image, blurred, path)
    _common.report(
        "blur",
        f"{width}x{height} RGBA f32, sigma {args.sigma} (radius {len(weights) // 2})",
        seconds,
        [path],
        note="both passes, upload included",
    )
    return [path]


if __name__ == "__main__":
    main()
