"""A work queue in one dispatch: persistent workgroups pull tiles from an atomic counter (Ulam's prime spiral).

When work items cost very different amounts, giving each workgroup a fixed share leaves
some idle while others still work. A **work queue** balances it: launch only a few
"persistent" workgroups, and let each one take the next item from a global counter as
soon as it is done with the last:

    if tx.local_invocation_index() == 0:
        claim[0] = tx.atomic_add(next_tile[0], 1)   # one atomic per item, by one invocation
    tile = tx.workgroup_uniform_load(claim[0])      # the whole workgroup agrees on it
    if tile >= tile_count: break

`tx.workgroup_uniform_load` is a barrier, a load and a barrier again: every invocation gets
the same value, which the compiler then knows to be uniform, so the loop may contain
barriers and workgroup-wide operations (here `tx.stdlib.workgroup_reduce`, which adds up
the tile's cost); and its second barrier keeps invocation 0 from writing the next claim
before everyone has read this one.

This is safe however the GPU schedules the workgroups: the counter only hands out distinct
numbers, and no workgroup ever waits for another. If the GPU ran one workgroup at a time,
the first would simply take every tile. (Queues in which workgroups wait for items that
other workgroups produce need the forward progress that GPUs do not promise.) Relaxed
atomics are enough for the same reason: nothing is passed between workgroups through
memory during the dispatch; the results are read after it.

On lavapipe (Mesa's CPU Vulkan) each CPU thread runs one workgroup from start to end, so
the first workgroups take all the tiles and the others find the queue empty, as the
picture shows; on a GPU all of them share the work. Lavapipe also ends the loops of an
invocation after 65535 iterations in all (its guard against endless shaders): a
persistent workgroup adds up the iterations of every tile it takes, which is why the
default size is small (`--size` for real GPUs).

The work: every pixel is a number on Ulam's spiral (1 in the centre, counting outwards
anticlockwise), and its colour is its smallest prime factor, found by trial division. A
prime near the edge costs hundreds of divisions, an even number one, so tiles differ in
cost a lot. The check compares the factors with numpy and makes sure every tile was done
exactly once; the picture shows the spiral (primes bright: their famous diagonal lines),
which workgroup took each tile, and how much work each workgroup did.
"""

from __future__ import annotations

import numpy as np

import _common
import pyshader_tx as tx
from pyshader_tx import Array, Array2D, i32, u32, vec2u

TILE = 16  # a tile is TILE x TILE pixels: one workgroup's work item
NOBODY = 0xFFFFFFFF


@tx.func
def ulam_number(x: i32, y: i32, centre: i32) -> u32:
    """The number at pixel (x, y) of Ulam's spiral: 1 at the centre, then anticlockwise
    rings; ring k runs from (2k-1)**2 + 1 up to (2k+1)**2 at its bottom-right corner."""
    dx = x - centre
    dy = centre - y  # y up
    k = max(abs(dx), abs(dy))
    inner = (2 * k - 1) * (2 * k - 1)  # the last number of ring k - 1
    if k == 0:
        return u32(1)
    if dx == k and dy > -k:  # right side, going up
        return u32(inner + k + dy)
    if dy == k:  # top side, going left
        return u32(inner + 3 * k - dx)
    if dx == -k:  # left side, going down
        return u32(inner + 5 * k - dy)
    return u32(inner + 7 * k + dx)  # bottom side, going right


@tx.func
def smallest_factor(n: u32) -> vec2u:
    """(the smallest prime factor of n (n itself for primes, 1 for 1), divisions tried)."""
    if n % 2 == 0:
        return vec2u(2, 1)
    divisor = u32(3)
    tried = u32(1)
    while divisor * divisor <= n:
        tried += 1
        if n % divisor == 0:
            return vec2u(divisor, tried)
        divisor += 2
    return vec2u(n, tried)


@tx.kernel(workgroup_size=(TILE, TILE))
def spiral_tiles(
    tiles_x: u32,
    tile_count: u32,
    next_tile: Array[tx.Atomic[u32]],
    factors: Array2D[u32],
    owner: Array[u32],
    cost: Array[u32],
):
    """Persistent workgroups: each takes tiles from `next_tile` until none is left."""
    claim = tx.workgroup_array(u32, 1)
    me = tx.workgroup_id().x
    local = tx.local_invocation_id().xy
    size = factors.shape[0]
    while True:
        if tx.local_invocation_index() == 0:
            claim[0] = tx.atomic_add(next_tile[0], 1)  # take the next tile
        tile = tx.workgroup_uniform_load(claim[0])  # barrier + load: uniform
        if tile >= tile_count:
            break  # the whole workgroup leaves together
        x = (tile % tiles_x) * TILE + local.x
        y = (tile // tiles_x) * TILE + local.y
        tried = u32(0)
        if x < size and y < size:
            found = smallest_factor(ulam_number(i32(x), i32(y), i32(size // 2)))
            factors[y, x] = found.x
            tried = found.y
        total = tx.stdlib.workgroup_reduce(tried, "add")  # the tile's cost in divisions
        if tx.local_invocation_index() == 0:
            owner[tile] = me
            cost[tile] = total


def ulam_numbers(size: int) -> np.ndarray:
    """numpy: the spiral's numbers, pixel by pixel."""
    y, x = np.mgrid[0:size, 0:size].astype(np.int64)
    centre = size // 2
    dx, dy = x - centre, centre - y
    k = np.maximum(abs(dx), abs(dy))
    inner = (2 * k - 1) ** 2
    n = np.select(
        [k == 0, (dx == k) & (dy > -k), dy == k, dx == -k],
        [1, inner + k + dy, inner + 3 * k - dx, inner + 5 * k - dy],
        inner + 7 * k + dx,
    )
    return n.astype(np.uint32)


def smallest_factors(numbers: np.ndarray) -> np.ndarray:
    """numpy: the smallest prime factor of each number, from a sieve."""
    limit = int(numbers.max()) + 1
    spf = np.zeros(limit, np.int64)
    for p in range(2, int(limit**0.5) + 1):
        if spf[p] == 0:  # p is prime
            multiples = spf[p * p :: p]
            multiples[multiples == 0] = p
    spf[spf == 0] = np.arange(limit)[spf == 0]  # primes (and 0, 1) are their own
    return spf[numbers].astype(np.uint32)


class WorkQueue:
    """The buffers of one run: the counter, the factors, and each tile's owner and cost."""

    def __init__(self, size: int, workgroups: int):
        self.size, self.workgroups = size, workgroups
        self.tiles_x = -(-size // TILE)
        self.tile_count = self.tiles_x * self.tiles_x
        self.next_tile = tx.empty(1, np.uint32)
        self.factors = tx.empty((size, size), np.uint32)
        self.owner = tx.empty(self.tile_count, np.uint32)
        self.cost = tx.empty(self.tile_count, np.uint32)

    def run(self) -> None:
        self.next_tile.write(np.zeros(1, np.uint32))
        self.owner.write(np.full(self.tile_count, NOBODY, np.uint32))
        spiral_tiles(
            self.tiles_x,
            self.tile_count,
            self.next_tile,
            self.factors,
            self.owner,
            self.cost,
            workgroups=(self.workgroups, 1, 1),
        )

    def check(self) -> None:
        """Raise CheckFailed unless the factors are numpy's and every tile was taken once."""
        expected = smallest_factors(ulam_numbers(self.size))
        try:
            _common.check_close("smallest prime factors", self.factors.numpy(), expected)
        except _common.CheckFailed as failure:
            if "llvmpipe" in tx.adapter_summary():
                raise _common.CheckFailed(
                    f"{failure}; lavapipe ends the loops of an invocation after 65535"
                    " iterations in all: try a smaller --size"
                ) from None
            raise
        # each tile has an owner, and the counter went past the end once per workgroup
        # (its last, empty-handed claim)
        owner, claims = self.owner.numpy(), int(self.next_tile.numpy()[0])
        if (owner >= self.workgroups).any() or claims != self.tile_count + self.workgroups:
            raise _common.CheckFailed(
                f"work queue: {np.count_nonzero(owner >= self.workgroups)} tiles without an"
                f" owner, {claims} claims for {self.tile_count} tiles and {self.workgroups}"
                " workgroups"
            )
        print(f"  check: each of the {self.tile_count} tiles was taken exactly once")


def main(argv=None):
    cli = _common.parser(__doc__, size=256, size_help="image side in pixels")
    cli.add_argument("--workgroups", type=int, default=8, help="persistent workgroups")
    args = cli.parse_args(argv)
    out_dir = _common.setup(args)
    if not 1 <= args.size <= 46340:
        raise ValueError("--size must be 1..46340 (the spiral's numbers must fit in 32 bits)")
    if args.workgroups < 1:
        raise ValueError(f"--workgroups must be at least 1, not {args.workgroups}")

    queue = WorkQueue(args.size, args.workgroups)
    seconds = _common.gpu_seconds(queue.run, reps=3)
    queue.check()

    picture = out_dir / "work_queue.png"
    owner = queue.owner.numpy()
    draw(
        queue.factors.numpy(),
        ulam_numbers(args.size),
        owner,
        queue.cost.numpy(),
        queue.tiles_x,
        args.workgroups,
        picture,
    )
    tiles_per_group = np.bincount(owner, minlength=args.workgroups)
    _common.report(
        "work_queue",
        f"{args.size}x{args.size} pixels, {queue.tile_count} tiles, {args.workgroups} workgroups",
        seconds,
        [picture],
        f"tiles per workgroup {tiles_per_group.min()}..{tiles_per_group.max()}",
    )
    return [picture]


def draw(factors, numbers, owner, cost, tiles_x, workgroups, path) -> None:
    """The spiral, the owner of each tile, and the work each workgroup did."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    background, ink, grid = "#0a0b12", "#d8dce6", "#30343e"
    figure = plt.figure(figsize=(16, 6.9), facecolor=background, layout="constrained")
    spiral_axis, owner_axis, work_axis = figure.subplots(
        1, 3, gridspec_kw={"width_ratios": [1, 1, 0.75]}
    )

    # the spiral: primes gold; composites dark, lighter the larger their smallest factor
    prime = (factors == numbers) & (numbers > 1)
    shade = np.log(np.maximum(factors, 2) / 2) / np.log(max(int(np.sqrt(numbers.max())), 3))
    composite = plt.get_cmap("BuPu_r")(0.15 + 0.55 * np.clip(shade, 0, 1))[..., :3] * 0.8
    composite *= 0.25 + 0.75 * np.clip(shade, 0, 1)[..., None]
    rgb = np.where(prime[..., None], np.array([1.0, 0.8, 0.3]), composite)
    spiral_axis.imshow(rgb, interpolation="nearest")
    spiral_axis.set_title("Ulam's spiral: primes gold", color=ink, fontsize=11)

    colours = plt.get_cmap("tab20")(np.arange(workgroups) % 20)[:, :3]
    tiles = colours[owner.reshape(tiles_x, tiles_x)]
    relative = cost.reshape(tiles_x, tiles_x) / max(int(cost.max()), 1)
    tiles = tiles * (0.35 + 0.65 * relative[..., None])  # darker: cheaper tiles
    owner_axis.imshow(tiles, interpolation="nearest")
    owner_axis.set_title("which workgroup took each tile (bright: costly)", color=ink, fontsize=11)
    for axis in (spiral_axis, owner_axis):
        axis.set_axis_off()

    work = np.bincount(owner, weights=cost, minlength=workgroups)
    count = np.bincount(owner, minlength=workgroups)
    work_axis.set_facecolor(background)
    work_axis.barh(np.arange(workgroups), work / 1e3, color=colours, height=0.75)
    for group in range(workgroups):
        work_axis.text(
            work[group] / 1e3, group, f" {count[group]} tiles", va="center", color=ink, fontsize=8
        )
    work_axis.invert_yaxis()
    work_axis.set_xlim(0, work.max() / 1e3 * 1.35)
    work_axis.set_yticks(np.arange(workgroups), [f"wg {g}" for g in range(workgroups)])
    work_axis.set_xlabel("thousands of divisions", color=ink, fontsize=9)
    work_axis.set_title("work done per workgroup", color=ink, fontsize=11)
    work_axis.tick_params(colors=ink, labelsize=8)
    for side, spine in work_axis.spines.items():
        spine.set_color(grid if side in ("left", "bottom") else background)
    figure.suptitle(
        f"{len(owner)} tiles of {TILE}x{TILE} pixels pulled from one atomic counter by"
        f" {workgroups} persistent workgroups on {tx.adapter_summary()}",
        color=ink,
        fontsize=10,
    )
    figure.savefig(path, dpi=80, facecolor=background)
    plt.close(figure)


if __name__ == "__main__":
    main()
