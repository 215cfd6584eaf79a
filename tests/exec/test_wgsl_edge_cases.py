"""Values WGSL defines where C, SPIR-V and numpy do not: integer division by zero and
overflow, oversized shift amounts, saturating float-to-int conversions.

The expected values come from the WGSL specification. Both shader sources must produce
them: the WGSL path through naga, and the SPIR-V backend, which spells these rules out
itself (`backend_spirv.legalize`).
"""

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32
from pyshader_tx.validate import tint_available, validate_tint

I32_MIN = -(2**31)


@tx.kernel(workgroup_size=64)
def signed_division(a: Array[i32], b: Array[i32], out: Array[i32]):
    i = tx.global_invocation_id().x
    if i < len(a):
        out[4 * i] = a[i] // b[i]
        out[4 * i + 1] = a[i] % b[i]
        out[4 * i + 2] = i32(tx.bitcast(u32, a[i]) // tx.bitcast(u32, b[i]))
        out[4 * i + 3] = i32(tx.bitcast(u32, a[i]) % tx.bitcast(u32, b[i]))


def test_integer_division_by_zero_and_overflow():
    a = np.array([7, -7, I32_MIN, I32_MIN, 5, -9], np.int32)
    b = np.array([0, 0, -1, 0, 3, 4], np.int32)
    out = np.zeros(4 * len(a), np.int32)
    signed_division(a, b, out, threads=len(a))
    got = out.reshape(-1, 4)
    # WGSL: e1 / 0 == e1, e1 % 0 == 0, and MIN / -1 == MIN, MIN % -1 == 0; Python's
    # floor semantics apply on top where the division is defined.
    assert got[:, 0].tolist() == [7, -7, I32_MIN, I32_MIN, 1, -3]
    assert got[:, 1].tolist() == [0, 0, 0, 0, 2, 3]
    unsigned_a, unsigned_b = a.view(np.uint32), b.view(np.uint32)
    with np.errstate(divide="ignore"):
        quotient = np.where(unsigned_b == 0, unsigned_a, unsigned_a // np.maximum(unsigned_b, 1))
        remainder = np.where(unsigned_b == 0, 0, unsigned_a % np.maximum(unsigned_b, 1))
    assert got[:, 2].tolist() == quotient.astype(np.uint32).view(np.int32).tolist()
    assert got[:, 3].tolist() == remainder.astype(np.uint32).view(np.int32).tolist()


@tx.kernel(workgroup_size=64)
def shifts(x: Array[u32], amount: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[2 * i] = x[i] << amount[i]
        out[2 * i + 1] = x[i] >> amount[i]


def test_shift_amount_uses_its_low_bits():
    x = np.array([1, 0x80000000, 0xF0, 3], np.uint32)
    amount = np.array([33, 63, 36, 0], np.uint32)
    out = np.zeros(2 * len(x), np.uint32)
    shifts(x, amount, out, threads=len(x))
    low = amount % 32
    assert out[0::2].tolist() == ((x.astype(np.uint64) << low) & 0xFFFFFFFF).tolist()
    assert out[1::2].tolist() == (x >> low).tolist()


@tx.kernel(workgroup_size=64)
def shift_by_constant_variables(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        amount = u32(40)  # naga folds `let amount = 40u;` into a constant
        out[2 * i] = x[i] << amount
        out[2 * i + 1] = u32(i32(x[i]) >> (amount + u32(i)))


def test_shift_amounts_held_in_variables_use_their_low_bits():
    x = np.array([1, 0x80000000, 0xF0], np.uint32)
    out = np.zeros(2 * len(x), np.uint32)
    shift_by_constant_variables(x, out, threads=len(x))
    assert out[0::2].tolist() == [256, 0, 0xF000]
    signed = x.view(np.int32)
    amounts = (40 + np.arange(len(x))) % 32
    assert out[1::2].tolist() == (signed >> amounts).astype(np.int32).view(np.uint32).tolist()


@tx.kernel(workgroup_size=64)
def saturating_casts(x: Array[f32], signed: Array[i32], unsigned: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        signed[i] = i32(x[i])
        unsigned[i] = u32(x[i])


def test_float_to_int_conversions_saturate():
    x = np.array([3e9, -3e9, 5e9, -1.5, 2.75, -2.75, np.inf, -np.inf], np.float32)
    signed = np.zeros(len(x), np.int32)
    unsigned = np.zeros(len(x), np.uint32)
    saturating_casts(x, signed, unsigned, threads=len(x))
    # The nearest value of the target type that f32 can represent.
    i32_max, u32_max = 2147483520, 4294967040
    assert signed.tolist() == [i32_max, I32_MIN, i32_max, -1, 2, -2, i32_max, I32_MIN]
    assert unsigned.tolist() == [3000000000, 0, u32_max, 0, 2, 0, u32_max, 0]


@tx.kernel(workgroup_size=64)
def constant_bit_ranges(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[3 * i] = tx.extract_bits(x[i], u32(28), u32(9))  # 28 + 9 > 32: count 4
        out[3 * i + 1] = tx.extract_bits(x[i], u32(40), u32(3))  # offset 32: empty
        out[3 * i + 2] = tx.insert_bits(x[i], u32(0), u32(30), u32(5))  # count 2


def test_constant_bit_ranges_are_clamped_like_runtime_ones():
    # WGSL clamps o = min(offset, 32), c = min(count, 32 - o), but rejects constant operands
    # with offset + count > 32: the writer clamps them itself (Tint must accept the WGSL).
    x = np.array([0xF0000000, 0xFFFFFFFF, 0x12345678], np.uint32)
    out = np.zeros(3 * len(x), np.uint32)
    constant_bit_ranges(x, out, threads=len(x))
    assert out[0::3].tolist() == (x >> 28).tolist()
    assert out[1::3].tolist() == [0, 0, 0]
    assert out[2::3].tolist() == (x & 0x3FFFFFFF).tolist()
    if tint_available():
        assert validate_tint({"k": constant_bit_ranges.wgsl}) == {"k": []}


@tx.kernel(workgroup_size=64)
def shift_assignments(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        v = tx.vec2u(x[i])
        v <<= tx.vec2u(u32(36), x[i])  # a constant component naga checks on its own
        s = x[i]
        amount = u32(33)
        s >>= amount
        out[3 * i] = v.x
        out[3 * i + 1] = v.y
        out[3 * i + 2] = s


def test_shift_assignments_use_the_low_bits_of_the_amount():
    x = np.array([1, 3, 0x80000000], np.uint32)
    out = np.zeros(3 * len(x), np.uint32)
    shift_assignments(x, out, threads=len(x))
    wide = x.astype(np.uint64)
    assert out[0::3].tolist() == ((wide << 4) & 0xFFFFFFFF).tolist()
    assert out[1::3].tolist() == ((wide << (wide % 32)) & 0xFFFFFFFF).tolist()
    assert out[2::3].tolist() == (x >> 1).tolist()


@tx.struct
class BitRange:
    offset: u32
    count: u32


@tx.kernel(workgroup_size=64)
def bit_range_from_a_constant_struct(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        # The fields of a struct built from constants are constants (WGSL evaluates them).
        out[2 * i] = tx.extract_bits(x[i], u32(14), BitRange(u32(0), u32(32)).count)
        out[2 * i + 1] = x[i] % BitRange(u32(0), u32(7)).offset  # a computed zero: x % 0 == 0


def test_fields_of_constant_structs_are_constants():
    x = np.array([0xFFFFFFFF, 0x12345678], np.uint32)
    out = np.zeros(2 * len(x), np.uint32)
    bit_range_from_a_constant_struct(x, out, threads=len(x))
    assert out[0::2].tolist() == (x >> 14).tolist()
    assert out[1::2].tolist() == [0, 0]
    if tint_available():
        assert validate_tint({"k": bit_range_from_a_constant_struct.wgsl}) == {"k": []}


@tx.kernel(workgroup_size=64)
def short_circuited_constants(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        # WGSL evaluates `false && e` and `true || e` as constants: a computed zero divisor
        # and a shift amount of 40 that must reach run time (x % 0 == 0, 40 counts as 8).
        out[2 * i] = x[i] % u32(False and x[i] < 3)
        out[2 * i + 1] = x[i] << (u32(40) * u32(True or x[i] < 3))


def test_short_circuited_constants_run_with_runtime_semantics():
    x = np.array([1, 7, 0x80000001], np.uint32)
    out = np.zeros(2 * len(x), np.uint32)
    short_circuited_constants(x, out, threads=len(x))
    assert out[0::2].tolist() == [0, 0, 0]
    assert out[1::2].tolist() == ((x.astype(np.uint64) << 8) & 0xFFFFFFFF).tolist()
    if tint_available():
        assert validate_tint({"k": short_circuited_constants.wgsl}) == {"k": []}
