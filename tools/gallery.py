"""Build the README's gallery from the examples' pictures: a thumbnail per example in
examples/gallery/ (PNG, or a short animated GIF for the animated ones, a few tens of KB)
and the table between the `<!-- gallery -->` markers of README.md (each example's first
docstring line and the command that makes its picture).

    make examples            # runs every example: pictures in examples/output/
    python tools/gallery.py  # thumbnails + README table from those pictures
"""

from __future__ import annotations

import ast
import pathlib
import sys

from PIL import Image

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
OUTPUT = EXAMPLES / "output"
GALLERY = EXAMPLES / "gallery"
README = ROOT / "README.md"
BEGIN, END = "<!-- gallery -->", "<!-- /gallery -->"
#: Thumbnail width in pixels; an animated thumbnail is narrower and keeps every
#: FRAME_STEP-th frame in a few colours (a few tens of KB).
WIDTH = 320
ANIMATED_WIDTH = 192
FRAME_STEP = 8
NOT_IN_GALLERY = {"demo"}


def examples() -> list[pathlib.Path]:
    return [path for path in sorted(EXAMPLES.glob("[a-z]*.py")) if path.stem not in NOT_IN_GALLERY]


def summary(path: pathlib.Path) -> str:
    """The first line of an example's docstring."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return doc.strip().splitlines()[0] if doc.strip() else path.stem


def picture_of(name: str) -> pathlib.Path | None:
    """The example's main picture in examples/output (its own name first)."""
    for suffix in (".png", ".gif"):
        if (OUTPUT / f"{name}{suffix}").exists():
            return OUTPUT / f"{name}{suffix}"
    found = sorted(OUTPUT.glob(f"{name}*.png")) + sorted(OUTPUT.glob(f"{name}*.gif"))
    return found[0] if found else None


def _scaled(frame: Image.Image, width: int = WIDTH) -> Image.Image:
    height = max(1, round(frame.height * width / frame.width))
    return frame.convert("RGB").resize((width, height), Image.LANCZOS)


def thumbnail(picture: pathlib.Path, name: str) -> pathlib.Path:
    """Write examples/gallery/NAME.png (or .gif when the picture is animated)."""
    GALLERY.mkdir(exist_ok=True)
    with Image.open(picture) as image:
        frames = getattr(image, "n_frames", 1)
        if frames == 1:
            target = GALLERY / f"{name}.png"
            _scaled(image).quantize(colors=128).save(target, optimize=True)
            return target
        kept = []
        for index in range(0, frames, FRAME_STEP):
            image.seek(index)
            kept.append(_scaled(image, ANIMATED_WIDTH).quantize(colors=16))
        target = GALLERY / f"{name}.gif"
        duration = image.info.get("duration", 50) * FRAME_STEP
        kept[0].save(target, save_all=True, append_images=kept[1:], duration=duration, loop=0)
        return target


def table(rows) -> str:
    lines = ["| | example | |", "|---|---|---|"]
    for name, line, thumb in rows:
        image = f"![{name}]({thumb.relative_to(ROOT).as_posix()})"
        lines.append(f"| {image} | **{name}**<br>`python examples/{name}.py` | {line} |")
    return "\n".join(lines)


def main() -> int:
    rows, missing = [], []
    for path in examples():
        picture = picture_of(path.stem)
        if picture is None:
            missing.append(path.stem)
            continue
        rows.append((path.stem, summary(path), thumbnail(picture, path.stem)))
    if missing:
        print(f"no picture in {OUTPUT} for: {', '.join(missing)} (run `make examples`)")
        return 1
    text = README.read_text()
    if BEGIN not in text or END not in text:
        print(f"README.md has no {BEGIN} ... {END} markers")
        return 1
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    README.write_text(f"{head}{BEGIN}\n{table(rows)}\n{END}{tail}")
    for name, _, thumb in rows:
        print(f"{thumb.relative_to(ROOT)}: {thumb.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
