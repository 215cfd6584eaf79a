"""The README's gallery lists every example of examples/ with its committed thumbnail and
its docstring's first line (tools/gallery.py writes it; this test keeps it true)."""

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("gallery_tool", ROOT / "tools" / "gallery.py")
gallery = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gallery)


def test_every_example_has_a_readme_row_and_a_small_thumbnail():
    readme = (ROOT / "README.md").read_text()
    table = readme.split(gallery.BEGIN, 1)[1].split(gallery.END, 1)[0]
    examples = gallery.examples()
    assert len(examples) >= 10
    for path in examples:
        name = path.stem
        thumbs = [p for p in gallery.GALLERY.glob(f"{name}.*")]
        assert len(thumbs) == 1, f"examples/gallery has no thumbnail for {name}"
        assert thumbs[0].stat().st_size < 100_000, f"{thumbs[0]} is too big for the README"
        row = f"![{name}]({thumbs[0].relative_to(ROOT).as_posix()})"
        assert row in table, f"README's gallery has no row for {name}"
        assert gallery.summary(path) in table, f"README's line for {name} is not its docstring's"
