"""Stream compaction three ways: one atomic per element, one per subgroup, and stdlib.select.

Stream compaction keeps the elements of an array that pass a test and packs them together:
the GPU version of `x[x > t]`. Every kept element needs a slot in the output, and the three
kernels here differ in how they hand out slots:

1. **One atomic per element.** Each invocation whose element passes does
   `slot = tx.atomic_add(count[0], 1)` and writes there. Simple and correct, but every kept
   element is one atomic operation on the same word: the GPU serialises them, so the kernel
   is as fast as that one counter.
2. **One atomic per subgroup ("aggregated atomics").** The invocations of a subgroup first
   agree among themselves: `tx.subgroup_ballot(keep)` gives every lane the bit mask of the
   lanes that keep their element (a `vec4u`: up to 128 lanes, bit `k % 32` of word
   `k // 32` for lane k). A lane's place among the subgroup's kept elements is the number
   of set bits below its own (`tx.count_one_bits` of the mask with the upper bits cleared),
   and the subgroup's total is the number of all set bits. One lane, the leader
   (`tx.subgroup_elect()`), adds the total to the counter, and
   `tx.subgroup_broadcast_first` hands the old value (the subgroup's base) to every lane.
   The number of atomics drops by the subgroup size (8 on lavapipe, 32 on NVIDIA, 64 on
   AMD); the code reads the subgroup size from the mask, so it runs on any of them.
3. **`tx.stdlib.select(x, predicate)`**: a single-pass scan (the predicate's 0/1 scanned
   across tiles with decoupled look-back) that stores each kept element at its rank. No
   contended counter at all, and the output keeps the input's order, which the atomic
   versions do not: their slots go to whichever invocation gets to the counter first.

The data is a procedural "sky": bright blobs on a dark, noisy background; the elements kept
are the pixels brighter than a threshold. Each element is one u32 record, its brightness in
the top 8 bits and its pixel index in the low 24 (packing a key and an index into one word
is a common GPU habit: one load, one store, and the record sorts by its key). All three
results are checked against numpy (the atomic ones as sets, the select one in order), and
the picture colours every kept pixel by the output slot it got: select's slots grow
smoothly down the image, the atomic ones follow the order in which the GPU happened to run
the workgroups. Where workgroups run at the same time (a GPU; lavapipe's threads now and
then) blocks of slots come out of order; each panel says how many landed at the slot an
ordered compaction gives them.
"""

from __future__ import annotations

import numpy as np

import _common
import pyshader_tx as tx
from pyshader_tx import Array, u32, vec4u

#: Records: brightness in the top 8 bits, pixel index in the low 24.
INDEX_BITS = 24
INDEX_MASK = (1 << INDEX_BITS) - 1
THRESHOLD = 150  # keep pixels at least this bright (of 255)


@tx.func
def is_bright(record: u32) -> bool:
    """The test every method applies: the record's brightness is at least THRESHOLD."""
    return (record >> INDEX_BITS) >= THRESHOLD


@tx.kernel(workgroup_size=128)
def append_per_element(records: Array[u32], out: Array[u32], count: Array[tx.Atomic[u32]]):
    """Method 1: every kept element takes its own slot from the counter."""
    i = tx.global_invocation_id().x
    if i < len(records):
        record = records[i]
        if is_bright(record):
            slot = tx.atomic_add(count[0], 1)  # one atomic per kept element
            out[slot] = record


@tx.func
def lanes_below(lane: u32, word: u32) -> u32:
    """The bits of ballot word `word` (lanes 32*word .. 32*word+31) of the lanes below `lane`."""
    first = word * 32
    if lane <= first:
        return u32(0)
    if lane >= first + 32:
        return u32(0xFFFFFFFF)
    return (u32(1) << (lane - first)) - 1  # the shift is below 32 here


@tx.func
def bits_set(v: vec4u) -> u32:
    """The number of set bits of a ballot mask (all four words)."""
    counts = tx.count_one_bits(v)
    return counts.x + counts.y + counts.z + counts.w


@tx.kernel(workgroup_size=128)
def append_per_subgroup(records: Array[u32], out: Array[u32], count: Array[tx.Atomic[u32]]):
    """Method 2: one atomic per subgroup. Every invocation runs the subgroup operations
    (they must be in uniform control flow), also those past the end of the array."""
    i = tx.global_invocation_id().x
    record = u32(0)
    keep = False
    if i < len(records):
        record = records[i]
        keep = is_bright(record)
    mask = tx.subgroup_ballot(keep)  # bit k: lane k keeps its element
    lane = tx.subgroup_invocation_id()
    below = vec4u(
        lanes_below(lane, 0), lanes_below(lane, 1), lanes_below(lane, 2), lanes_below(lane, 3)
    )
    rank = bits_set(mask & below)  # kept elements of the lanes before this one
    total = bits_set(mask)  # kept elements of the whole subgroup
    base = u32(0)
    if tx.subgroup_elect() and total > 0:
        base = tx.atomic_add(count[0], total)  # the leader reserves `total` slots at once
    base = tx.subgroup_broadcast_first(base)  # the elected lane is the first active one
    if keep:
        out[base + rank] = record


def sky(size: int, seed: int = 3) -> np.ndarray:
    """A size x size u8 image: soft bright blobs ("galaxies") on a dark noisy background."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) / size
    image = np.zeros((size, size), np.float32)
    for _ in range(22):
        cx, cy = rng.uniform(0.08, 0.92, 2)
        sx, sy = rng.uniform(0.015, 0.08, 2)
        angle = rng.uniform(0, np.pi)
        dx, dy = x - cx, y - cy
        u = dx * np.cos(angle) + dy * np.sin(angle)
        v = -dx * np.sin(angle) + dy * np.cos(angle)
        image += rng.uniform(0.6, 1.0) * np.exp(-0.5 * ((u / sx) ** 2 + (v / sy) ** 2))
    image += 0.18 * rng.random((size, size), dtype=np.float32)
    return np.clip(image * 200, 0, 255).astype(np.uint8)


def records_of(image: np.ndarray) -> np.ndarray:
    """One u32 record per pixel: brightness << 24 | pixel index."""
    index = np.arange(image.size, dtype=np.uint32)
    return (image.reshape(-1).astype(np.uint32) << INDEX_BITS) | index


class AtomicCompaction:
    """One of the atomic kernels with its output (sized for the worst case: every element
    kept) and its counter, allocated once and reused."""

    def __init__(self, kernel, records: tx.DeviceArray):
        self.kernel, self.records = kernel, records
        self.out = tx.empty(len(records), np.uint32)
        self.count = tx.empty(1, np.uint32)

    def run(self) -> int:
        """Compact; returns how many were kept (the one value read back)."""
        self.count.write(np.zeros(1, np.uint32))
        self.kernel(self.records, self.out, self.count, threads=len(self.records))
        return int(self.count.numpy()[0])

    def kept(self) -> np.ndarray:
        count = self.run()
        return self.out.numpy()[:count]


def slot_picture(image: np.ndarray, kept: np.ndarray, title: str, seconds: float, axis) -> None:
    """Draw the sky in grey and every kept pixel coloured by the slot it was written to."""
    import matplotlib.colors

    size = image.shape[0]
    rgb = np.repeat((image[..., None] / 255.0) * 0.35, 3, axis=2)
    slots = np.empty(size * size, np.float64)
    slots[:] = np.nan
    slots[kept & INDEX_MASK] = np.arange(len(kept)) / max(len(kept) - 1, 1)
    colours = matplotlib.colormaps["turbo"](slots.reshape(size, size))[..., :3]
    chosen = ~np.isnan(slots.reshape(size, size))
    rgb[chosen] = colours[chosen]
    axis.imshow(rgb, interpolation="nearest")
    pixel = kept & INDEX_MASK
    in_order = np.mean(np.sort(pixel) == pixel) if len(kept) else 1.0
    axis.set_title(
        f"{title}\n{seconds * 1e3:.2f} ms, {100 * in_order:.0f}% at their ordered slot",
        color="white",
        fontsize=11,
    )
    axis.set_axis_off()


def main(argv=None):
    cli = _common.parser(__doc__, size=512, size_help="image side in pixels")
    cli.add_argument("--reps", type=int, default=5, help="timed runs of each method (best)")
    args = cli.parse_args(argv)
    out_dir = _common.setup(args)
    if not 1 <= args.size <= 1 << (INDEX_BITS // 2):
        raise ValueError(f"--size must be 1..{1 << (INDEX_BITS // 2)} (24-bit pixel indices)")

    image = sky(args.size)
    records = records_of(image)
    expected = records[(records >> INDEX_BITS) >= THRESHOLD]  # numpy's compaction, in order
    device_records = tx.to_device(records)

    per_element = AtomicCompaction(append_per_element, device_records)
    per_subgroup = AtomicCompaction(append_per_subgroup, device_records)
    methods = {  # name: (what is timed: the compaction and its count, the result)
        "one atomic per element": (per_element.run, per_element.kept),
        "one atomic per subgroup": (per_subgroup.run, per_subgroup.kept),
        "stdlib.select (ordered)": (
            lambda: tx.stdlib.select(device_records, is_bright),
            lambda: tx.stdlib.select(device_records, is_bright).numpy(),
        ),
    }
    times = {
        name: _common.gpu_seconds(timed, reps=args.reps) for name, (timed, _) in methods.items()
    }
    results = {name: result() for name, (_, result) in methods.items()}

    for name, kept in results.items():
        if name.startswith("stdlib"):
            _common.check_close(name, kept, expected)
        else:  # slots go to whoever reaches the counter first: compare as sets
            _common.check_close(name, np.sort(kept), np.sort(expected))

    picture = out_dir / "atomic_append.png"
    draw(image, results, times, picture)
    timing = ", ".join(f"{name} {seconds * 1e3:.2f} ms" for name, seconds in times.items())
    timing = f"the three together; {timing}"
    _common.report(
        "atomic_append",
        f"{args.size}x{args.size} pixels, {len(expected)} kept",
        sum(times.values()),
        [picture],
        timing,
    )
    return [picture]


def draw(image, results, times, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 3, figsize=(13.5, 5.0), facecolor="#101018")
    for axis, (name, kept) in zip(axes, results.items()):
        slot_picture(image, kept, name, times[name], axis)
    figure.suptitle(
        "Stream compaction of the bright pixels: each coloured by its output slot"
        " (first blue, last red)",
        color="white",
        fontsize=12,
    )
    figure.tight_layout(rect=(0, 0, 1, 0.95))
    figure.savefig(path, dpi=80, facecolor=figure.get_facecolor())
    plt.close(figure)


if __name__ == "__main__":
    main()
