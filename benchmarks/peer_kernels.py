"""The pyshader_tx side of `bench_peers.py`: the kernels of its sixteen entries, written as a
new user writes them from the README's tour and the examples, not tuned (kernels must live
in a file: pyshader_tx reads their source). `peer_numba.py` has the same kernels for
Numba-CUDA, with the same algorithm, workgroup (block) size and tile sizes;
`bench_peers.py` runs both.

Each kernel is declared with `@tx.kernel` as users write it; `UNCHECKED` maps it to the
same function compiled with `checks=False` (no bounds checks, no loop bounding), made from
the undecorated function (`kernel.__wrapped__`), or None where this pyshader_tx has no
`checks=` yet.
"""

import math

import pyshader_tx as tx
from pyshader_tx import Array, Array2D, f32, i32, stdlib, u32, vec3f, vec4f

BLOCK = 256  # invocations per workgroup of the 1-D kernels (Numba: threads per block)
TILE = 16  # the 2-D kernels' workgroups are TILE x TILE
BINS = 256  # histogram bins (one per invocation of a workgroup)
TILE_DIM = 32  # transpose: a TILE_DIM x TILE_DIM tile per workgroup ...
BLOCK_ROWS = 8  # ... of TILE_DIM x BLOCK_ROWS invocations, TILE_DIM / BLOCK_ROWS rows each
TPB = 16  # matmul: TPB x TPB tiles (Numba's documented fast_matmul)
RADIUS = 3  # 1-D convolution: 2 * RADIUS + 1 taps
BLUR_RADIUS = 4  # separable blur: 2 * BLUR_RADIUS + 1 taps per pass


# 1. saxpy: one element per invocation.
@tx.kernel(workgroup_size=BLOCK)
def saxpy(a: f32, x: Array[f32], y: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = a * x[i] + y[i]


# 2. One Jacobi sweep of the 5-point stencil; the boundary is kept.
@tx.kernel(workgroup_size=(TILE, TILE))
def jacobi(u: Array2D[f32], u_new: Array2D[f32]):
    col = tx.global_invocation_id().x
    row = tx.global_invocation_id().y
    rows = u.shape[0]
    cols = u.shape[1]
    if row >= rows or col >= cols:
        return
    if row == 0 or col == 0 or row == rows - 1 or col == cols - 1:
        u_new[row, col] = u[row, col]
    else:
        u_new[row, col] = 0.25 * (
            u[row - 1, col] + u[row + 1, col] + u[row, col - 1] + u[row, col + 1]
        )


# 3. Histogram of values in [0, BINS): per-workgroup bins in workgroup memory (atomics),
# a grid-stride loop over the data, then one atomic add per bin into the global counts.
@tx.kernel(workgroup_size=BLOCK)
def histogram(data: Array[u32], bins: Array[tx.Atomic[u32]]):
    local_bins = tx.workgroup_array(tx.Atomic[u32], BINS)
    t = tx.local_invocation_index()
    tx.atomic_store(local_bins[t], 0)
    tx.workgroup_barrier()
    i = tx.global_invocation_id().x
    stride = tx.num_workgroups().x * BLOCK
    while i < len(data):
        tx.atomic_add(local_bins[data[i]], 1)
        i += stride
    tx.workgroup_barrier()
    tx.atomic_add(bins[t], tx.atomic_load(local_bins[t]))


# 3b. The same with the grid-stride loop written as Numba's guide writes it: a range() with a
# stride known at run time (the compiler proves it ends; the while form above it cannot).
@tx.kernel(workgroup_size=BLOCK)
def histogram_for(data: Array[u32], bins: Array[tx.Atomic[u32]]):
    local_bins = tx.workgroup_array(tx.Atomic[u32], BINS)
    t = tx.local_invocation_index()
    tx.atomic_store(local_bins[t], 0)
    tx.workgroup_barrier()
    for i in range(tx.global_invocation_id().x, len(data), tx.num_workgroups().x * BLOCK):
        tx.atomic_add(local_bins[data[i]], 1)
    tx.workgroup_barrier()
    tx.atomic_add(bins[t], tx.atomic_load(local_bins[t]))


# 4. Mandelbrot escape time: one pixel per invocation, a `while` loop.
@tx.kernel(workgroup_size=(TILE, TILE))
def mandelbrot(x0: f32, y0: f32, step: f32, max_iterations: u32, counts: Array2D[u32]):
    col = tx.global_invocation_id().x
    row = tx.global_invocation_id().y
    if row >= counts.shape[0] or col >= counts.shape[1]:
        return
    cr = x0 + f32(col) * step
    ci = y0 + f32(row) * step
    zr = 0.0
    zi = 0.0
    n = u32(0)
    while n < max_iterations and zr * zr + zi * zi <= 4.0:
        zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
        n += 1
    counts[row, col] = n


# 5. Transpose through a workgroup tile padded by one column (no bank conflicts).
@tx.kernel(workgroup_size=(TILE_DIM, BLOCK_ROWS))
def transpose(src: Array2D[f32], dst: Array2D[f32]):
    tile = tx.workgroup_array(f32, (TILE_DIM, TILE_DIM + 1))
    local = tx.local_invocation_id()
    group = tx.workgroup_id()
    x = group.x * TILE_DIM + local.x
    y = group.y * TILE_DIM + local.y
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        if x < src.shape[1] and y + j < src.shape[0]:
            tile[local.y + j, local.x] = src[y + j, x]
    tx.workgroup_barrier()
    x = group.y * TILE_DIM + local.x
    y = group.x * TILE_DIM + local.y
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        if x < dst.shape[1] and y + j < dst.shape[0]:
            dst[y + j, x] = tile[local.x, local.y + j]


# 6. Sum: a tree reduction in workgroup memory (halving, a barrier per level), then one
# atomic add per workgroup.
@tx.kernel(workgroup_size=BLOCK)
def block_sum(x: Array[f32], total: Array[tx.Atomic[f32]]):
    partial = tx.workgroup_array(f32, BLOCK)
    t = tx.local_invocation_index()
    i = tx.global_invocation_id().x
    partial[t] = x[i] if i < len(x) else 0.0
    tx.workgroup_barrier()
    half = u32(BLOCK // 2)
    for k in range(8):  # log2(BLOCK) levels
        if t < half:
            partial[t] += partial[t + half]
        tx.workgroup_barrier()
        half //= 2
    if t == 0:
        tx.atomic_add(total[0], partial[0])


# 7. Matrix product with TPB x TPB tiles in workgroup memory, as Numba's documentation
# writes it (`fast_matmul`): square matrices, one tile per workgroup along the grid.
@tx.kernel(workgroup_size=(TPB, TPB))
def fast_matmul(A: Array2D[f32], B: Array2D[f32], C: Array2D[f32]):
    sA = tx.workgroup_array(f32, (TPB, TPB))
    sB = tx.workgroup_array(f32, (TPB, TPB))
    x = tx.global_invocation_id().x
    y = tx.global_invocation_id().y
    lx = tx.local_invocation_id().x
    ly = tx.local_invocation_id().y
    bpg = tx.num_workgroups().x  # workgroups per grid
    tmp = 0.0
    for i in range(bpg):
        # Preload the tiles into workgroup memory (zeros past the edges)
        sA[ly, lx] = 0.0
        sB[ly, lx] = 0.0
        if y < A.shape[0] and lx + i * TPB < A.shape[1]:
            sA[ly, lx] = A[y, lx + i * TPB]
        if x < B.shape[1] and ly + i * TPB < B.shape[0]:
            sB[ly, lx] = B[ly + i * TPB, x]
        tx.workgroup_barrier()
        for j in range(TPB):
            tmp += sA[ly, j] * sB[j, lx]
        tx.workgroup_barrier()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


# 8. All-pairs n-body accelerations: xyz position and mass in a vec4f per body, a loop over
# all bodies of a length known at run time.
@tx.kernel(workgroup_size=BLOCK)
def nbody_accelerations(bodies: Array[vec4f], accelerations: Array[vec4f], softening: f32):
    i = tx.global_invocation_id().x
    n = len(bodies)
    if i >= n:
        return
    me = bodies[i].xyz
    acceleration = vec3f(0.0)
    eps2 = softening * softening
    for j in range(n):
        other = bodies[j]
        d = other.xyz - me
        r2 = tx.dot(d, d) + eps2
        acceleration += d * (other.w / (r2 * tx.sqrt(r2)))
    accelerations[i] = vec4f(acceleration, 0.0)


# 9. Softmax of each row: one workgroup per row, workgroup reductions for the maximum and
# the sum (tx.stdlib's, as the tour shows them).
@tx.kernel(workgroup_size=BLOCK)
def softmax(x: Array2D[f32], out: Array2D[f32]):
    row = tx.workgroup_id().x
    t = tx.local_invocation_index()
    cols = x.shape[1]
    m = -math.inf
    for c in range(t, cols, BLOCK):
        m = max(m, x[row, c])
    m = stdlib.workgroup_reduce(m, "max")
    s = 0.0
    for c in range(t, cols, BLOCK):
        s += tx.exp(x[row, c] - m)
    s = stdlib.workgroup_reduce(s, "add")
    for c in range(t, cols, BLOCK):
        out[row, c] = tx.exp(x[row, c] - m) / s


# 10. 1-D convolution with a small filter (2 * RADIUS + 1 taps, zeros past the ends).
@tx.kernel(workgroup_size=BLOCK)
def convolve(x: Array[f32], weights: Array[f32], out: Array[f32]):
    i = i32(tx.global_invocation_id().x)
    n = i32(len(x))
    if i >= n:
        return
    acc = 0.0
    for k in range(-RADIUS, RADIUS + 1):
        j = i + k
        if j >= 0 and j < n:
            acc += weights[k + RADIUS] * x[j]
    out[i] = acc


# 11. Sparse matrix times vector, CSR (scipy's int32 indices), one row per invocation.
@tx.kernel(workgroup_size=BLOCK)
def spmv_csr(
    indptr: Array[i32], indices: Array[i32], data: Array[f32], x: Array[f32], y: Array[f32]
):
    row = tx.global_invocation_id().x
    if row >= len(y):
        return
    acc = 0.0
    for k in range(indptr[row], indptr[row + 1]):
        acc += data[k] * x[indices[k]]
    y[row] = acc


# 12. One step (k, j) of a bitonic sort network; a sort is one launch per step.
@tx.kernel(workgroup_size=BLOCK)
def bitonic_step(keys: Array[u32], j: u32, k: u32):
    i = tx.global_invocation_id().x
    if i >= len(keys):
        return
    ixj = i ^ j
    if ixj > i:
        a = keys[i]
        b = keys[ixj]
        if (i & k) == 0 and a > b or (i & k) != 0 and a < b:
            keys[i] = b
            keys[ixj] = a


# 13. Separable blur: a horizontal then a vertical pass of 2 * BLUR_RADIUS + 1 weights,
# clamped to the edge, straight from device memory.
@tx.kernel(workgroup_size=(TILE, TILE))
def blur_rows(src: Array2D[f32], weights: Array[f32], dst: Array2D[f32]):
    col = i32(tx.global_invocation_id().x)
    row = i32(tx.global_invocation_id().y)
    rows = i32(src.shape[0])
    cols = i32(src.shape[1])
    if row >= rows or col >= cols:
        return
    acc = 0.0
    for k in range(-BLUR_RADIUS, BLUR_RADIUS + 1):
        c = min(max(col + k, 0), cols - 1)
        acc += weights[k + BLUR_RADIUS] * src[row, c]
    dst[row, col] = acc


@tx.kernel(workgroup_size=(TILE, TILE))
def blur_columns(src: Array2D[f32], weights: Array[f32], dst: Array2D[f32]):
    col = i32(tx.global_invocation_id().x)
    row = i32(tx.global_invocation_id().y)
    rows = i32(src.shape[0])
    cols = i32(src.shape[1])
    if row >= rows or col >= cols:
        return
    acc = 0.0
    for k in range(-BLUR_RADIUS, BLUR_RADIUS + 1):
        r = min(max(row + k, 0), rows - 1)
        acc += weights[k + BLUR_RADIUS] * src[r, col]
    dst[row, col] = acc


# 14. Inclusive scan of each workgroup's BLOCK elements (tx.stdlib's workgroup scan).
@tx.kernel(workgroup_size=BLOCK)
def block_scan(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    v = x[i] if i < len(x) else 0.0
    total = stdlib.workgroup_inclusive_scan(v, "add")
    if i < len(out):
        out[i] = total


# 15. Particles as an array of structs: gravity, a step, a bounce on the floor.
@tx.struct
class Particle:
    position: vec3f
    mass: f32
    velocity: vec3f
    age: f32


@tx.kernel(workgroup_size=BLOCK)
def move_particles(particles: Array[Particle], gravity: vec3f, dt: f32):
    i = tx.global_invocation_id().x
    if i >= len(particles):
        return
    p = particles[i]
    p.velocity += gravity * dt
    p.position += p.velocity * dt
    if p.position.y < 0.0:  # bounce, losing half the speed
        p.position.y = -p.position.y
        p.velocity.y = -0.5 * p.velocity.y
    p.age += dt
    particles[i] = p


# -- diagnostics: variants that explain a kernel's ratio (bench_peers.py --diagnostics) ----


@tx.kernel(workgroup_size=BLOCK)
def spmv_csr_u32(
    indptr: Array[u32], indices: Array[u32], data: Array[f32], x: Array[f32], y: Array[f32]
):
    # spmv_csr with unsigned indices and counter (no sign extension in the addresses)
    row = tx.global_invocation_id().x
    if row >= len(y):
        return
    acc = 0.0
    for k in range(indptr[row], indptr[row + u32(1)]):
        acc += data[k] * x[indices[k]]
    y[row] = acc


@tx.kernel(workgroup_size=BLOCK)
def spmv_csr_loads_first(
    indptr: Array[i32], indices: Array[i32], data: Array[f32], x: Array[f32], y: Array[f32]
):
    # spmv_csr unrolled by hand by 4, every load of the four trips before the first product
    row = tx.global_invocation_id().x
    if row >= len(y):
        return
    acc = 0.0
    k = indptr[row]
    end = indptr[row + u32(1)]
    while k + 3 < end:
        c0, c1, c2, c3 = indices[k], indices[k + 1], indices[k + 2], indices[k + 3]
        d0, d1, d2, d3 = data[k], data[k + 1], data[k + 2], data[k + 3]
        x0, x1, x2, x3 = x[c0], x[c1], x[c2], x[c3]
        acc += d0 * x0
        acc += d1 * x1
        acc += d2 * x2
        acc += d3 * x3
        k += 4
    while k < end:
        acc += data[k] * x[indices[k]]
        k += 1
    y[row] = acc


@tx.kernel(workgroup_size=BLOCK)
def touch(x: Array[u32], marker: u32):
    # next to nothing: a chain of these measures what each launch costs by itself
    i = tx.global_invocation_id().x
    if i < len(x) and x[i] == marker:
        x[i] = marker + u32(1)


DIAGNOSTIC_KERNELS = (spmv_csr_u32, spmv_csr_loads_first, touch)

KERNELS = (
    saxpy,
    jacobi,
    histogram,
    histogram_for,
    mandelbrot,
    transpose,
    block_sum,
    fast_matmul,
    nbody_accelerations,
    softmax,
    convolve,
    spmv_csr,
    bitonic_step,
    blur_rows,
    blur_columns,
    block_scan,
    move_particles,
)


def _unchecked(kernel):
    """`kernel`'s function compiled with `checks=False` (None where `tx.kernel` has no
    `checks=` yet)."""
    try:
        return tx.kernel(workgroup_size=kernel.workgroup_size, checks=False)(kernel.__wrapped__)
    except TypeError:
        return None


UNCHECKED = {kernel: _unchecked(kernel) for kernel in KERNELS + DIAGNOSTIC_KERNELS}
