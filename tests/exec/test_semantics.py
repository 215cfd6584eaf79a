"""Execution tests of the language's semantics: kernels run on the adapter and their results
are compared with Python's (API.md, "Semantics" and "Declaring code").

Kernels that use no `tx` calls and run as one invocation are also ordinary Python
functions: their reference result is the same function run by CPython (`kernel.fn`).
"""

import math

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, Array2D, f32, i32, u32, vec2f, vec4f, vec4i

# Module constants used by kernels (resolved from the module's globals).
SCALE = 3
HALF = 0.5
NEGATE = False
TABLE = (10, 20, 30, 40)
FTABLE = (0.25, 1.5, -2.0)
MASK = 0xFFFF0000


def run_serial(kernel, *args, size=8, dtype=np.int32):
    """Run a one-invocation kernel `kernel(*args, out)` on the GPU and in CPython; return
    (gpu_out, python_out)."""
    out = np.zeros(size, dtype)
    kernel(*args, out, workgroups=(1, 1, 1))
    expect = np.zeros(size, dtype)
    kernel.fn(*args, expect)
    return out, expect


def grid(a_values, b_values, dtype):
    """All pairs (a, b) as two flat arrays."""
    a, b = np.meshgrid(np.array(a_values, dtype), np.array(b_values, dtype), indexing="ij")
    return a.ravel().copy(), b.ravel().copy()


# ---------------------------------------------------------------------------------------
# arithmetic: /, //, %, **
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def int_division(a: Array[i32], b: Array[i32], q: Array[i32], r: Array[i32], t: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(a):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        t[i] = a[i] / b[i]


@tx.kernel(workgroup_size=64)
def int_division_by_constants(a: Array[i32], out: Array2D[i32]):
    i = tx.global_invocation_id().x
    if i < len(a):
        out[i, 0] = a[i] // 3
        out[i, 1] = a[i] % 3
        out[i, 2] = a[i] // -3
        out[i, 3] = a[i] % -3
        out[i, 4] = a[i] // 4
        out[i, 5] = a[i] % 4
        out[i, 6] = -7 // 2 + 7 % -2 * 100


def test_int_floor_division_and_modulo_follow_python():
    a, b = grid(range(-9, 10), [-5, -3, -2, -1, 1, 2, 3, 7], np.int32)
    q, r = np.zeros_like(a), np.zeros_like(a)
    t = np.zeros(len(a), np.float32)
    int_division(a, b, q, r, t, threads=len(a))
    np.testing.assert_array_equal(q, [x // y for x, y in zip(a.tolist(), b.tolist())])
    np.testing.assert_array_equal(r, [x % y for x, y in zip(a.tolist(), b.tolist())])
    np.testing.assert_allclose(t, a / b, rtol=1e-6)  # true division gives a float


def test_int_floor_division_and_modulo_by_constants():
    a = np.arange(-13, 14, dtype=np.int32)
    out = np.zeros((len(a), 7), np.int32)
    int_division_by_constants(a, out, threads=len(a))
    x = a.tolist()
    expect = [[v // 3, v % 3, v // -3, v % -3, v // 4, v % 4, -7 // 2 + 7 % -2 * 100] for v in x]
    np.testing.assert_array_equal(out, expect)


@tx.kernel(workgroup_size=64)
def uint_division(a: Array[u32], b: Array[u32], q: Array[u32], r: Array[u32], t: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(a):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        t[i] = a[i] / b[i]


def test_uint_division():
    a, b = grid([0, 1, 5, 17, 100, 4000000000], [1, 2, 3, 7, 1000], np.uint32)
    q, r = np.zeros_like(a), np.zeros_like(a)
    t = np.zeros(len(a), np.float32)
    uint_division(a, b, q, r, t, threads=len(a))
    np.testing.assert_array_equal(q, a // b)
    np.testing.assert_array_equal(r, a % b)
    np.testing.assert_allclose(t, a.astype(np.float64) / b, rtol=1e-6)


@tx.kernel(workgroup_size=64)
def float_division(a: Array[f32], b: Array[f32], q: Array[f32], r: Array[f32], t: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(a):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        t[i] = a[i] / b[i]


def test_float_floor_division_and_modulo_follow_python():
    a, b = grid(
        [-7.5, -3.0, -2.0, -0.5, 0.0, 0.5, 2.0, 3.0, 7.5], [-2.0, -0.5, 0.75, 2.0], np.float32
    )
    q, r, t = np.zeros_like(a), np.zeros_like(a), np.zeros_like(a)
    float_division(a, b, q, r, t, threads=len(a))
    np.testing.assert_array_equal(q, np.floor_divide(a, b))
    np.testing.assert_array_equal(r, np.mod(a, b))  # exact (tests/exec/test_math.py)
    assert (np.sign(r) * np.sign(b) >= 0).all()  # the remainder takes the divisor's sign
    np.testing.assert_allclose(t, a / b, rtol=1e-6)


@tx.kernel(workgroup_size=64)
def vector_division(
    a: Array[vec4i],
    b: Array[vec4i],
    x: Array[vec2f],
    y: Array[vec2f],
    out_i: Array[vec4i],
    out_f: Array[vec2f],
):
    i = tx.global_invocation_id().x
    if i < len(a):
        out_i[4 * i] = a[i] // b[i]
        out_i[4 * i + 1] = a[i] % b[i]
        out_i[4 * i + 2] = a[i] // -3
        out_i[4 * i + 3] = a[i] % 3
        out_f[2 * i] = x[i] // y[i]
        out_f[2 * i + 1] = x[i] % y[i]


def test_vector_floor_division_and_modulo():
    rng = np.random.default_rng(5)
    n = 40
    a = rng.integers(-20, 21, (n, 4)).astype(np.int32)
    b = rng.choice([-4, -3, -1, 1, 2, 5], (n, 4)).astype(np.int32)
    x = rng.choice([-5.5, -2.0, -0.25, 0.0, 1.0, 3.5], (n, 2)).astype(np.float32)
    y = rng.choice([-2.0, -0.5, 1.5, 4.0], (n, 2)).astype(np.float32)
    out_i = np.zeros((4 * n, 4), np.int32)
    out_f = np.zeros((2 * n, 2), np.float32)
    vector_division(a, b, x, y, out_i, out_f, threads=n)
    out_i = out_i.reshape(n, 4, 4)
    out_f = out_f.reshape(n, 2, 2)
    np.testing.assert_array_equal(out_i[:, 0], np.floor_divide(a, b))
    np.testing.assert_array_equal(out_i[:, 1], np.mod(a, b))
    np.testing.assert_array_equal(out_i[:, 2], np.floor_divide(a, -3))
    np.testing.assert_array_equal(out_i[:, 3], np.mod(a, 3))
    np.testing.assert_array_equal(out_f[:, 0], np.floor_divide(x, y))
    np.testing.assert_array_equal(out_f[:, 1], np.mod(x, y))


@tx.kernel(workgroup_size=64)
def float_power(x: Array[f32], y: Array[f32], out: Array2D[f32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[i, 0] = x[i] ** 2
        out[i, 1] = x[i] ** 3.0
        out[i, 2] = x[i] ** -1.0
        out[i, 3] = abs(x[i]) ** 0.5
        out[i, 4] = abs(x[i]) ** y[i]
        out[i, 5] = x[i] ** y[i]  # y integral: defined for negative bases too
        out[i, 6] = 2.0**-2


def test_float_power():
    x = np.array([-3.0, -2.0, -1.5, -0.5, 0.5, 1.0, 2.0, 4.0], np.float32)
    y = np.array([3.0, 2.0, -1.0, 4.0, 0.0, 5.0, -2.0, 1.0], np.float32)
    out = np.zeros((len(x), 7), np.float32)
    float_power(x, y, out, threads=len(x))
    xs, ys = x.astype(np.float64), y.astype(np.float64)
    expect = np.stack(
        [xs**2, xs**3, 1 / xs, np.abs(xs) ** 0.5, np.abs(xs) ** ys, xs**ys, np.full_like(xs, 0.25)],
        axis=1,
    )
    for column in range(7):
        np.testing.assert_allclose(out[:, column], expect[:, column], rtol=1e-5, err_msg=column)


@tx.kernel(workgroup_size=64)
def int_power(k: Array[i32], out: Array2D[i32]):
    i = tx.global_invocation_id().x
    if i < len(k):
        out[i, 0] = k[i] ** 2
        out[i, 1] = k[i] ** 3
        out[i, 2] = k[i] ** 0
        out[i, 3] = k[i] ** 1
        out[i, 4] = 2**10


def test_int_power_with_constant_exponent():
    k = np.arange(-7, 8, dtype=np.int32)
    out = np.zeros((len(k), 5), np.int32)
    int_power(k, out, threads=len(k))
    expect = [[v**2, v**3, 1, v, 1024] for v in k.tolist()]
    np.testing.assert_array_equal(out, expect)


@tx.kernel(workgroup_size=64)
def bit_operations(a: Array[i32], b: Array[u32], out_i: Array2D[i32], out_u: Array2D[u32]):
    i = tx.global_invocation_id().x
    if i < len(a):
        out_i[i, 0] = a[i] & 12
        out_i[i, 1] = a[i] | 5
        out_i[i, 2] = a[i] ^ -1
        out_i[i, 3] = ~a[i]
        out_i[i, 4] = a[i] >> 2
        out_i[i, 5] = a[i] << 3
        out_i[i, 6] = -a[i]
        out_u[i, 0] = b[i] & u32(0xF0F0)
        out_u[i, 1] = b[i] | 1
        out_u[i, 2] = b[i] ^ b[i] >> 4
        out_u[i, 3] = ~b[i]
        out_u[i, 4] = b[i] >> 3
        out_u[i, 5] = b[i] << 2
        out_u[i, 6] = (b[i] & 0xFFFF0000) + 3000000000  # literals beyond i32 fit u32
        out_u[i, 7] = max(b[i] ^ MASK, 2147483648)


def test_bit_operations():
    a = np.array([-1000, -17, -8, -1, 0, 1, 6, 13, 255, 100000], np.int32)
    b = np.array([0, 1, 7, 255, 0xF00F, 123456, 2**31, 2**32 - 1, 77, 9], np.uint32)
    out_i = np.zeros((len(a), 7), np.int32)
    out_u = np.zeros((len(a), 8), np.uint32)
    bit_operations(a, b, out_i, out_u, threads=len(a))
    x = a.tolist()
    expect_i = [[v & 12, v | 5, v ^ -1, ~v, v >> 2, v << 3, -v] for v in x]
    np.testing.assert_array_equal(out_i, expect_i)
    big = (b & 0xFFFF0000) + np.uint32(3000000000)
    expect_u = np.stack(
        [b & 0xF0F0, b | 1, b ^ (b >> 4), ~b, b >> 3, b << 2, big, np.maximum(b ^ MASK, 2**31)],
        axis=1,
    )
    np.testing.assert_array_equal(out_u, expect_u)


@tx.kernel(workgroup_size=64)
def literal_typing(k: Array[u32], x: Array[f32], out_u: Array[u32], out_f: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(k):
        out_u[i] = k[i] + 1 + 2 * k[i]  # literals take the u32 type of the other operand
        out_f[i] = x[i] * 2 + 1.5 / 2  # 2 is an f32 here; 1.5 / 2 is 0.75


def test_literals_take_the_type_of_the_other_operand():
    k = np.arange(10, dtype=np.uint32) * 1000000000
    x = np.linspace(-1, 1, 10, dtype=np.float32)
    out_u = np.zeros_like(k)
    out_f = np.zeros_like(x)
    literal_typing(k, x, out_u, out_f, threads=10)
    np.testing.assert_array_equal(out_u, k + np.uint32(1) + np.uint32(2) * k)  # wraps like u32
    np.testing.assert_allclose(out_f, x * 2 + 0.75, rtol=1e-6)


# ---------------------------------------------------------------------------------------
# boolean logic and comparisons
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def logic(x: Array[f32], n: u32, out: Array2D[i32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        v = x[i]
        out[i, 0] = 1 if i < n and x[i] > 0.0 else 0
        out[i, 1] = 1 if v > 5.0 or v < -5.0 else 0
        out[i, 2] = 1 if not (v > 0.0 and v < 3.0) else 0
        out[i, 3] = 1 if v == 0.0 or v > 1.0 and v < 7.0 else 0  # `and` binds tighter
        out[i, 4] = 1 if not v > 1.0 else 0
        out[i, 5] = 1 if (v > 0.0) != (i % 2 == 0) else 0
        big = v > 2.0
        small = v < -2.0
        out[i, 6] = 1 if big or small or not (big or small) and v == 0.0 else 0


@tx.kernel(workgroup_size=64)
def chained(x: Array[f32], n: u32, out: Array2D[i32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        v = x[i]
        out[i, 0] = 1 if -1.0 < v < 2.0 else 0
        out[i, 1] = 1 if -1.0 <= v <= 2.0 != v else 0
        out[i, 2] = 1 if 0 <= i < n else 0
        out[i, 3] = 1 if v < 3.0 > -v else 0
        out[i, 4] = 1 if -5.0 < v <= 0.0 < 1.0 else 0


def python_logic(x, n, i):
    v = float(x[i])
    big, small = v > 2.0, v < -2.0
    return [
        i < n and v > 0.0,
        v > 5.0 or v < -5.0,
        not (v > 0.0 and v < 3.0),
        v == 0.0 or v > 1.0 and v < 7.0,
        not v > 1.0,
        (v > 0.0) != (i % 2 == 0),
        big or small or not (big or small) and v == 0.0,
    ]


def python_chained(x, n, i):
    v = float(x[i])
    return [-1.0 < v < 2.0, -1.0 <= v <= 2.0 != v, 0 <= i < n, v < 3.0 > -v, -5.0 < v <= 0.0 < 1.0]


@pytest.mark.parametrize("kernel, reference", [(logic, python_logic), (chained, python_chained)])
def test_boolean_logic_and_chained_comparisons(kernel, reference):
    x = np.array([-7.0, -3.0, -1.0, 0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 6.0, 8.0, -0.5], np.float32)
    n = 7  # fewer than len(x): `i < n and x[i] > 0.0` is false past n
    columns = len(reference(x, n, 0))
    out = np.full((len(x), columns), -1, np.int32)
    kernel(x, n, out, threads=len(x))
    expect = [reference(x, n, i) for i in range(len(x))]
    np.testing.assert_array_equal(out, np.array(expect, np.int32))


# ---------------------------------------------------------------------------------------
# control flow
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=1)
def range_forms(start: i32, stop: i32, out: Array[i32]):
    s = 0
    for a in range(stop):
        s = s * 2 + a
    out[0] = s
    s = 0
    for b in range(start, stop):
        s = s * 2 + b
    out[1] = s
    s = 0
    for c in range(start, stop, 3):
        s = s * 2 + c
    out[2] = s
    s = 0
    for d in range(stop, start, -2):
        s = s * 2 + d
    out[3] = s
    count = 0
    for e in range(start, stop, -1):
        count += 1
    out[4] = count
    s = 0
    for f in range(start + 1, stop * 2 - start, 5):
        s = s * 2 + f
    out[5] = s
    s = 0
    for g in range(3, -4, -1):  # constant bounds
        s = s * 2 + g
    out[6] = s


@pytest.mark.parametrize("start, stop", [(0, 10), (3, 17), (-6, 5), (7, 2), (4, 4), (-3, -11)])
def test_range_forms(start, stop):
    out, expect = run_serial(range_forms, start, stop)
    np.testing.assert_array_equal(out, expect)


@tx.kernel(workgroup_size=1)
def range_unsigned(start: u32, stop: u32, out: Array[u32]):
    s = start * 0
    for a in range(stop):
        s = s * 2 + a
    out[0] = s
    s = start * 0
    count = 0
    for b in range(stop, start, -1):  # down to start + 1: must not wrap below 0
        s = s * 2 + b
        count += 1
        if count > 100:
            break
    out[1] = s
    out[2] = u32(count)
    s = start * 0
    count = 0
    for c in range(stop, 0, -3):
        s = s * 2 + c
        count += 1
        if count > 100:
            break
    out[3] = s
    out[4] = u32(count)
    s = start * 0
    for d in range(start, stop, 4):
        s = s * 2 + d
    out[5] = s
    e = start * 0 + 77
    for e in range(stop, start, -3):
        s += e
    out[6] = e  # the last value, or 77 when the loop did not run


def python_range_unsigned(start, stop):
    def fold(values):
        s = 0
        for v in values:
            s = (s * 2 + v) % 2**32
        return s

    return [
        fold(range(stop)),
        fold(range(stop, start, -1)),
        len(range(stop, start, -1)),
        fold(range(stop, 0, -3)),
        len(range(stop, 0, -3)),
        fold(range(start, stop, 4)),
        range(stop, start, -3)[-1] if range(stop, start, -3) else 77,
    ]


@pytest.mark.parametrize("start, stop", [(0, 10), (0, 0), (2, 9), (5, 1), (0, 1)])
def test_range_with_u32_counters(start, stop):
    out = np.zeros(8, np.uint32)
    range_unsigned(start, stop, out, workgroups=(1, 1, 1))
    np.testing.assert_array_equal(out[:7], python_range_unsigned(start, stop))


@tx.kernel(workgroup_size=1)
def range_near_limits(start: i32, stop: i32, ustart: u32, ustop: u32, out: Array[i32]):
    count = 0
    for a in range(start, stop, 5):
        count += 1
        if count > 100:
            break
    out[0] = count
    count = 0
    for b in range(stop, start, -5):
        count += 1
        if count > 100:
            break
    out[1] = count
    count = 0
    for c in range(ustart, ustop, 4):
        count += 1
        if count > 100:
            break
    out[2] = count
    count = 0
    for d in range(ustop, ustart, -4):
        count += 1
        if count > 100:
            break
    out[3] = count


@pytest.mark.parametrize(
    "start, stop, ustart, ustop",
    [(2**31 - 10, 2**31 - 1, 2**32 - 7, 2**32 - 1), (-(2**31), -(2**31) + 9, 1, 6)],
)
def test_range_counters_never_overflow_past_the_bound(start, stop, ustart, ustop):
    """Python counts the iterations of a range exactly, even when the next value of the
    counter would not fit the counter's type."""
    out, expect = run_serial(range_near_limits, start, stop, ustart, ustop)
    np.testing.assert_array_equal(out, expect)


@tx.kernel(workgroup_size=1)
def loop_variable(n: i32, out: Array[i32]):
    s = 0
    for i in range(n):
        s = s * 2 + i
        i += 10  # does not change the iteration
        s += i
    out[0] = s
    out[1] = i  # the last value Python bound (and modified)
    j = 100
    for j in range(2, n, 3):
        s += 1
    out[2] = j  # the last value, or 100 when the loop did not run
    k = -1
    for k in range(n, 0, -1):
        if k * k < n:
            break
    out[3] = k
    m = 0
    for m in range(n):
        m = m * 2  # rebinding also leaves the counter alone
    out[4] = m
    out[5] = s


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_loop_variable_semantics(n):
    out, expect = run_serial(loop_variable, n)
    np.testing.assert_array_equal(out, expect)


@tx.kernel(workgroup_size=1)
def loop_control(n: i32, out: Array[i32]):
    x = n
    steps = 0
    while x != 1:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
    out[0] = steps
    s = 0
    for i in range(100):
        if i % 3 == 0:
            continue
        if i * i > n * 4:
            break
        s += i
    out[1] = s
    k = 0
    t = 0
    while True:
        k += 1
        if k % 2 == 1:
            continue
        t += k
        if k >= n:
            break
    out[2] = t
    c = 0
    for a in range(6):
        for b in range(6):
            if b > a:
                break
            if (a + b) % 4 == 3:
                continue
            c += a * 10 + b
    out[3] = c
    w = 0
    while w < n and w * w < 50:
        w += 1
    out[4] = w
    grade = 0
    if n < 3:
        grade = 1
    elif n < 7:
        grade = 2
    elif n == 7:
        grade = 3
    else:
        grade = 4
    out[5] = grade


@pytest.mark.parametrize("n", [1, 2, 6, 7, 27])
def test_while_break_continue_elif(n):
    out, expect = run_serial(loop_control, n)
    np.testing.assert_array_equal(out, expect)


@tx.kernel(workgroup_size=1)
def python_statements(n: i32, out: Array[i32]):
    """A docstring is not code."""
    m = n
    count = 0
    for i in range(m):  # the bounds are evaluated once
        m -= 1
        count += 1
    out[0] = count
    out[1] = m
    if n > 3:
        picked = 10
    else:
        picked = 20
    out[2] = picked  # assigned on every path
    total = 0
    for i in range(20, 0, -3):
        if i % 2 == 0:
            continue  # the step still runs
        total += i
    out[3] = total
    last = 0
    for i in range(n):
        inner = i * i
        last = inner
    out[4] = last
    out[5] = +n - -n
    pass


@pytest.mark.parametrize("n", [0, 3, 4, 8])
def test_python_statements(n):
    out, expect = run_serial(python_statements, n)
    np.testing.assert_array_equal(out, expect)


@tx.kernel(workgroup_size=1)
def assignment_forms(n: i32, x: f32, out: Array[f32]):
    total: f32 = 0.0  # annotated assignment
    count: u32 = 3
    a = b = n * 2  # several targets
    total += f32(a + b) + x
    out[0] = total
    out[1] = f32(count)


def test_annotated_and_multiple_target_assignment():
    out = np.zeros(2, np.float32)
    assignment_forms(5, 0.5, out, workgroups=(1, 1, 1))
    np.testing.assert_array_equal(out, [20.5, 3.0])


@tx.kernel(workgroup_size=1)
def wgsl_keywords(params: i32, out: Array[i32]):
    let = params + 1
    loop = let * 2
    fn = loop - 1
    struct = fn + params
    array = struct * 3
    select = array % 7
    var = select + 1
    workgroup = var * 2
    global_invocation_id = workgroup + 1
    Params = global_invocation_id * 2
    out[0] = let
    out[1] = loop + fn + struct + array + select + var + workgroup
    out[2] = global_invocation_id + Params


def test_names_that_are_wgsl_keywords_or_compiler_names():
    out, expect = run_serial(wgsl_keywords, 4)
    np.testing.assert_array_equal(out, expect)


@tx.kernel(workgroup_size=8)
def uses_a_later_function(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[i] = defined_after_the_kernel(x[i])


@tx.func
def defined_after_the_kernel(v: f32) -> f32:
    return v * FTABLE[1] + f32(TABLE[0])


def test_function_defined_after_the_kernel():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    uses_a_later_function(x, out, threads=8)
    np.testing.assert_allclose(out, x * 1.5 + 10)


@tx.func
def classify(v: i32) -> i32:
    if v < 0:
        return -1
    elif v == 0:
        return 0
    for k in range(1, 10):
        if k * k >= v:
            return k
    return 99


@tx.func
def first_multiple(v: i32, of: i32) -> i32:
    m = v
    while True:
        if m % of == 0:
            return m
        m += 1
    return -1


@tx.kernel(workgroup_size=64)
def early_return(x: Array[i32], out: Array2D[i32]):
    i = tx.global_invocation_id().x
    if i >= len(x):
        return
    out[i, 1] = classify(x[i])
    out[i, 2] = first_multiple(x[i], 7)
    out[i, 0] = 1
    if x[i] < 0:
        return
    out[i, 0] = 2
    for k in range(10):
        if k == x[i]:
            out[i, 0] = 3 + k
            return
    out[i, 0] = 100


def python_classify(v):
    if v < 0:
        return -1
    if v == 0:
        return 0
    return next((k for k in range(1, 10) if k * k >= v), 99)


def test_early_return_in_kernels_and_functions():
    x = np.array([-5, -1, 0, 1, 2, 3, 9, 10, 50, 81, 82, 200], np.int32)
    out = np.full((len(x), 3), -7, np.int32)
    early_return(x, out, threads=len(x))
    kernel_part = [1 if v < 0 else (3 + v if v < 10 else 100) for v in x.tolist()]
    np.testing.assert_array_equal(out[:, 0], kernel_part)
    np.testing.assert_array_equal(out[:, 1], [python_classify(v) for v in x.tolist()])
    np.testing.assert_array_equal(out[:, 2], [v + (-v) % 7 for v in x.tolist()])


@tx.func
def square(v: f32) -> f32:
    return v * v


@tx.func
def negated(v: f32) -> f32:
    return -v


@tx.func
def sum_of_squares(a: f32, b: f32) -> f32:
    return square(a) + square(b)  # device functions call device functions


@tx.func
def hypot_like(a: f32, b: f32) -> f32:
    return tx.sqrt(sum_of_squares(a, b))


@tx.kernel(workgroup_size=64)
def ternaries(x: Array[f32], out: Array2D[f32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        v = x[i]
        out[i, 0] = square(v) if v > 0.0 else negated(v)
        out[i, 1] = 1.0 if v < -1.0 else (2.0 if v < 1.0 else 3.0)
        out[i, 2] = (v if v > 0.0 else -v) * 2.0
        w = vec2f(v, 1.0) if v > 0.0 else vec2f(0.0, v)
        out[i, 3] = w.x + w.y * 10.0
        out[i, 4] = hypot_like(v, 2.0)
        out[i, 5] = f32(1 if v > 0.0 else 0) + sum_of_squares(v, v)


def test_ternaries_and_nested_device_functions():
    x = np.array([-3.0, -1.5, -0.5, 0.0, 0.5, 1.0, 2.0, 4.0], np.float32)
    out = np.zeros((len(x), 6), np.float32)
    ternaries(x, out, threads=len(x))
    v = x.astype(np.float64)
    expect = np.stack(
        [
            np.where(v > 0, v * v, -v),
            np.where(v < -1, 1.0, np.where(v < 1, 2.0, 3.0)),
            np.abs(v) * 2,
            np.where(v > 0, v + 10, v * 10),
            np.sqrt(v * v + 4),
            (v > 0) + 2 * v * v,
        ],
        axis=1,
    )
    np.testing.assert_allclose(out, expect, rtol=1e-6)


@tx.kernel(workgroup_size=1)
def tuple_assignment(n: i32, out: Array[i32]):
    a = 0
    b = 1
    for k in range(n):
        a, b = b, a + b  # the right side is evaluated first
    out[0] = a
    out[1] = b
    x = 3
    y = 4
    z = 5
    x, y, z = z, x, y
    out[2] = x * 100 + y * 10 + z
    x, y = y, x
    out[3] = x * 10 + y
    out[4], out[5] = y, x


@pytest.mark.parametrize("n", [0, 1, 10, 20])
def test_tuple_assignment(n):
    out, expect = run_serial(tuple_assignment, n)
    np.testing.assert_array_equal(out, expect)


@tx.kernel(workgroup_size=1)
def augmented_assignment(a: i32, b: i32, x: f32, out_i: Array[i32], out_f: Array[f32]):
    k = a
    k += b
    out_i[0] = k
    k -= 3 * b
    out_i[1] = k
    k *= b
    out_i[2] = k
    k //= 3
    out_i[3] = k
    k %= 5
    out_i[4] = k
    k = a
    k <<= 2
    k |= 3
    k &= ~4
    k ^= b
    out_i[5] = k
    k >>= 1
    out_i[6] = k
    k = a
    k **= 2
    out_i[7] = k
    out_i[8] = 1
    out_i[8] += a
    out_i[8] *= b
    out_i[8] //= 2
    y = x
    y += 1.5
    y *= x
    y -= 0.25
    y /= 2.0
    out_f[0] = y
    y //= 0.75
    out_f[1] = y
    y = x
    y %= 0.75
    out_f[2] = y
    y = x
    y **= 2.0
    out_f[3] = y
    out_f[4] = x
    out_f[4] -= 1.0
    out_f[4] /= 4.0


@pytest.mark.parametrize("a, b, x", [(7, 3, 2.5), (-7, 3, -1.25), (5, -2, 0.5), (-11, -4, -3.0)])
def test_augmented_assignment(a, b, x):
    out_i = np.zeros(9, np.int32)
    out_f = np.zeros(5, np.float32)
    augmented_assignment(a, b, x, out_i, out_f, workgroups=(1, 1, 1))
    expect_i = np.zeros(9, np.int32)
    expect_f = np.zeros(5, np.float64)
    augmented_assignment.fn(a, b, x, expect_i, expect_f)
    np.testing.assert_array_equal(out_i, expect_i)
    np.testing.assert_allclose(out_f, expect_f, rtol=1e-6)


# ---------------------------------------------------------------------------------------
# names: module constants, tuples, closures, math and builtins
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def module_constants(x: Array[i32], out: Array2D[f32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[i, 0] = f32(x[i] * SCALE)
        out[i, 1] = f32(x[i]) * HALF
        out[i, 2] = f32(TABLE[2] + TABLE[-1])
        out[i, 3] = f32(TABLE[x[i] % 4])  # a tuple indexed at run time
        out[i, 4] = FTABLE[i % 3]
        out[i, 5] = -1.0 if NEGATE else 1.0
        out[i, 6] = f32(len(TABLE))


def test_module_constants_and_tuples():
    x = np.arange(-5, 7, dtype=np.int32)
    out = np.zeros((len(x), 7), np.float32)
    module_constants(x, out, threads=len(x))
    expect = [
        [v * SCALE, v * HALF, TABLE[2] + TABLE[-1], TABLE[v % 4], FTABLE[i % 3], 1.0, len(TABLE)]
        for i, v in enumerate(x.tolist())
    ]
    np.testing.assert_allclose(out, expect)


def make_scaler(scale, offsets, flip):
    @tx.kernel(workgroup_size=64)
    def scaler(x: Array[f32], out: Array[f32]):
        i = tx.global_invocation_id().x
        if i < len(x):
            value = x[i] * scale + offsets[i % len(offsets)]
            out[i] = -value if flip else value

    return scaler


def test_closure_captured_constants():
    x = np.arange(10, dtype=np.float32)
    results = []
    for scale, offsets, flip in [(2.0, (1.0, 2.0), False), (-3.0, (0.5, 0.0, 7.0), True)]:
        kernel = make_scaler(scale, offsets, flip)
        out = np.zeros_like(x)
        kernel(x, out, threads=len(x))
        expect = x * scale + np.array([offsets[i % len(offsets)] for i in range(len(x))])
        np.testing.assert_allclose(out, -expect if flip else expect)
        results.append(out)
    assert not np.array_equal(results[0], results[1])


def test_kernel_defined_inside_a_test_function():
    limit = 4

    @tx.kernel(workgroup_size=8)
    def clipped(x: Array[i32], out: Array[i32]):
        i = tx.global_invocation_id().x
        if i < len(x):
            out[i] = min(x[i], limit)

    x = np.arange(10, dtype=np.int32)
    out = np.zeros_like(x)
    clipped(x, out, threads=10)
    np.testing.assert_array_equal(out, np.minimum(x, limit))


@tx.kernel(workgroup_size=64)
def python_math(x: Array[f32], k: Array[i32], out: Array2D[f32], out_k: Array2D[i32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        v = x[i]
        out[i, 0] = v * math.pi
        out[i, 1] = math.sqrt(abs(v)) + math.e
        out[i, 2] = f32(math.floor(v))
        out[i, 3] = math.exp(v / 4.0)
        out[i, 4] = math.atan2(v, 2.0)
        out[i, 5] = abs(v)
        out[i, 6] = min(v, 1.0)
        out[i, 7] = max(v, -1.0, v * 0.5)
        out[i, 8] = min(v, 0.5, -v)
        out[i, 9] = f32(round(v))
        out[i, 10] = math.fabs(v) + f32(math.ceil(v)) + math.tau
        out_k[i, 0] = abs(k[i])
        out_k[i, 1] = min(k[i], 3)
        out_k[i, 2] = max(k[i], -2, k[i] * 2)
        out_k[i, 3] = min(k[i], 4, 5 - k[i])


def test_python_math_and_builtins():
    x = np.array([-2.5, -1.5, -0.5, -0.2, 0.0, 0.5, 1.5, 2.5, 3.7, -3.7], np.float32)
    k = np.arange(-5, 5, dtype=np.int32)
    out = np.zeros((len(x), 11), np.float32)
    out_k = np.zeros((len(x), 4), np.int32)
    python_math(x, k, out, out_k, threads=len(x))
    expect = [
        [
            v * math.pi,
            math.sqrt(abs(v)) + math.e,
            math.floor(v),
            math.exp(v / 4),
            math.atan2(v, 2),
            abs(v),
            min(v, 1.0),
            max(v, -1.0, v * 0.5),
            min(v, 0.5, -v),
            round(v),  # half to even, like Python
            math.fabs(v) + math.ceil(v) + math.tau,
        ]
        for v in x.tolist()
    ]
    np.testing.assert_allclose(out, expect, rtol=1e-5, atol=1e-6)
    expect_k = [[abs(v), min(v, 3), max(v, -2, v * 2), min(v, 4, 5 - v)] for v in k.tolist()]
    np.testing.assert_array_equal(out_k, expect_k)


# ---------------------------------------------------------------------------------------
# math intrinsics against numpy
# ---------------------------------------------------------------------------------------

MATH_INPUT = np.array(
    [-2.5, -1.75, -1.0, -0.5, -0.1, 0.0, 0.3, 0.5, 1.0, 1.5, 2.5, 2.9], np.float32
)


def smoothstep(edge0, edge1, x):
    t = np.clip((x - edge0) / (edge1 - edge0), 0.0, 1.0)
    return t * t * (3 - 2 * t)


# (name, numpy reference of v): the order is that of `float_intrinsics`.
FLOAT_INTRINSICS = [
    ("sqrt", lambda v: np.sqrt(np.abs(v))),
    ("sin", np.sin),
    ("cos", np.cos),
    ("tan", lambda v: np.tan(v / 2)),
    ("asin", lambda v: np.arcsin(v / 3)),
    ("acos", lambda v: np.arccos(v / 3)),
    ("atan", np.arctan),
    ("atan2", lambda v: np.arctan2(v, v * v - 1.0)),
    ("sinh", np.sinh),
    ("cosh", np.cosh),
    ("tanh", np.tanh),
    ("exp", np.exp),
    ("exp2", np.exp2),
    ("log", lambda v: np.log(np.abs(v) + 0.5)),
    ("log2", lambda v: np.log2(np.abs(v) + 0.5)),
    ("pow", lambda v: np.power(np.abs(v) + 0.5, v)),
    ("floor", np.floor),
    ("ceil", np.ceil),
    ("round", np.round),  # half to even
    ("trunc", np.trunc),
    ("fract", lambda v: v - np.floor(v)),
    ("clamp", lambda v: np.clip(v, -1.0, 0.75)),
    ("mix", lambda v: 2.0 * (1 - v) + 5.0 * v),
    ("step", lambda v: np.where(v >= 0.5, 1.0, 0.0)),
    ("smoothstep", lambda v: smoothstep(-1.0, 2.0, v)),
    ("fma", lambda v: v * 3.0 + 0.5),
    ("sign", np.sign),
    ("abs", np.abs),
    ("min", lambda v: np.minimum(v, 0.25)),
    ("max", lambda v: np.maximum(v, 0.25)),
    ("select", lambda v: np.where(v > 0, v * 2, -1.0)),
]


# WGSL (like Vulkan) only asks 4096 ULP of atan2, and asin/acos/atan inherit it; lavapipe
# uses that freedom (errors near 4e-4 for asin and acos).
INVERSE_TRIG_TOLERANCE = 4096 * 2.0**-23


@tx.kernel(workgroup_size=64)
def float_intrinsics(x: Array[f32], out: Array2D[f32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        v = x[i]
        out[0, i] = tx.sqrt(abs(v))
        out[1, i] = tx.sin(v)
        out[2, i] = tx.cos(v)
        out[3, i] = tx.tan(v / 2.0)
        out[4, i] = tx.asin(v / 3.0)
        out[5, i] = tx.acos(v / 3.0)
        out[6, i] = tx.atan(v)
        out[7, i] = tx.atan2(v, v * v - 1.0)
        out[8, i] = tx.sinh(v)
        out[9, i] = tx.cosh(v)
        out[10, i] = tx.tanh(v)
        out[11, i] = tx.exp(v)
        out[12, i] = tx.exp2(v)
        out[13, i] = tx.log(abs(v) + 0.5)
        out[14, i] = tx.log2(abs(v) + 0.5)
        out[15, i] = tx.pow(abs(v) + 0.5, v)
        out[16, i] = tx.floor(v)
        out[17, i] = tx.ceil(v)
        out[18, i] = tx.round(v)
        out[19, i] = tx.trunc(v)
        out[20, i] = tx.fract(v)
        out[21, i] = tx.clamp(v, -1.0, 0.75)
        out[22, i] = tx.mix(2.0, 5.0, v)
        out[23, i] = tx.step(0.5, v)
        out[24, i] = tx.smoothstep(-1.0, 2.0, v)
        out[25, i] = tx.fma(v, 3.0, 0.5)
        out[26, i] = tx.sign(v)
        out[27, i] = tx.abs(v)
        out[28, i] = tx.min(v, 0.25)
        out[29, i] = tx.max(v, 0.25)
        out[30, i] = tx.select(-1.0, v * 2.0, v > 0.0)


@pytest.fixture(scope="module")
def float_intrinsic_results():
    out = np.full((len(FLOAT_INTRINSICS), len(MATH_INPUT)), np.nan, np.float32)
    float_intrinsics(MATH_INPUT, out, threads=len(MATH_INPUT))
    return out


@pytest.mark.parametrize("row", range(len(FLOAT_INTRINSICS)), ids=[n for n, _ in FLOAT_INTRINSICS])
def test_float_intrinsic(float_intrinsic_results, row):
    name, reference = FLOAT_INTRINSICS[row]
    expect = reference(MATH_INPUT.astype(np.float64))
    tolerance = INVERSE_TRIG_TOLERANCE if name in ("asin", "acos", "atan", "atan2") else 2e-5
    np.testing.assert_allclose(float_intrinsic_results[row], expect, rtol=tolerance, atol=2e-6)


@tx.kernel(workgroup_size=64)
def vector_intrinsics(a: Array[vec4f], b: Array[vec4f], out: Array2D[f32]):
    i = tx.global_invocation_id().x
    if i < len(a):
        p = a[i].xyz
        q = b[i].xyz
        out[i, 0] = tx.dot(a[i], b[i])
        c = tx.cross(p, q)
        out[i, 1] = c.x
        out[i, 2] = c.y
        out[i, 3] = c.z
        out[i, 4] = tx.length(p)
        out[i, 5] = tx.distance(p, q)
        n = tx.normalize(a[i])
        out[i, 6] = n.x
        out[i, 7] = n.w
        s = tx.select(p, q, p > q)  # component-wise with a vec3b condition
        out[i, 8] = s.x + s.y * 10.0 + s.z * 100.0
        m = tx.mix(p, q, 0.25)
        out[i, 9] = m.y
        out[i, 10] = tx.clamp(a[i], vec4f(-0.5), vec4f(0.5)).z


def test_vector_intrinsics():
    rng = np.random.default_rng(3)
    a = rng.uniform(-2, 2, (16, 4)).astype(np.float32)
    b = rng.uniform(-2, 2, (16, 4)).astype(np.float32)
    out = np.zeros((16, 11), np.float32)
    vector_intrinsics(a, b, out, threads=16)
    p, q = a[:, :3].astype(np.float64), b[:, :3].astype(np.float64)
    c = np.cross(p, q)
    n = a / np.linalg.norm(a, axis=1, keepdims=True)
    s = np.where(p > q, q, p)
    expect = np.stack(
        [
            (a * b).sum(1),
            c[:, 0],
            c[:, 1],
            c[:, 2],
            np.linalg.norm(p, axis=1),
            np.linalg.norm(p - q, axis=1),
            n[:, 0],
            n[:, 3],
            s[:, 0] + s[:, 1] * 10 + s[:, 2] * 100,
            p[:, 1] * 0.75 + q[:, 1] * 0.25,
            np.clip(a[:, 2], -0.5, 0.5),
        ],
        axis=1,
    )
    np.testing.assert_allclose(out, expect, rtol=1e-5, atol=1e-5)


@tx.kernel(workgroup_size=64)
def select_whole_vectors(a: Array[vec4i], b: Array[vec4i], out: Array[vec4i]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = tx.select(a[i], b[i], i % u32(3) == u32(0))  # one bool picks a whole vector


def test_select_takes_one_bool_for_vector_arms():
    a = np.arange(40, dtype=np.int32).reshape(10, 4)
    b = -a
    out = np.zeros_like(a)
    select_whole_vectors(a, b, out, threads=10)
    np.testing.assert_array_equal(out, np.where((np.arange(10) % 3 == 0)[:, None], b, a))


def first_leading_bit_u32(v):
    return v.bit_length() - 1 if v else 0xFFFFFFFF


def first_leading_bit_i32(v):
    if v in (0, -1):
        return -1
    return (v if v > 0 else ~v).bit_length() - 1


def first_trailing_bit(v, bits=32):
    v &= (1 << bits) - 1
    return (v & -v).bit_length() - 1 if v else -1


def extract_bits_u32(v, offset, count):
    return (v >> offset) & ((1 << count) - 1)


def extract_bits_i32(v, offset, count):
    if count == 0:
        return 0
    field = (v >> offset) & ((1 << count) - 1)
    return field - (1 << count) if field >> (count - 1) else field


def insert_bits(v, new, offset, count, bits=32):
    mask = ((1 << count) - 1) << offset
    result = (v & ~mask) | ((new << offset) & mask)
    result &= (1 << bits) - 1
    return result


def as_i32(v):
    return v - (1 << 32) if v >= 1 << 31 else v


@tx.kernel(workgroup_size=64)
def bit_intrinsics(u: Array[u32], s: Array[i32], out_u: Array2D[u32], out_s: Array2D[i32]):
    i = tx.global_invocation_id().x
    if i < len(u):
        out_u[i, 0] = tx.count_one_bits(u[i])
        out_u[i, 1] = tx.reverse_bits(u[i])
        out_u[i, 2] = tx.first_leading_bit(u[i])
        out_u[i, 3] = tx.first_trailing_bit(u[i])
        out_u[i, 4] = tx.extract_bits(u[i], u32(4), u32(7))
        out_u[i, 5] = tx.insert_bits(u[i], u32(0x5A), u32(8), u32(6))
        out_s[i, 0] = tx.count_one_bits(s[i])
        out_s[i, 1] = tx.reverse_bits(s[i])
        out_s[i, 2] = tx.first_leading_bit(s[i])
        out_s[i, 3] = tx.first_trailing_bit(s[i])
        out_s[i, 4] = tx.extract_bits(s[i], u32(3), u32(5))
        out_s[i, 5] = tx.insert_bits(s[i], -3, u32(28), u32(4))
        out_s[i, 6] = tx.abs(s[i] // 2) + tx.sign(s[i]) * 1000


def test_bit_intrinsics():
    u = np.array([0, 1, 2, 7, 0x80000000, 0xFFFFFFFF, 0x12345678, 0xF0, 1000], np.uint32)
    s = np.array([0, 1, -1, -2, 2**31 - 1, -(2**31), 0x1234, -0x1234, -1000], np.int32)
    out_u = np.zeros((len(u), 6), np.uint32)
    out_s = np.zeros((len(u), 7), np.int32)
    bit_intrinsics(u, s, out_u, out_s, threads=len(u))
    expect_u = [
        [
            bin(v).count("1"),
            int(f"{v:032b}"[::-1], 2),
            first_leading_bit_u32(v),
            first_trailing_bit(v) % 2**32,
            extract_bits_u32(v, 4, 7),
            insert_bits(v, 0x5A, 8, 6),
        ]
        for v in u.tolist()
    ]
    np.testing.assert_array_equal(out_u, np.array(expect_u, np.uint32))
    expect_s = [
        [
            bin(v % 2**32).count("1"),
            as_i32(int(f"{v % 2**32:032b}"[::-1], 2)),
            first_leading_bit_i32(v),
            first_trailing_bit(v),
            extract_bits_i32(v, 3, 5),
            as_i32(insert_bits(v % 2**32, -3, 28, 4)),
            abs(v // 2) + ((v > 0) - (v < 0)) * 1000,
        ]
        for v in s.tolist()
    ]
    np.testing.assert_array_equal(out_s, np.array(expect_s, np.int32))


@tx.kernel(workgroup_size=8)
def nan_comparisons(x: Array[f32], y: Array[f32], out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        a, b = x[i], y[i]
        v = vec2f(a, b)
        flags = u32(0)
        flags |= tx.select(u32(0), u32(1), a != b)
        flags |= tx.select(u32(0), u32(2), a == b)
        flags |= tx.select(u32(0), u32(4), a != a)  # the NaN test
        flags |= tx.select(u32(0), u32(8), bool(a))
        differ = v != vec2f(b, a)  # component-wise
        flags |= tx.select(u32(0), u32(16), differ.x)
        flags |= tx.select(u32(0), u32(32), differ.y)
        out[i] = flags


def test_float_not_equal_is_true_for_nan_on_every_path():
    """Python's `!=` (IEEE's unordered not-equal): true where either side is NaN, `==`
    false; `bool(x)` is `x != 0`. (naga writes WGSL's float `!=` and SPIR-V's
    OpFUnordNotEqual as an ordered comparison; both backends write `!(a == b)`.)"""
    x = np.array([1.0, np.nan, 1.0, np.nan, 0.0, -0.0, np.inf], np.float32)
    y = np.array([1.0, 1.0, np.nan, np.nan, -0.0, 2.0, np.inf], np.float32)
    out = np.zeros(len(x), np.uint32)
    nan_comparisons(x, y, out, threads=len(x))
    with np.errstate(invalid="ignore"):
        want = (
            (x != y) * 1
            + (x == y) * 2
            + (x != x) * 4
            + (x != 0) * 8
            + (x != y) * 16
            + (y != x) * 32
        )
    np.testing.assert_array_equal(out, want.astype(np.uint32))


@tx.kernel(workgroup_size=1)
def constant_floor_divisions(out: Array[f32]):
    out[0] = f32(0.0) // f32(-7.25)
    out[1] = f32(0.0) // f32(7.25)
    out[2] = f32(-0.0) // f32(7.25)
    out[3] = f32(0.0) // f32(-1.0)
    out[4] = f32(1.0) // f32(-7.25)
    out[5] = f32(3.0) // f32(-1.0)


def test_float_floor_division_of_a_constant_zero():
    """The math library's `//` reads |a| - |a % b| as a magnitude; lavapipe folds the
    constant sum 0.0 + -0.0 to -0.0, whose bits as a magnitude gave 0 // -7.25 as -9.4e37
    and 0 // -1 as -inf (the fuzzer's seed 777000181). Zeros keep numpy's signs."""
    out = np.full(6, np.nan, np.float32)
    constant_floor_divisions(out, threads=1)
    a = np.array([0.0, 0.0, -0.0, 0.0, 1.0, 3.0], np.float32)
    b = np.array([-7.25, 7.25, 7.25, -1.0, -7.25, -1.0], np.float32)
    want = a // b
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(want))
