"""Per-tile linked lists built with atomic exchange by all workgroups at once, then walked to shade.

A renderer that splits the screen into 16 x 16-pixel tiles needs, for every tile, the list
of shapes that touch it. The shapes are processed in parallel, and any of them may land in
any tile, so the lists are built with two atomics and no locks (the same structure as the
per-pixel fragment lists of order-independent transparency):

- **a node allocator**: `node = tx.atomic_add(node_count[0], 1)` hands each (shape, tile)
  pair its own slot in one big node pool;
- **a push onto the tile's list**: `next[node] = tx.atomic_exchange(heads[tile], node)`
  makes the new node the head and returns the old head, which becomes its successor. Two
  invocations pushing onto one tile at the same moment each get a different old head, so
  no node is lost, whatever the order.

Workgroups coordinate only through those atomics, and none ever waits for another: the
kernel is correct if the GPU runs its workgroups one at a time, in any order, or all at
once. `next[node]` is written with a plain store after the exchange, and nobody reads it
in this dispatch; the lists are walked by the next dispatch, after the GPU has finished
the first one (a launch boundary orders all memory).

If the pool is too small, the allocator still counts every node it was asked for but
stores only those that fit; the host reads the count, grows the pool and runs again: the
standard way to size GPU output you cannot predict (`--capacity` starts it small).

The second kernel runs one workgroup per tile, one invocation per pixel: all 256 pixels of
a tile walk the same list (the loads are the same for the whole workgroup), adding up the
light of every "bokeh" disc whose node they meet. Addition does not care about the order
of the list, which differs from run to run, so the picture does not either. The check
compares every tile's list, as a set, with numpy's overlap test, and the picture with a
numpy renderer; the picture shows the rendered lights and how long each tile's list was.
"""

from __future__ import annotations

import numpy as np

import _common
import pyshader_tx as tx
from pyshader_tx import Array, Array2D, f32, i32, u32, vec2f, vec3f, vec4f

TILE = 16  # pixels per tile side: a tile is one workgroup of the shading pass
END = 0xFFFFFFFF  # the empty list / the last node's successor


@tx.struct
class Light:
    centre: vec2f  # in pixels (whole numbers: the overlap tests are then exact)
    radius: f32
    brightness: f32
    colour: vec3f


@tx.func
def touches(light: Light, tile_x: u32, tile_y: u32) -> bool:
    """Whether the light's disc reaches into the tile: the distance from its centre to the
    nearest point of the tile's square."""
    low = vec2f(f32(tile_x * TILE), f32(tile_y * TILE))
    nearest = tx.clamp(light.centre, low, low + f32(TILE))
    offset = light.centre - nearest
    return tx.dot(offset, offset) < light.radius * light.radius


@tx.kernel(workgroup_size=64)
def build_lists(
    lights: Array[Light],
    tiles_x: u32,
    tiles_y: u32,
    heads: Array[tx.Atomic[u32]],
    next: Array[u32],
    node_light: Array[u32],
    node_count: Array[tx.Atomic[u32]],
):
    """One invocation per light: push a node onto the list of every tile it touches."""
    i = tx.global_invocation_id().x
    if i >= len(lights):
        return
    light = lights[i]
    # the tiles under the light's bounding box
    first_x = u32(max(i32(tx.floor((light.centre.x - light.radius) / TILE)), 0))
    first_y = u32(max(i32(tx.floor((light.centre.y - light.radius) / TILE)), 0))
    last_x = u32(min(i32(tx.floor((light.centre.x + light.radius) / TILE)), i32(tiles_x) - 1))
    last_y = u32(min(i32(tx.floor((light.centre.y + light.radius) / TILE)), i32(tiles_y) - 1))
    for tile_y in range(first_y, last_y + 1):
        for tile_x in range(first_x, last_x + 1):
            if touches(light, tile_x, tile_y):
                node = tx.atomic_add(node_count[0], 1)  # allocate a node
                if node < len(next):  # (else the pool is full: the host grows it)
                    node_light[node] = i
                    tile = tile_y * tiles_x + tile_x
                    next[node] = tx.atomic_exchange(heads[tile], node)  # push


@tx.func
def bokeh(light: Light, pixel: vec2f) -> vec3f:
    """The light a disc adds to a pixel: a bright soft-edged disc over a smooth falloff,
    zero at the radius and beyond."""
    d = tx.distance(pixel, light.centre)
    if d >= light.radius:
        return vec3f(0.0)
    q = 1.0 - (d * d) / (light.radius * light.radius)
    disc = tx.smoothstep(light.radius, light.radius - 1.5, d)
    return light.colour * (light.brightness * (0.35 * disc + 0.65 * q * q))


@tx.kernel(workgroup_size=(TILE, TILE))
def shade(
    lights: Array[Light],
    heads: Array[u32],
    next: Array[u32],
    node_light: Array[u32],
    image: Array2D[vec4f],
    lengths: Array[u32],
):
    """One workgroup per tile, one invocation per pixel: walk the tile's list."""
    tile_xy = tx.workgroup_id().xy
    tile = tile_xy.y * tx.num_workgroups().x + tile_xy.x
    xy = tx.global_invocation_id().xy
    pixel = vec2f(xy) + 0.5
    colour = vec3f(0.0)
    length = u32(0)
    node = heads[tile]
    while node != END:
        colour += bokeh(lights[node_light[node]], pixel)
        length += 1
        node = next[node]
    if xy.y < image.shape[0] and xy.x < image.shape[1]:
        image[xy.y, xy.x] = vec4f(colour, 1.0)
    if tx.local_invocation_index() == 0:
        lengths[tile] = length


def random_lights(count: int, size: int, seed: int = 21) -> np.ndarray:
    """Bokeh lights scattered over a size x size image: many small, a few large, in the
    hues of city lights at night."""
    rng = np.random.default_rng(seed)
    lights = np.zeros(count, Light.dtype)
    lights["centre"] = rng.integers(0, size, (count, 2))
    lights["radius"] = np.maximum(np.round(size * (0.01 + 0.085 * rng.random(count) ** 2.5)), 2)
    lights["brightness"] = rng.uniform(0.12, 0.45, count)
    palette = np.array(
        [[1.0, 0.55, 0.15], [1.0, 0.3, 0.45], [0.3, 0.55, 1.0], [0.2, 0.9, 0.8], [1.0, 0.85, 0.5]]
    )
    tint = rng.uniform(0.85, 1.15, (count, 3))
    lights["colour"] = palette[rng.integers(0, len(palette), count)] * tint
    return lights


def reference_lists(lights: np.ndarray, tiles_x: int, tiles_y: int) -> list[set]:
    """Which lights touch each tile (numpy: every light against every tile)."""
    low_x = np.arange(tiles_x)[None, None, :] * TILE
    low_y = np.arange(tiles_y)[None, :, None] * TILE
    cx = lights["centre"][:, 0, None, None]
    cy = lights["centre"][:, 1, None, None]
    dx = cx - np.clip(cx, low_x, low_x + TILE)
    dy = cy - np.clip(cy, low_y, low_y + TILE)
    touching = dx * dx + dy * dy < (lights["radius"] ** 2)[:, None, None]
    return [
        set(np.flatnonzero(touching[:, ty, tx_])) for ty in range(tiles_y) for tx_ in range(tiles_x)
    ]


def reference_image(lights: np.ndarray, size: int) -> np.ndarray:
    """numpy's rendering: every light added over its bounding box."""
    image = np.zeros((size, size, 3), np.float64)
    for light in lights:
        (cx, cy), r = light["centre"].astype(np.float64), float(light["radius"])
        x0, y0 = max(int(cx - r), 0), max(int(cy - r), 0)
        x1, y1 = min(int(cx + r) + 1, size), min(int(cy + r) + 1, size)
        y, x = np.mgrid[y0:y1, x0:x1] + 0.5
        d = np.hypot(x - cx, y - cy)
        q = np.clip(1.0 - d * d / (r * r), 0.0, None)
        t = np.clip((d - r) / -1.5, 0.0, 1.0)
        disc = t * t * (3 - 2 * t)
        weight = np.where(d < r, light["brightness"] * (0.35 * disc + 0.65 * q * q), 0.0)
        image[y0:y1, x0:x1] += weight[..., None] * light["colour"]
    return image


def walk(heads: np.ndarray, next_node: np.ndarray, node_light: np.ndarray) -> list[set]:
    """The host's reading of the lists the GPU built (each node visited once)."""
    lists = []
    for head in heads:
        members, node = [], int(head)
        while node != END:
            members.append(int(node_light[node]))
            node = int(next_node[node])
        assert len(members) == len(set(members)), "a light twice in one list"
        lists.append(set(members))
    return lists


class TileLists:
    """The lists of one scene: heads per tile, the node pool (grown when too small), and
    the shaded image."""

    def __init__(self, lights: np.ndarray, size: int, capacity: int):
        self.lights = tx.to_device(lights)
        self.tiles = -(-size // TILE)
        self.heads = tx.empty(self.tiles * self.tiles, np.uint32)
        self.node_count = tx.empty(1, np.uint32)
        self.image = tx.empty((size, size, 4), np.float32)
        self.lengths = tx.empty(self.tiles * self.tiles, np.uint32)
        self.first_capacity = capacity
        self.allocate(capacity)

    def allocate(self, capacity: int) -> None:
        self.next = tx.empty(capacity, np.uint32)
        self.node_light = tx.empty(capacity, np.uint32)

    def build(self) -> int:
        """Build the lists; while the pool overflows, grow it to what was asked for (and a
        quarter more) and build again. Returns the number of nodes."""
        while True:
            self.heads.write(np.full(len(self.heads), END, np.uint32))
            self.node_count.write(np.zeros(1, np.uint32))
            build_lists(
                self.lights,
                self.tiles,
                self.tiles,
                self.heads,
                self.next,
                self.node_light,
                self.node_count,
                threads=len(self.lights),
            )
            needed = int(self.node_count.numpy()[0])  # the one read-back
            if needed <= len(self.next):
                return needed
            self.allocate(needed + needed // 4)

    def shade(self) -> None:
        shade(
            self.lights,
            self.heads,
            self.next,
            self.node_light,
            self.image,
            self.lengths,
            workgroups=(self.tiles, self.tiles, 1),
        )

    def run(self) -> None:
        self.nodes = self.build()
        self.shade()


def main(argv=None):
    cli = _common.parser(__doc__, size=512, size_help="image side in pixels")
    cli.add_argument("--lights", type=int, default=260, help="number of lights")
    cli.add_argument("--capacity", type=int, default=1024, help="nodes in the first pool")
    args = cli.parse_args(argv)
    out_dir = _common.setup(args)
    size = args.size

    lights = random_lights(args.lights, size)
    lists = TileLists(lights, size, max(args.capacity, 1))
    seconds = _common.gpu_seconds(lists.run, reps=3)

    tiles = lists.tiles
    got_lists = walk(lists.heads.numpy(), lists.next.numpy(), lists.node_light.numpy())
    expected_lists = reference_lists(lights, tiles, tiles)
    wrong = sum(got != expected for got, expected in zip(got_lists, expected_lists))
    if wrong:
        raise _common.CheckFailed(f"tile lists: {wrong} of {len(got_lists)} differ from numpy")
    print(f"  check: tile lists match numpy ({lists.nodes} nodes)")
    list_lengths = lists.lengths.numpy()
    _common.check_close("list lengths", list_lengths, [len(s) for s in expected_lists])
    rendered = lists.image.numpy()[..., :3]
    _common.check_close("image", rendered, reference_image(lights, size), atol=2e-4, rtol=1e-4)

    picture = out_dir / "linked_list.png"
    draw(rendered, list_lengths.reshape(tiles, tiles), picture)
    note = f"{lists.nodes} nodes in {tiles * tiles} lists"
    if len(lists.next) > args.capacity:
        note += f"; the node pool grew from {args.capacity} to {len(lists.next)} nodes"
    _common.report(
        "linked_list", f"{size}x{size} pixels, {len(lights)} lights", seconds, [picture], note
    )
    return [picture]


def draw(rendered: np.ndarray, lengths: np.ndarray, path) -> None:
    """Left: the lights (tone-mapped). Right: each tile's list length."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    background, ink = "#0b0c10", "#d8dce6"
    figure, axes = plt.subplots(
        1, 2, figsize=(12.6, 6.4), facecolor=background, layout="constrained"
    )
    toned = 1.0 - np.exp(-1.6 * rendered)  # exposure: bright overlaps saturate gently
    axes[0].imshow(toned ** (1 / 1.8), interpolation="antialiased")
    axes[0].set_title("lights shaded from their tiles' lists", color=ink, fontsize=11)
    heat = axes[1].imshow(lengths, cmap="magma", interpolation="nearest")
    axes[1].set_title(f"list length per {TILE}x{TILE} tile", color=ink, fontsize=11)
    bar = figure.colorbar(heat, ax=axes[1], fraction=0.046, pad=0.03)
    bar.ax.tick_params(colors=ink, labelsize=8)
    bar.outline.set_edgecolor("#30343e")
    for axis in axes:
        axis.set_axis_off()
    figure.savefig(path, dpi=80, facecolor=background)
    plt.close(figure)


if __name__ == "__main__":
    main()
