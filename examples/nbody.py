"""Gravitational n-body: a companion flies past a disc of stars and raises tidal arms.

This is demo.py's n-body turned into a picture. There, each body falls towards one fixed
centre; here every body pulls on every other ("all pairs", n^2 interactions per step): a
heavy centre, a disc of light bodies on circular orbits around it, and a companion of half
its mass on a parabolic orbit that passes just outside the disc. Its pull draws the disc
into a bridge and a tail, the classic picture of interacting galaxies (Toomre & Toomre,
1972). The bodies' paths are drawn with matplotlib, coloured by where in the disc each
started.

The GPU technique is the tiled all-pairs loop (as in GPU Gems 3, chapter 31). Each
invocation owns one body and must visit all n bodies. The workgroup walks through them in
tiles of 64: every invocation loads one body of the tile into workgroup memory
(`tx.workgroup_array`), `tx.workgroup_barrier()`, then all 64 invocations read the whole tile
from on-chip memory, and a second barrier lets the next tile overwrite it. Each body is then
read from the storage buffer n / 64 times per step instead of n times. Invocations past the
last body still take part (they load massless bodies and store nothing), because every
invocation of a workgroup must reach each barrier.

A step reads the bodies from one `tx.DeviceArray` and writes them to another (ping-pong: a
body's new position must not be seen by a body still summing the old ones), integrating with
the symplectic Euler scheme (kick the velocity with the acceleration, then drift the
position with the new velocity), which keeps orbits stable over many steps. Nothing leaves
the GPU except the positions sampled for the picture.

The check runs the first 40 steps again and the same integration in numpy (float64): the
positions must agree to 1e-5 (the disc's radius is 1). It does not compare the whole run:
bodies that pass close to the companion are chaotic, so float32 sums taken in another order
drift apart from numpy's over hundreds of steps (by about 1e-3 for a few bodies after 600
steps) without anything being wrong, and numpy needs seconds per hundred steps. Over the
whole run it checks what must hold however the sums are rounded: the forces come in equal
and opposite pairs, so the total momentum, zero at the start, stays zero (to 1e-5).
"""

from __future__ import annotations

import math

import numpy as np

import _common
import pyshader_tx as tx
from pyshader_tx import Array, f32, vec3f, vec4f

TILE = 64  # bodies per workgroup and per tile of workgroup memory
CENTRE_MASS = 1.0
COMPANION_MASS = 0.5
DISC_MASS = 0.02  # all disc bodies together
SOFTENING = 0.05  # gravity is softened at short range: 1 / (r^2 + SOFTENING^2)


@tx.struct
class Body:
    position: vec3f
    mass: f32
    velocity: vec3f


@tx.func
def pull(position: vec3f, other: vec4f, softening: f32) -> vec3f:
    """Acceleration at `position` towards `other` (xyz: position, w: mass), with G = 1."""
    offset = other.xyz - position
    distance_squared = tx.dot(offset, offset) + softening * softening
    return offset * (other.w / (distance_squared * tx.sqrt(distance_squared)))


@tx.kernel(workgroup_size=TILE)
def gravity_step(bodies: Array[Body], next_bodies: Array[Body], dt: f32, softening: f32):
    i = tx.global_invocation_id().x
    n = len(bodies)
    me = bodies[min(i, n - 1)]  # past the end: a stand-in, computed but not stored

    tile = tx.workgroup_array(vec4f, TILE)
    acceleration = vec3f(0.0)
    for start in range(0, n, TILE):
        # Every invocation loads one body of this tile (massless past the end) ...
        j = start + tx.local_invocation_index()
        other = bodies[min(j, n - 1)]
        tile[tx.local_invocation_index()] = vec4f(other.position, other.mass if j < n else 0.0)
        tx.workgroup_barrier()
        # ... and all of them read the whole tile from workgroup memory.
        for k in range(TILE):
            acceleration += pull(me.position, tile[k], softening)  # zero for itself
        tx.workgroup_barrier()  # before the next tile overwrites this one

    if i < n:
        me.velocity += acceleration * dt  # kick
        me.position += me.velocity * dt  # drift
        next_bodies[i] = me


def initial_bodies(n: int, seed: int = 3) -> np.ndarray:
    """Body 0 the centre, body 1 the companion on a parabolic orbit, then a disc of n - 2."""
    rng = np.random.default_rng(seed)
    bodies = np.zeros(n, Body.dtype)
    disc = n - 2
    radius = np.sqrt(rng.uniform(0.2**2, 1.0**2, disc))  # uniform in area
    angle = rng.uniform(0, 2 * math.pi, disc)
    speed = np.sqrt(CENTRE_MASS / radius)  # circular orbits, counter-clockwise
    bodies["position"][2:] = (
        np.stack([np.cos(angle), np.sin(angle), 0 * angle], 1) * radius[:, None]
    )
    bodies["velocity"][2:] = (
        np.stack([-np.sin(angle), np.cos(angle), 0 * angle], 1) * speed[:, None]
    )
    bodies["mass"][2:] = DISC_MASS / disc

    # The companion relative to the centre: a parabola with pericentre q, 90 degrees before
    # it, passing the same way round as the disc turns (that raises the strongest arms).
    q, mu = 1.6, CENTRE_MASS + COMPANION_MASS
    nu = -math.pi / 2
    r = 2 * q / (1 + math.cos(nu))
    v = math.sqrt(mu / (2 * q))
    relative_position = np.array([r * math.cos(nu), r * math.sin(nu), 0.0])
    radial, tangential = v * math.sin(nu), v * (1 + math.cos(nu))
    relative_velocity = np.array(
        [
            radial * math.cos(nu) - tangential * math.sin(nu),
            radial * math.sin(nu) + tangential * math.cos(nu),
            0.0,
        ]
    )
    # Centre and companion share their momentum: the centre of mass stays at rest.
    share = COMPANION_MASS / mu
    centre_position, centre_velocity = -share * relative_position, -share * relative_velocity
    bodies["position"][2:] += centre_position
    bodies["velocity"][2:] += centre_velocity
    bodies[0] = (centre_position, CENTRE_MASS, centre_velocity)
    bodies[1] = (
        centre_position + relative_position,
        COMPANION_MASS,
        centre_velocity + relative_velocity,
    )
    # The disc's own (random) momentum is removed too: the whole system's momentum is zero.
    momentum = (bodies["velocity"] * bodies["mass"][:, None]).sum(axis=0)
    bodies["velocity"] -= momentum / bodies["mass"].sum()
    return bodies


def simulate(bodies: np.ndarray, steps: int, dt: float, every: int):
    """Run on the GPU; returns the positions every `every` steps (frames, n, 3) and the final
    bodies."""
    state = [tx.to_device(bodies), tx.empty(bodies.shape, Body.dtype)]
    path = [bodies["position"].copy()]
    for step in range(1, steps + 1):
        gravity_step(state[(step - 1) % 2], state[step % 2], dt, SOFTENING, threads=len(bodies))
        if step % every == 0:
            path.append(state[step % 2].numpy()["position"])
    return np.stack(path), state[steps % 2].numpy()


def reference(bodies: np.ndarray, steps: int, dt: float):
    """The same integration in numpy (float64); returns the final positions and velocities."""
    position = bodies["position"].astype(np.float64)
    velocity = bodies["velocity"].astype(np.float64)
    mass = bodies["mass"].astype(np.float64)
    for _ in range(steps):
        offset = position[None, :, :] - position[:, None, :]  # [i, j] = x_j - x_i
        distance_squared = (offset**2).sum(axis=2) + SOFTENING**2
        weight = mass[None, :] / (distance_squared * np.sqrt(distance_squared))
        velocity += (offset * weight[:, :, None]).sum(axis=1) * dt
        position += velocity * dt
    return position, velocity


def check(bodies, final, check_steps, dt):
    """The first `check_steps` steps against numpy; the whole run's total momentum."""
    _, start = simulate(bodies, check_steps, dt, every=check_steps)
    position, _ = reference(bodies, check_steps, dt)
    error = np.abs(start["position"] - position).max()  # the disc's radius is 1
    print(f"  check: after {check_steps} steps, max |GPU - numpy| = {error:.1e}")
    if not error < 1e-5:
        raise _common.CheckFailed(f"nbody: positions differ from numpy's by {error:.1e}")
    momentum = np.abs((final["velocity"] * final["mass"][:, None]).sum(axis=0)).max()
    print(f"  check: total momentum at the end {momentum:.1e} (zero at the start)")
    if not momentum < 1e-5:
        raise _common.CheckFailed(f"nbody: momentum is not conserved ({momentum:.1e})")


def plot(path, bodies, filename, tail: float):
    """The disc bodies' paths over the last `tail` of the run, fading in, coloured by where
    each started, and the companion's whole orbit, all seen from the centre body."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection

    xy = path[:, :, :2] - path[:, :1, :2]  # relative to the centre body
    # Turn the view so that the companion ends to the right (a landscape picture).
    turn = 0.25 - math.atan2(xy[-1, 1, 1], xy[-1, 1, 0])
    xy = xy @ np.array([[math.cos(turn), math.sin(turn)], [-math.sin(turn), math.cos(turn)]])
    frames = xy.shape[0]
    first = int(frames * (1 - tail))
    start_radius = np.linalg.norm(xy[0, 2:], axis=1)
    colours = plt.get_cmap("plasma")(np.clip((start_radius - 0.2) / 0.8, 0, 1) * 0.8 + 0.15)

    # One segment per body per sample, more opaque towards the end.
    points = xy[first:, 2:]  # (samples, bodies, 2)
    segments = np.stack([points[:-1], points[1:]], axis=2).reshape(-1, 2, 2)
    fade = np.linspace(0.0, 1.0, len(points) - 1)[:, None] ** 2
    segment_colours = np.broadcast_to(colours, (len(points) - 1, *colours.shape)).copy()
    segment_colours[..., 3] = 0.6 * fade
    segment_colours = segment_colours.reshape(-1, 4)

    # Frame the heavy bodies and nearly all the disc, 800 pixels along the longer side.
    shown = np.concatenate([xy[-1, :2], np.percentile(xy[-1, 2:], [0.5, 99.5], axis=0)])
    low, high = shown.min(axis=0) - 0.3, shown.max(axis=0) + 0.3
    extent = high - low
    grow = max(extent[0] * 0.6 - extent[1], 0)  # at least 5:3 tall
    low[1], high[1] = low[1] - grow / 2, high[1] + grow / 2
    extent = high - low
    figure, axes = plt.subplots(
        figsize=tuple(8 * extent / extent.max()), dpi=100, facecolor="black"
    )
    axes.set_facecolor("black")
    axes.add_collection(LineCollection(segments, colors=segment_colours, linewidths=0.8))
    axes.scatter(*xy[-1, 2:].T, s=3.0, c=colours, linewidths=0)
    axes.plot(*xy[:, 1].T, color="white", linewidth=0.8, alpha=0.5, linestyle="--")
    for body, size in ((0, 60), (1, 40)):
        axes.scatter(*xy[-1, body], s=size, color="white", zorder=3)
    axes.set_xlim(low[0], high[0])
    axes.set_ylim(low[1], high[1])
    axes.set_aspect("equal")
    axes.axis("off")
    figure.subplots_adjust(0, 0, 1, 1)
    figure.savefig(filename, facecolor="black")
    plt.close(figure)


def main(argv=None):
    cli = _common.parser(__doc__, size=512, size_help="number of bodies")
    cli.add_argument("--steps", type=int, default=600, help="time steps")
    cli.add_argument("--dt", type=float, default=0.01, help="time step")
    cli.add_argument("--every", type=int, default=4, help="steps between trajectory samples")
    cli.add_argument("--check-steps", type=int, default=40, help="steps compared with numpy")
    args = cli.parse_args(argv)
    out = _common.setup(args)

    bodies = initial_bodies(args.size)
    result = []

    def run():
        result[:] = simulate(bodies, args.steps, args.dt, args.every)

    seconds = _common.gpu_seconds(run)
    path, final = result
    check(bodies, final, args.check_steps, args.dt)

    filename = out / "nbody.png"
    plot(path, bodies, filename, tail=0.2)
    interactions = args.size**2 * args.steps
    _common.report(
        "nbody",
        f"{args.size} bodies, {args.steps} steps",
        seconds,
        [filename],
        note=f"{interactions / seconds / 1e9:.2f} G interactions/s, {len(path)} samples read back",
    )
    return [filename]


if __name__ == "__main__":
    main()
