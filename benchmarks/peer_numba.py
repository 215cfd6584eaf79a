"""The Numba-CUDA side of `bench_peers.py`: the kernels of `peer_kernels.py` written as a new
Numba user writes them from Numba's documentation (`@cuda.jit`, `cuda.grid`,
`cuda.shared.array`, `cuda.syncthreads`, `cuda.atomic.add`, `kernel[blocks, threads](...)`),
with the same algorithm, block size and tile sizes as the pyshader_tx kernels, and one
`run_<name>(arrays, params)` per benchmark entry that launches them on a dict of device
arrays (`cuda.to_device`).

Numba types a Python float literal as float64 (and then the arithmetic it touches); the
kernels write their constants as `float32(...)`, and the benchmark passes scalars as
`np.float32`, so that both sides compute in f32 as the pyshader_tx kernels do.

Import it only where numba-cuda is installed (`bench_peers.py` does). Under numpy 2.5 the
numba-cuda of the device image needs `np.row_stack` (removed there) to exist before numba
is imported: `bench_peers.py` sets it. `NUMBA_ENABLE_CUDASIM=1` runs these kernels on
Numba's CPU simulator (slowly), which is how they were checked without an NVIDIA GPU.
"""

import math

import numpy as np
from numba import cuda, float32, uint32

from peer_kernels import BINS, BLOCK, BLOCK_ROWS, BLUR_RADIUS, RADIUS, TILE, TILE_DIM, TPB

# A shared array's shape must be a constant: the transpose tile's padded row, as a global.
TILE_PADDED = TILE_DIM + 1

# `peer_kernels.Particle`'s 32 bytes as a record of scalar fields (Numba's records). With
# align=True, as the fields are: Numba reads the fields of a record dtype made without it
# byte by byte (LLVM alignment 1), which made this kernel 6x slower on an H200 (4.47 ms
# against 0.74 ms for 2^24 particles).
PARTICLE = np.dtype(
    [
        ("px", np.float32),
        ("py", np.float32),
        ("pz", np.float32),
        ("mass", np.float32),
        ("vx", np.float32),
        ("vy", np.float32),
        ("vz", np.float32),
        ("age", np.float32),
    ],
    align=True,
)


def blocks(n: int, size: int = BLOCK) -> int:
    return (n + size - 1) // size


# 1. saxpy
@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def run_saxpy(d, p):
    saxpy[blocks(d["out"].size), BLOCK](p["a"], d["x"], d["y"], d["out"])


# 2. Jacobi
@cuda.jit
def jacobi(u, u_new):
    col, row = cuda.grid(2)
    rows, cols = u.shape
    if row >= rows or col >= cols:
        return
    if row == 0 or col == 0 or row == rows - 1 or col == cols - 1:
        u_new[row, col] = u[row, col]
    else:
        u_new[row, col] = float32(0.25) * (
            u[row - 1, col] + u[row + 1, col] + u[row, col - 1] + u[row, col + 1]
        )


def run_jacobi(d, p):
    rows, cols = d["u"].shape
    jacobi[(blocks(cols, TILE), blocks(rows, TILE)), (TILE, TILE)](d["u"], d["u_new"])


# 3. histogram
@cuda.jit
def histogram(data, bins):
    local_bins = cuda.shared.array(BINS, uint32)
    t = cuda.threadIdx.x
    local_bins[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < data.size:
        cuda.atomic.add(local_bins, data[i], 1)
        i += stride
    cuda.syncthreads()
    cuda.atomic.add(bins, t, local_bins[t])


def run_histogram(d, p):
    histogram[p["groups"], BLOCK](d["data"], d["bins"])


@cuda.jit
def histogram_for(data, bins):
    local_bins = cuda.shared.array(BINS, uint32)
    t = cuda.threadIdx.x
    local_bins[t] = 0
    cuda.syncthreads()
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, data.size, stride):
        cuda.atomic.add(local_bins, data[i], 1)
    cuda.syncthreads()
    cuda.atomic.add(bins, t, local_bins[t])


def run_histogram_for(d, p):
    histogram_for[p["groups"], BLOCK](d["data"], d["bins"])


# 4. Mandelbrot
@cuda.jit
def mandelbrot(x0, y0, step, max_iterations, counts):
    col, row = cuda.grid(2)
    if row >= counts.shape[0] or col >= counts.shape[1]:
        return
    cr = x0 + float32(col) * step
    ci = y0 + float32(row) * step
    zr = float32(0.0)
    zi = float32(0.0)
    n = 0
    while n < max_iterations and zr * zr + zi * zi <= float32(4.0):
        zr, zi = zr * zr - zi * zi + cr, float32(2.0) * zr * zi + ci
        n += 1
    counts[row, col] = n


def run_mandelbrot(d, p):
    rows, cols = d["counts"].shape
    mandelbrot[(blocks(cols, TILE), blocks(rows, TILE)), (TILE, TILE)](
        p["x0"], p["y0"], p["step"], p["max_iterations"], d["counts"]
    )


# 5. transpose
@cuda.jit
def transpose(src, dst):
    tile = cuda.shared.array((TILE_DIM, TILE_PADDED), float32)  # +1: no bank conflicts
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE_DIM + tx
    y = cuda.blockIdx.y * TILE_DIM + ty
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        if x < src.shape[1] and y + j < src.shape[0]:
            tile[ty + j, tx] = src[y + j, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE_DIM + tx
    y = cuda.blockIdx.x * TILE_DIM + ty
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        if x < dst.shape[1] and y + j < dst.shape[0]:
            dst[y + j, x] = tile[tx, ty + j]


def run_transpose(d, p):
    rows, cols = d["src"].shape
    grid = (blocks(cols, TILE_DIM), blocks(rows, TILE_DIM))
    transpose[grid, (TILE_DIM, BLOCK_ROWS)](d["src"], d["dst"])


# 6. tree reduction and one atomic per block
@cuda.jit
def block_sum(x, total):
    partial = cuda.shared.array(BLOCK, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    partial[t] = x[i] if i < x.size else float32(0.0)
    cuda.syncthreads()
    half = BLOCK // 2
    for k in range(8):  # log2(BLOCK) levels
        if t < half:
            partial[t] += partial[t + half]
        cuda.syncthreads()
        half //= 2
    if t == 0:
        cuda.atomic.add(total, 0, partial[0])


def run_block_sum(d, p):
    block_sum[blocks(d["x"].size), BLOCK](d["x"], d["total"])


# 7. Numba's documented fast_matmul
@cuda.jit
def fast_matmul(A, B, C):
    # Define an array in the shared memory
    # The size and type of the arrays must be known at compile time
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)

    x, y = cuda.grid(2)

    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x  # blocks per grid

    # Each thread computes one element in the result matrix.
    # The dot product is chunked into dot products of TPB-long vectors.
    tmp = float32(0.0)
    for i in range(bpg):
        # Preload data into shared memory
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]

        # Wait until all threads finish preloading
        cuda.syncthreads()

        # Computes partial product on the shared memory
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]

        # Wait until all threads finish computing
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


def run_fast_matmul(d, p):
    rows, cols = d["C"].shape
    grid = (blocks(cols, TPB), blocks(rows, TPB))
    fast_matmul[grid, (TPB, TPB)](d["A"], d["B"], d["C"])


# 8. all-pairs n-body: bodies as an (n, 4) array of x, y, z, mass
@cuda.jit
def nbody_accelerations(bodies, accelerations, softening):
    i = cuda.grid(1)
    n = bodies.shape[0]
    if i >= n:
        return
    x = bodies[i, 0]
    y = bodies[i, 1]
    z = bodies[i, 2]
    ax = float32(0.0)
    ay = float32(0.0)
    az = float32(0.0)
    eps2 = softening * softening
    for j in range(n):
        dx = bodies[j, 0] - x
        dy = bodies[j, 1] - y
        dz = bodies[j, 2] - z
        r2 = dx * dx + dy * dy + dz * dz + eps2
        s = bodies[j, 3] / (r2 * math.sqrt(r2))
        ax += dx * s
        ay += dy * s
        az += dz * s
    accelerations[i, 0] = ax
    accelerations[i, 1] = ay
    accelerations[i, 2] = az
    accelerations[i, 3] = float32(0.0)


def run_nbody(d, p):
    n = d["bodies"].shape[0]
    nbody_accelerations[blocks(n), BLOCK](d["bodies"], d["accelerations"], p["softening"])


# 9. softmax per row: one block per row, shared-memory tree reductions (max, then sum)
@cuda.jit
def softmax(x, out):
    row = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    buf = cuda.shared.array(BLOCK, float32)
    m = float32(-math.inf)
    for c in range(t, cols, BLOCK):
        m = max(m, x[row, c])
    buf[t] = m
    cuda.syncthreads()
    half = BLOCK // 2
    for k in range(8):
        if t < half:
            buf[t] = max(buf[t], buf[t + half])
        cuda.syncthreads()
        half //= 2
    m = buf[0]
    cuda.syncthreads()  # everyone has read buf[0] before it is reused
    s = float32(0.0)
    for c in range(t, cols, BLOCK):
        s += math.exp(x[row, c] - m)
    buf[t] = s
    cuda.syncthreads()
    half = BLOCK // 2
    for k in range(8):
        if t < half:
            buf[t] += buf[t + half]
        cuda.syncthreads()
        half //= 2
    s = buf[0]
    for c in range(t, cols, BLOCK):
        out[row, c] = math.exp(x[row, c] - m) / s


def run_softmax(d, p):
    softmax[d["x"].shape[0], BLOCK](d["x"], d["out"])


# 10. 1-D convolution
@cuda.jit
def convolve(x, weights, out):
    i = cuda.grid(1)
    n = x.size
    if i >= n:
        return
    acc = float32(0.0)
    for k in range(-RADIUS, RADIUS + 1):
        j = i + k
        if j >= 0 and j < n:
            acc += weights[k + RADIUS] * x[j]
    out[i] = acc


def run_convolve(d, p):
    convolve[blocks(d["x"].size), BLOCK](d["x"], d["weights"], d["out"])


# 11. SpMV, CSR, one row per thread
@cuda.jit
def spmv_csr(indptr, indices, data, x, y):
    row = cuda.grid(1)
    if row >= y.size:
        return
    acc = float32(0.0)
    for k in range(indptr[row], indptr[row + 1]):
        acc += data[k] * x[indices[k]]
    y[row] = acc


def run_spmv(d, p):
    spmv_csr[blocks(d["y"].size), BLOCK](d["indptr"], d["indices"], d["data"], d["x"], d["y"])


# 12. bitonic sort: one launch per step (k, j)
@cuda.jit
def bitonic_step(keys, j, k):
    i = cuda.grid(1)
    if i >= keys.size:
        return
    ixj = i ^ j
    if ixj > i:
        a = keys[i]
        b = keys[ixj]
        if (i & k) == 0 and a > b or (i & k) != 0 and a < b:
            keys[i] = b
            keys[ixj] = a


def run_bitonic(d, p):
    keys = d["keys"]
    keys.copy_to_device(d["source"])  # the unsorted keys again
    n = keys.size
    k = 2
    while k <= n:
        j = k // 2
        while j > 0:
            bitonic_step[blocks(n), BLOCK](keys, j, k)
            j //= 2
        k *= 2


# 13. separable blur, two passes
@cuda.jit
def blur_rows(src, weights, dst):
    col, row = cuda.grid(2)
    rows, cols = src.shape
    if row >= rows or col >= cols:
        return
    acc = float32(0.0)
    for k in range(-BLUR_RADIUS, BLUR_RADIUS + 1):
        c = min(max(col + k, 0), cols - 1)
        acc += weights[k + BLUR_RADIUS] * src[row, c]
    dst[row, col] = acc


@cuda.jit
def blur_columns(src, weights, dst):
    col, row = cuda.grid(2)
    rows, cols = src.shape
    if row >= rows or col >= cols:
        return
    acc = float32(0.0)
    for k in range(-BLUR_RADIUS, BLUR_RADIUS + 1):
        r = min(max(row + k, 0), rows - 1)
        acc += weights[k + BLUR_RADIUS] * src[r, col]
    dst[row, col] = acc


def run_blur(d, p):
    rows, cols = d["image"].shape
    grid = (blocks(cols, TILE), blocks(rows, TILE))
    blur_rows[grid, (TILE, TILE)](d["image"], d["weights"], d["across"])
    blur_columns[grid, (TILE, TILE)](d["across"], d["weights"], d["blurred"])


# 14. block inclusive scan (Hillis-Steele in shared memory)
@cuda.jit
def block_scan(x, out):
    temp = cuda.shared.array(BLOCK, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    temp[t] = x[i] if i < x.size else float32(0.0)
    cuda.syncthreads()
    offset = 1
    for k in range(8):  # log2(BLOCK) steps
        v = temp[t - offset] if t >= offset else float32(0.0)
        cuda.syncthreads()
        temp[t] += v
        cuda.syncthreads()
        offset *= 2
    if i < out.size:
        out[i] = temp[t]


def run_block_scan(d, p):
    block_scan[blocks(d["x"].size), BLOCK](d["x"], d["out"])


# 15. particles: a record array (PARTICLE), updated in place
@cuda.jit
def move_particles(particles, gx, gy, gz, dt):
    i = cuda.grid(1)
    if i >= particles.size:
        return
    p = particles[i]
    p.vx += gx * dt
    p.vy += gy * dt
    p.vz += gz * dt
    p.px += p.vx * dt
    p.py += p.vy * dt
    p.pz += p.vz * dt
    if p.py < 0:  # bounce, losing half the speed
        p.py = -p.py
        p.vy = float32(-0.5) * p.vy
    p.age += dt


def run_particles(d, p):
    gx, gy, gz = (np.float32(g) for g in p["gravity"])
    particles = d["particles"]
    move_particles[blocks(particles.size), BLOCK](particles, gx, gy, gz, p["dt"])


# -- diagnostics (bench_peers.py --diagnostics) ----------------------------------------------


@cuda.jit
def spmv_csr_loads_first(indptr, indices, data, x, y):
    row = cuda.grid(1)
    if row >= y.size:
        return
    acc = float32(0.0)
    k = indptr[row]
    end = indptr[row + 1]
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


def run_spmv_u32(d, p):
    spmv_csr[blocks(d["y"].size), BLOCK](d["indptr"], d["indices"], d["data"], d["x"], d["y"])


def run_spmv_loads_first(d, p):
    spmv_csr_loads_first[blocks(d["y"].size), BLOCK](
        d["indptr"], d["indices"], d["data"], d["x"], d["y"]
    )


@cuda.jit
def touch(x, marker):
    i = cuda.grid(1)
    if i < x.size and x[i] == marker:
        x[i] = marker + 1


def run_touch_chain(d, p):
    x = d["x"]
    for _ in range(p["launches"]):
        touch[blocks(x.size), BLOCK](x, p["marker"])
