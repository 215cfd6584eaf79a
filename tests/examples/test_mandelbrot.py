"""examples/mandelbrot.py at a small size: its numpy check, its picture, and the set's area."""

from gallery_helpers import load_example, picture_stats

mandelbrot = load_example("mandelbrot")


def test_default_zoom(tmp_path, source):
    (path,) = mandelbrot.main(
        ["--size", "128", "--iterations", "400", "--out", str(tmp_path), "--source", source]
    )
    assert path.name == "mandelbrot.png"
    pixels = picture_stats(path, (128, 96), min_std=30.0)
    # Seahorse valley: filaments of the palette's bright end on a dark background.
    assert (pixels.max(axis=2) > 200).mean() > 0.05
    assert (pixels.max(axis=2) < 80).mean() > 0.2


def test_whole_set_area(tmp_path):
    span, size = 3.2, 160
    (path,) = mandelbrot.main(
        ["--size", str(size), "--span", str(span), "--center", "-0.6", "0"]
        + ["--iterations", "200", "--out", str(tmp_path)]
    )
    pixels = picture_stats(path, (size, size * 3 // 4), min_std=30.0)
    # Inside pixels are black; the set's area is about 1.506 (the pixel grid adds a little).
    inside = (pixels.max(axis=2) == 0).sum() * (span / size) ** 2
    assert 1.45 < inside < 1.65, inside
