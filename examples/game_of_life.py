"""Conway's Game of Life on a torus: hundreds of steps that never leave the GPU -> animated GIF.

The board lives in two `tx.DeviceArray`s (`tx.to_device` for the first, `tx.empty` for the
second). Each step reads one and writes the other ("ping-pong"), so a step is one launch and
nothing is copied between the host and the GPU; launches are recorded and submitted
together, and the host reads back only the boards that become frames of the GIF.

Each workgroup computes a 16x16 block of cells. A cell needs its eight neighbours, so the
block's cells are read nine times between them; instead, the workgroup first copies the block
and a one-cell border around it (the "halo": 18x18 cells, wrapped around the board's edges)
into workgroup memory -- 324 cells loaded by 256 invocations, so each loads one or two --
waits at `tx.workgroup_barrier()` until the whole tile is there, and then counts neighbours
from the tile. Workgroup memory is on-chip: each cell is read from the board about 1.3 times
instead of 9 times.

For the picture each cell keeps a little history: 255 is alive, and a dead cell fades by 12
per step, so the GIF shows glowing trails behind gliders and oscillators (the rule itself
only looks at "alive or not").

The check runs the same rule in numpy (`np.roll` wraps around the torus) and compares every
frame, exactly.
"""

from __future__ import annotations

import numpy as np

import _common
import pyshader_tx as tx
from pyshader_tx import Array2D, u32

TILE = 16  # each workgroup computes TILE x TILE cells
HALO = TILE + 2  # ... from a tile of (TILE + 2)^2 cells held in workgroup memory
ALIVE = 255  # a live cell's value; a dead one keeps a fading trail below it
FADE = 12  # how much a dead cell's trail fades per step

# The GIF's colours: trail value -> RGB, interpolated between these stops.
COLOUR_STOPS = [
    (0, (8, 10, 28)),  # empty: night blue
    (60, (32, 24, 92)),  # an old trail: violet
    (150, (176, 42, 112)),  # magenta
    (231, (255, 140, 48)),  # just died: orange
    (254, (255, 214, 120)),
    (255, (255, 255, 236)),  # alive: white
]


@tx.kernel(workgroup_size=(TILE, TILE))
def life_step(board: Array2D[u32], next_board: Array2D[u32]):
    height = board.shape[0]
    width = board.shape[1]

    # 1. Copy this workgroup's block plus a one-cell halo into workgroup memory (1 = alive).
    # Tile cell (ty, tx) is board cell (corner.y + ty - 1, corner.x + tx - 1), wrapped.
    tile = tx.workgroup_array(u32, HALO * HALO)
    corner = tx.workgroup_id().xy * TILE
    for k in range(tx.local_invocation_index(), HALO * HALO, TILE * TILE):
        y = (corner.y + k // HALO + height - 1) % height
        x = (corner.x + k % HALO + width - 1) % width
        tile[k] = u32(1) if board[y, x] == ALIVE else u32(0)
    tx.workgroup_barrier()  # every invocation's loads are now visible to the workgroup

    # 2. Each invocation updates its own cell from the tile.
    cell = tx.global_invocation_id().xy
    if cell.x < width and cell.y < height:
        t = tx.local_invocation_id().xy + 1  # the cell's place in the tile
        centre = t.y * HALO + t.x
        neighbours = (
            tile[centre - HALO - 1] + tile[centre - HALO] + tile[centre - HALO + 1]
            + tile[centre - 1] + tile[centre + 1]
            + tile[centre + HALO - 1] + tile[centre + HALO] + tile[centre + HALO + 1]
        )  # fmt: skip
        old = board[cell.y, cell.x]
        if neighbours == 3 or (neighbours == 2 and old == ALIVE):
            next_board[cell.y, cell.x] = ALIVE
        else:
            next_board[cell.y, cell.x] = old - min(old, FADE)


def simulate(initial: np.ndarray, steps: int, every: int) -> list[np.ndarray]:
    """Run `steps` steps on the GPU; returns the board after every `every` steps."""
    boards = [tx.to_device(initial), tx.empty(initial.shape, tx.u32)]
    height, width = initial.shape
    frames = []
    for step in range(1, steps + 1):
        life_step(boards[(step - 1) % 2], boards[step % 2], threads=(width, height))
        if step % every == 0:
            frames.append(boards[step % 2].numpy())  # the only copies to the host
    return frames


def reference(initial: np.ndarray, steps: int, every: int) -> list[np.ndarray]:
    """The same in numpy, on a torus."""
    board = initial.astype(np.int64)
    frames = []
    for step in range(1, steps + 1):
        alive = (board == ALIVE).astype(np.int64)
        neighbours = sum(
            np.roll(alive, (dy, dx), axis=(0, 1))
            for dy in (-1, 0, 1)
            for dx in (-1, 0, 1)
            if (dy, dx) != (0, 0)
        )
        born_or_kept = (neighbours == 3) | ((neighbours == 2) & (alive == 1))
        board = np.where(born_or_kept, ALIVE, board - np.minimum(board, FADE))
        if step % every == 0:
            frames.append(board.astype(np.uint32))
    return frames


def initial_board(size: int, seed: int = 1) -> np.ndarray:
    """A random soup (a third of the cells alive) in a disc in the middle of an empty board."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size] - (size - 1) / 2
    in_disc = np.hypot(x, y) < size * 0.3
    return np.where(in_disc & (rng.random((size, size)) < 0.33), ALIVE, 0).astype(np.uint32)


def colour_table() -> np.ndarray:
    """256 RGB colours (one per cell value) interpolated between COLOUR_STOPS."""
    values, colours = zip(*COLOUR_STOPS)
    levels = np.arange(256)
    return np.stack(
        [np.interp(levels, values, [c[i] for c in colours]) for i in range(3)], axis=1
    ).astype(np.uint8)


def save_gif(frames, path, scale: int, milliseconds: int):
    from PIL import Image

    palette = colour_table().ravel().tolist()
    images = []
    for board in frames:
        pixels = np.repeat(np.repeat(board.astype(np.uint8), scale, 0), scale, 1)
        image = Image.fromarray(pixels, mode="P")
        image.putpalette(palette)
        images.append(image)
    images[0].save(
        path, save_all=True, append_images=images[1:], duration=milliseconds, loop=0, optimize=False
    )


def main(argv=None):
    cli = _common.parser(__doc__, size=256, size_help="board side in cells")
    cli.add_argument("--steps", type=int, default=480, help="generations to run")
    cli.add_argument("--every", type=int, default=4, help="steps between frames of the GIF")
    cli.add_argument("--scale", type=int, default=2, help="GIF pixels per cell")
    cli.add_argument("--seed", type=int, default=1)
    args = cli.parse_args(argv)
    out = _common.setup(args)

    initial = initial_board(args.size, args.seed)
    frames = []

    def run():
        frames[:] = simulate(initial, args.steps, args.every)

    seconds = _common.gpu_seconds(run)
    expected = reference(initial, args.steps, args.every)
    bad = [
        i for i, (got, want) in enumerate(zip(frames, expected)) if not np.array_equal(got, want)
    ]
    if len(frames) != len(expected) or bad:
        raise _common.CheckFailed(f"game_of_life: frames {bad} differ from numpy")
    alive = int((frames[-1] == ALIVE).sum())
    print(f"  check: all {len(frames)} frames match numpy ({alive} cells alive at the end)")

    path = out / "game_of_life.gif"
    save_gif(frames, path, args.scale, milliseconds=60)
    _common.report(
        "game_of_life",
        f"{args.size}x{args.size} board, {args.steps} steps",
        seconds,
        [path],
        note=f"{args.steps / seconds:.0f} steps/s including {len(frames)} frame read-backs",
    )
    return [path]


if __name__ == "__main__":
    main()
