"""The Mandelbrot set: an escape-time fractal with smooth colouring, one invocation per pixel.

The kernel runs on a 2-D grid of 16x16 workgroups (`threads=(width, height)`): invocation
(x, y) owns pixel (x, y) of an `Array2D` image. It iterates z <- z^2 + c for the point c of
its pixel until |z| passes a bailout radius or the iteration limit is reached. Pixels are
independent, so there is no workgroup memory and no synchronisation: this is the "embarrassingly
parallel" pattern, and the GPU's job is simply to run a million small loops of different
lengths side by side (neighbouring pixels escape after similar counts, so the lanes of a
subgroup mostly stay together).

Smooth colouring: the integer escape count gives visible bands. With a large bailout radius
(here 256), |z| at escape tells how far past the radius the orbit jumped, and
`n + 1 - log2(log(|z|))` is a continuous "fractional iteration count" that removes the bands.
The kernel maps it through a cosine palette (`a + b * cos(2 pi (c t + d))`) and packs the
colour into one u32 per pixel (RGBA8, the byte order Pillow reads), so the host copies
exactly the picture's bytes back.

The check runs the same escape-time loop in numpy on a sample of rows, twice: in float32 (the
GPU's precision) and in float64. Near the set's boundary the orbit is chaotic: the GPU rounds
differently from numpy (it may fuse a*b+c into one FMA), and a last-bit difference changes
a pixel's escape count there. So the check measures how much rounding alone moves the result
-- the fraction of pixels on which numpy float64 agrees with numpy float32 (escape counts
equal; smooth values within 0.01) -- and asks the GPU to agree with numpy float32 at least as
well, less one percentage point. On the whole set about 99.7% of the counts agree; in the
default zoom, where almost every pixel lies near the boundary, about 85% agree for the GPU
and for float64 alike, and a wrong kernel (an off-by-one count, a shifted pixel centre)
falls far below. The colours are checked to one level of 255 by applying numpy's palette to
the GPU's smooth values.

`--center RE IM --span WIDTH` picks another view (float32 limits zooms to a span of about
1e-4); `--span 3.2 --center -0.6 0` shows the whole set.
"""

from __future__ import annotations

import math

import numpy as np

import _common
import pyshader_tx as tx
from pyshader_tx import Array2D, f32, u32, vec2f, vec3f

BAILOUT = 256.0  # escape radius: large, so the smooth count is accurate
TWO_PI = 2.0 * math.pi

# A cosine palette (Inigo Quilez's form): colour(t) = A + B * cos(2 pi (C * t + D)).
PALETTE_A = tx.vec3f(0.5, 0.5, 0.5)
PALETTE_B = tx.vec3f(0.5, 0.5, 0.5)
PALETTE_C = tx.vec3f(1.0, 1.0, 1.0)
PALETTE_D = tx.vec3f(0.0, 0.10, 0.20)
PALETTE_SPEED = 0.05  # palette cycles per unit of sqrt(smooth count)

# Seahorse valley, between the main cardioid and the period-2 bulb.
DEFAULT_CENTER = (-0.7453, 0.1127)
DEFAULT_SPAN = 0.0065


@tx.func
def palette(t: f32) -> vec3f:
    """Cosine palette: smooth, periodic, no lookup table."""
    phase = PALETTE_C * t + PALETTE_D
    return PALETTE_A + PALETTE_B * tx.cos(phase * TWO_PI)


@tx.func
def pack_rgba8(colour: vec3f) -> u32:
    """Four bytes R, G, B, A=255 in one u32 (little-endian: R is the first byte)."""
    rgb = vec3f(tx.round(tx.clamp(colour, vec3f(0.0), vec3f(1.0)) * 255.0))
    return u32(rgb.x) | (u32(rgb.y) << 8) | (u32(rgb.z) << 16) | (u32(255) << 24)


@tx.kernel(workgroup_size=(16, 16))
def mandelbrot(
    origin: vec2f,  # the complex number at the centre of pixel (0, 0)
    step: f32,  # complex units per pixel
    max_iterations: u32,
    counts: Array2D[u32],  # out: escape count (max_iterations inside the set)
    smooth: Array2D[f32],  # out: fractional escape count, -1 inside the set
    image: Array2D[u32],  # out: RGBA8 colour
):
    pixel = tx.global_invocation_id().xy  # x = column, y = row
    if pixel.x >= image.shape[1] or pixel.y >= image.shape[0]:
        return
    # Rows go down the picture, the imaginary axis goes up.
    c = origin + vec2f(f32(pixel.x), -f32(pixel.y)) * step

    z = vec2f(0.0)
    n = u32(0)
    while n < max_iterations and tx.dot(z, z) <= BAILOUT * BAILOUT:
        z = vec2f(z.x * z.x - z.y * z.y, 2.0 * z.x * z.y) + c
        n += 1

    counts[pixel.y, pixel.x] = n
    if n == max_iterations:
        smooth[pixel.y, pixel.x] = -1.0
        image[pixel.y, pixel.x] = pack_rgba8(vec3f(0.0))  # inside: black
    else:
        # log(|z|) = log(|z|^2) / 2
        mu = f32(n) + 1.0 - tx.log2(0.5 * tx.log(tx.dot(z, z)))
        smooth[pixel.y, pixel.x] = mu
        image[pixel.y, pixel.x] = pack_rgba8(palette(tx.sqrt(max(mu, 0.0)) * PALETTE_SPEED))


def view(width: int, height: int, center, span: float):
    """The kernel's `origin` and `step` for a picture `span` wide around `center`."""
    step = span / width
    origin = (center[0] - (width - 1) / 2 * step, center[1] + (height - 1) / 2 * step)
    return np.float32(origin), np.float32(step)


def reference_escape(origin, step, max_iterations, rows, width, dtype=np.float32):
    """Escape counts and smooth values of the given pixel rows, computed in numpy with `dtype`."""
    xs = np.arange(width, dtype=dtype)[None, :]
    ys = np.asarray(rows, dtype=dtype)[:, None]
    c_re = (dtype(origin[0]) + xs * dtype(step) + 0 * ys).ravel()
    c_im = (dtype(origin[1]) - ys * dtype(step) + 0 * xs).ravel()
    z_re, z_im = np.zeros_like(c_re), np.zeros_like(c_im)
    counts = np.zeros(c_re.shape, np.uint32)
    active = np.arange(c_re.size)  # pixels still iterating
    for _ in range(max_iterations):
        zr, zi = z_re[active], z_im[active]
        inside = zr * zr + zi * zi <= dtype(BAILOUT * BAILOUT)
        active, zr, zi = active[inside], zr[inside], zi[inside]
        if active.size == 0:
            break
        z_re[active] = zr * zr - zi * zi + c_re[active]
        z_im[active] = dtype(2) * zr * zi + c_im[active]
        counts[active] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = counts + dtype(1) - np.log2(dtype(0.5) * np.log(z_re * z_re + z_im * z_im))
    mu = np.where(counts == max_iterations, -1, mu).astype(np.float32)
    return counts.reshape(len(rows), width), mu.reshape(len(rows), width)


def reference_colours(smooth):
    """numpy's palette applied to smooth values (RGB uint8)."""
    t = np.sqrt(np.maximum(smooth, 0))[..., None] * PALETTE_SPEED
    a, b, c, d = (np.asarray(v, np.float64) for v in (PALETTE_A, PALETTE_B, PALETTE_C, PALETTE_D))
    rgb = np.round(np.clip(a + b * np.cos(TWO_PI * (c * t + d)), 0, 1) * 255)
    return np.where(smooth[..., None] < 0, 0, rgb).astype(np.uint8)


def check(counts, smooth, rgba, origin, step, max_iterations, sample_rows):
    """Compare with numpy: the GPU must agree with numpy's float32 escape loop at least as well
    as numpy's float64 loop does (less one point), in escape counts and in smooth values (to
    0.01). Near the boundary both float32 results are rounding noise; this measures the noise
    and asks that the GPU adds none of its own."""
    height, width = smooth.shape
    rows = np.arange(0, height, max(1, height // sample_rows))
    ref = reference_escape(origin, step, max_iterations, rows, width, np.float32)
    exact = reference_escape(origin, step, max_iterations, rows, width, np.float64)

    def agreement(got):
        return (got[0] == ref[0]).mean(), (np.abs(got[1] - ref[1]) <= 0.01).mean()

    gpu, f64 = agreement((counts[rows], smooth[rows])), agreement(exact)
    print(
        f"  check: {rows.size} rows; the GPU agrees with numpy float32 on {gpu[0]:.2%} of escape "
        f"counts and {gpu[1]:.2%} of smooth values (numpy float64: {f64[0]:.2%}, {f64[1]:.2%})"
    )
    if gpu[0] < f64[0] - 0.01 or gpu[1] < f64[1] - 0.01:
        raise _common.CheckFailed("mandelbrot: the GPU's escape counts differ from numpy's")
    colours = reference_colours(smooth)
    diff = np.abs(rgba[..., :3].astype(np.int16) - colours).max()
    if diff > 1 or (rgba[..., 3] != 255).any():
        raise _common.CheckFailed(f"mandelbrot: colours differ from numpy's palette by {diff}")
    print("  check: colours match numpy's palette applied to the GPU's smooth values")


def main(argv=None):
    cli = _common.parser(__doc__, size=1024, size_help="picture width in pixels")
    cli.add_argument("--iterations", type=int, default=1000, help="iteration limit")
    cli.add_argument(
        "--center",
        type=float,
        nargs=2,
        default=DEFAULT_CENTER,
        metavar=("RE", "IM"),
        help="the complex number at the middle of the picture",
    )
    cli.add_argument(
        "--span", type=float, default=DEFAULT_SPAN, help="width of the view (complex units)"
    )
    cli.add_argument("--check-rows", type=int, default=48, help="rows compared with numpy")
    args = cli.parse_args(argv)
    out = _common.setup(args)

    width, height = args.size, args.size * 3 // 4
    origin, step = view(width, height, args.center, args.span)
    counts = tx.empty((height, width), tx.u32)
    smooth = tx.empty((height, width), tx.f32)
    image = tx.empty((height, width), tx.u32)

    def run():
        mandelbrot(origin, step, args.iterations, counts, smooth, image, threads=(width, height))

    seconds = _common.gpu_seconds(run)
    smooth_host = smooth.numpy()
    rgba = image.numpy().view(np.uint8).reshape(height, width, 4)
    check(counts.numpy(), smooth_host, rgba, origin, step, args.iterations, args.check_rows)

    from PIL import Image

    path = out / "mandelbrot.png"
    Image.fromarray(rgba[..., :3]).save(path)
    _common.report(
        "mandelbrot",
        f"{width}x{height}, {args.iterations} iterations",
        seconds,
        [path],
        note=f"{width * height / seconds / 1e6:.1f} Mpixel/s",
    )
    return [path]


if __name__ == "__main__":
    main()
