"""Representative kernels whose WGSL is kept as golden files in tests/golden/wgsl/."""

import math

import pyshader_tx as tx
from pyshader_tx import Array, Array2D, Array3D, f16, f32, i32, mat3x3f, u32, vec2f, vec3f, vec4f

BLOCK = 4
WEIGHTS = (0.25, 0.5, 0.25)


@tx.kernel(workgroup_size=64)
def saxpy(a: f32, x: Array[f32], y: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = a * x[i] + y[i]


@tx.struct
class Particle:
    position: vec3f
    mass: f32
    velocity: vec3f


@tx.func
def gravity(p: Particle, dt: f32) -> vec3f:
    return p.velocity + vec3f(0.0, -9.81, 0.0) * dt


@tx.kernel(workgroup_size=64)
def integrate(particles: Array[Particle], dt: f32):
    i = tx.global_invocation_id().x
    if i >= len(particles):
        return
    p = particles[i]
    p.velocity = gravity(p, dt)
    p.position += p.velocity * dt
    if p.position.y < 0.0:
        p.position.y = -p.position.y
        p.velocity.y *= -0.5
    particles[i] = p


@tx.func
def collatz_steps(start: u32) -> u32:
    n = start
    steps = u32(0)
    while n != 1 and steps < 1000:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@tx.kernel(workgroup_size=64)
def control_flow(values: Array[i32], out: Array[i32]):
    i = tx.global_invocation_id().x
    if i >= len(out):
        return
    total = 0
    for k in range(10):
        if k == 3:
            continue
        if k > 7:
            break
        total += values[i] // (k + 1) - values[i] % (k - 5)
    for k in range(8, 0, -2):
        total -= k
    a, b = total, values[i]
    a, b = b, a
    out[i] = a - b + i32(collatz_steps(u32(i) + 1))


@tx.kernel(workgroup_size=(8, 8))
def blur_rows(image: Array2D[f32], out: Array2D[f32]):
    gid = tx.global_invocation_id()
    row, col = gid.y, gid.x
    if row >= image.shape[0] or col >= image.shape[1]:
        return
    acc = 0.0
    for k in range(3):
        c = clamp_index(i32(col) + k - 1, i32(image.shape[1]))
        acc += WEIGHTS[k] * image[row, u32(c)]
    out[row, col] = acc


@tx.func
def clamp_index(i: i32, n: i32) -> i32:
    return min(max(i, 0), n - 1)


@tx.kernel(workgroup_size=64)
def vectors_and_matrices(m: mat3x3f, points: Array[vec3f], out: Array[vec4f]):
    i = tx.global_invocation_id().x
    if i >= len(points):
        return
    p = m @ points[i]
    q = vec4f(p, 1.0)
    q.w = tx.length(p.xy) + tx.dot(p, p)
    out[i] = q.zyxw * 0.5 + vec4f(math.pi)


@tx.kernel(workgroup_size=64)
def half_precision(x: Array[f16], out: Array[f16]):
    i = tx.global_invocation_id().x
    if i < len(x):
        h = x[i] * f16(2.0) + 1.0
        out[i] = tx.clamp(h, f16(-100.0), f16(100.0))


@tx.kernel(workgroup_size=64)
def specialized(x: Array[f32], out: Array[f32], BLOCK_SIZE: tx.Const[int]):
    i = tx.global_invocation_id().x
    if i * BLOCK_SIZE >= len(x):
        return
    local = tx.local_array(f32, BLOCK_SIZE)
    for k in range(u32(BLOCK_SIZE)):
        local[k] = x[i * BLOCK_SIZE + k]
    best = local[0]
    for k in range(1, BLOCK_SIZE):
        best = max(best, local[k])
    out[i] = best


@tx.kernel(workgroup_size=(4, 4, 4))
def volume(grid: Array3D[u32], bits: Array[u32]):
    gid = tx.global_invocation_id()
    if gid.x < grid.shape[2] and gid.y < grid.shape[1] and gid.z < grid.shape[0]:
        v = grid[gid.z, gid.y, gid.x]
        flags = (v << 3) ^ (v >> 1) | tx.reverse_bits(v) & 0xFF
        grid[gid.z, gid.y, gid.x] = tx.count_one_bits(flags) + tx.extract_bits(v, 2, 4)
        if gid.x == 0 and gid.y == 0 and gid.z == 0:
            bits[0] = tx.bitcast(u32, f32(v) ** 0.5)


@tx.kernel(workgroup_size=256)
def block_sums(x: Array[f32], out: Array[f32]):
    tile = tx.workgroup_array(f32, 256)
    lid = tx.local_invocation_index()
    i = tx.global_invocation_id().x
    tile[lid] = 0.0
    if i < len(x):
        tile[lid] = x[i]
    tx.workgroup_barrier()
    stride = u32(128)
    while stride > 0:
        if lid < stride:
            tile[lid] += tile[lid + stride]
        tx.workgroup_barrier()
        stride //= 2
    total = tx.workgroup_uniform_load(tile[0])
    if lid == 0:
        out[tx.workgroup_id().x] = total


@tx.kernel(workgroup_size=64)
def subgroup_compact(x: Array[f32], out: Array[f32], counts: Array[u32], sums: Array[f32]):
    """Packs the positive values of each subgroup at the front of its slice of `out`."""
    i = tx.global_invocation_id().x
    value = 0.0
    if i < len(x):
        value = x[i]
    keep = value > 0.0
    slot = tx.subgroup_exclusive_add(u32(1) if keep else u32(0))
    start = i - tx.subgroup_invocation_id()
    if keep:
        out[start + slot] = value
    ballot = tx.subgroup_ballot(keep)
    total = tx.subgroup_add(value)
    if tx.subgroup_invocation_id() == 0:  # one invocation per subgroup writes the totals
        group = start // tx.subgroup_size()
        bits = tx.count_one_bits(ballot)
        counts[group] = bits.x + bits.y + bits.z + bits.w
        sums[group] = total


@tx.kernel(workgroup_size=64)
def atomic_histogram(x: Array[u32], bins: Array[tx.Atomic[u32]], total: Array[tx.Atomic[f32]]):
    """Counts in workgroup memory, one atomic per bin and workgroup; an f32 sum (a
    compare-exchange loop on the bits in this standard WGSL and in SPIR-V)."""
    local = tx.workgroup_array(tx.Atomic[u32], 16)
    i = tx.global_invocation_id().x
    lid = tx.local_invocation_index()
    if i < len(x):
        tx.atomic_add(local[x[i] % 16], 1)
        tx.atomic_add(total[0], f32(x[i]))
    tx.workgroup_barrier()
    if lid < 16:
        count = tx.atomic_load(local[lid])
        r = tx.atomic_compare_exchange(bins[lid], 0, count)
        if not r.exchanged and count > 0:
            tx.atomic_add(bins[lid], count)


@tx.func
def checked_root(v: f32) -> f32:
    if v < 0.0:
        print("negative:", v)
    return tx.sqrt(abs(v))


@tx.kernel(workgroup_size=64)
def printing(x: Array[f32], out: Array[f32]):
    """print() in a kernel and a device function: one record per print in the hidden
    print buffer (site id, global id, value words), claimed with one atomicAdd."""
    i = tx.global_invocation_id().x
    if i < len(x):
        out[i] = checked_root(x[i])
        print("i =", i, vec2f(x[i], out[i]), i % 2 == 0, sep=" ")


# (name, kernel) pairs: specialized kernels appear once per specialization. These goldens show
# the backends' translation of what the frontend wrote, so the kernels are compiled (below, at
# import) without the optimisation passes, whose own goldens are in tests/golden/passes/.
_optimize, tx.options.optimize = tx.options.optimize, False
GOLDEN_KERNELS = [
    ("saxpy", saxpy),
    ("integrate", integrate),
    ("control_flow", control_flow),
    ("blur_rows", blur_rows),
    ("vectors_and_matrices", vectors_and_matrices),
    ("half_precision", half_precision),
    ("specialized_block4", specialized.specialize(BLOCK_SIZE=BLOCK)),
    ("volume", volume),
    ("block_sums", block_sums),
    ("subgroup_compact", subgroup_compact),
    ("atomic_histogram", atomic_histogram),
    ("printing", printing),
]
try:
    for _, _kernel in GOLDEN_KERNELS:
        _kernel.compiled()
finally:
    tx.options.optimize = _optimize
