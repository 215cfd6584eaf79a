"""A corpus of invalid kernels for tests/frontend/test_invalid_corpus.py.

Each `@tx.kernel` (with the device functions and structs just before it) is one case; a
comment `# error `node`: text` marks the line the CompileError must point at, the source
the carets must underline (optional, between backticks) and a part of the message. A
`@tx.struct` without a marker is a valid definition used by later cases. The file is
both imported (one statement at a time) and read by the command line's static reader:
keep every name resolvable statically (module constants, tx, math).
"""

# fmt: off
# (markers must stay on the line they mark: black would move them)

import math

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, Array2D, Array3D, Const, f32, i32, u32, vec2f, vec3f, vec4f

WEIGHTS = (1.0, 2.0, 3.0)
SEPARATOR = ", "
MASKS = (1, 2, 4)
BIG = 5000000000


def python_helper(v):
    return v


@tx.struct
class Particle:
    pos: vec3f
    mass: f32


@tx.func
def scale(v: f32, k: f32) -> f32:
    return v * k


@tx.func
def nothing(v: f32):
    pass


@tx.func
def total(a: Array[f32]) -> f32:
    return a[0]


# -- arrays ---------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def rebind_array(a: Array[f32]):
    a = a  # error `a`@1: array parameter 'a' cannot be reassigned


@tx.kernel(workgroup_size=64)
def rebind_array_later(x: Array[f32], out: Array[f32]):
    out[0] = 1.0
    if x[0] > 0.0:
        out = x  # error `out`: array parameter 'out' cannot be reassigned


@tx.kernel(workgroup_size=64)
def rebind_array_augmented(x: Array[f32], out: Array[f32]):
    out += 1.0  # error `out`: array parameter 'out' cannot be reassigned


@tx.kernel(workgroup_size=64)
def rebind_array_tuple(x: Array[f32], out: Array[f32]):
    x, out = out, x  # error `x`@1: array parameter 'x' cannot be reassigned


@tx.kernel(workgroup_size=64)
def rebind_array_in_loop(x: Array[f32], out: Array[f32]):
    for x in range(3):  # error `x`: array parameter 'x' cannot be reassigned
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def rebind_array_annotated(x: Array[f32], out: Array[f32]):
    out[0] = 1.0
    x: f32 = 1.0  # error `x`: array parameter 'x' cannot be reassigned


@tx.kernel(workgroup_size=64)
def array_copied(x: Array[f32], out: Array[f32]):
    y = x  # error `x`: array 'x' is not a value


@tx.kernel(workgroup_size=64)
def array_assigned_to_element(x: Array[f32], out: Array[f32]):
    out[0] = x  # error `x`: array 'x' is not a value


@tx.kernel(workgroup_size=64)
def two_indices_on_1d(x: Array[f32], out: Array[f32]):
    out[0] = x[0, 1]  # error `0, 1`: 'x' is 1-D: it takes 1 index(es), got 2


@tx.kernel(workgroup_size=64)
def one_index_on_2d(m: Array2D[f32], out: Array[f32]):
    out[0] = m[0]  # error `0`@2: 'm' is 2-D: it takes 2 index(es), got 1


@tx.kernel(workgroup_size=64)
def two_indices_on_3d(v: Array3D[f32], out: Array[f32]):
    out[0] = v[0, 1]  # error `0, 1`: 'v' is 3-D: it takes 3 index(es), got 2


@tx.kernel(workgroup_size=64)
def index_a_scalar(n: i32, out: Array[f32]):
    out[0] = f32(n[0])  # error `n`: i32 cannot be indexed


@tx.kernel(workgroup_size=64)
def index_an_element(x: Array[f32], out: Array[f32]):
    out[0] = x[0][0]  # error `x[0]`: f32 cannot be indexed


@tx.kernel(workgroup_size=64)
def float_index(x: Array[f32], out: Array[f32]):
    out[0] = x[1.5]  # error `1.5`: index must be an integer, not float literal


@tx.kernel(workgroup_size=64)
def bool_index(n: i32, out: Array[f32]):
    out[n > 0] = 1.0  # error `n > 0`: index must be an integer, not bool


@tx.kernel(workgroup_size=64)
def negative_index_into_storage(out: Array[f32]):
    out[-1] = 1.0  # error `-1`: negative index -1 into an array of unknown length


@tx.kernel(workgroup_size=64)
def array_slice(x: Array[f32], out: Array[f32]):
    out[0] = x[1:3]  # error `1:3`: slices are not supported


@tx.kernel(workgroup_size=64)
def array_attribute(x: Array[f32], out: Array[f32]):
    out[0] = x.size  # error `x.size`: arrays have no attribute 'size'


@tx.kernel(workgroup_size=64)
def array_called(x: Array[f32], out: Array[f32]):
    out[0] = x(0)  # error `x`: array 'x' is not callable


@tx.kernel(workgroup_size=64)
def shape_axis_out_of_range(m: Array2D[f32], out: Array[f32]):
    out[0] = f32(m.shape[2])  # error `2`@2: 'm' has 2 dimension(s)


@tx.kernel(workgroup_size=64)
def shape_runtime_axis(m: Array2D[f32], n: i32, out: Array[f32]):
    out[0] = f32(m.shape[n])  # error `n`: shape index must be a constant integer


@tx.kernel(workgroup_size=64)
def len_of_number(out: Array[f32]):
    out[0] = f32(len(5))  # error `5`: len() takes an array, a vector or a tuple


@tx.kernel(workgroup_size=64)
def local_array_runtime_length(n: i32, out: Array[f32]):
    t = tx.local_array(f32, n)  # error `n`: the length must be a constant integer
    out[0] = t[0]


@tx.kernel(workgroup_size=64)
def local_array_zero_length(out: Array[f32]):
    t = tx.local_array(f32, 0)  # error `0`: the length must be positive
    out[0] = t[0]


@tx.kernel(workgroup_size=64)
def local_array_of_number(out: Array[f32]):
    t = tx.local_array(3, 4)  # error `3`: the first argument must be a type
    out[0] = t[0]


@tx.kernel(workgroup_size=64)
def local_array_one_argument(out: Array[f32]):
    t = tx.local_array(f32)  # error `tx.local_array(f32)`: takes a type and a length
    out[0] = t[0]


@tx.kernel(workgroup_size=64)
def local_array_index_out_of_range(out: Array[f32]):
    t = tx.local_array(f32, 4)
    out[0] = t[4]  # error `4`: index 4 is out of range for length 4


@tx.kernel(workgroup_size=64)
def list_of_mixed_types(n: i32, out: Array[f32]):
    t = [n, 1.5]  # error `1.5`: float literal 1.5 used where i32 is expected
    out[0] = t[0]


@tx.kernel(workgroup_size=64)
def list_of_vectors_and_numbers(out: Array[f32]):
    t = [vec2f(1.0), vec3f(1.0)]  # error `vec3f(1.0)`: list element has type vec3f, expected vec2f
    out[0] = t[0].x


@tx.kernel(workgroup_size=64)
def empty_list(out: Array[f32]):
    t = []  # error `[]`: empty lists are not supported
    out[0] = t[0]


@tx.kernel(workgroup_size=64)
def whole_local_array_into_element(out: Array[f32]):
    t = [1.0, 2.0]
    out[0] = t  # error `t`@2: value assigned to out[0] has type array<f32, 2>, expected f32


@tx.kernel(workgroup_size=64)
def local_array_retyped(out: Array[f32]):
    t = [1.0, 2.0]
    t = [1.0, 2.0, 3.0]  # error `[1.0, 2.0, 3.0]`: expected array<f32, 2>
    out[0] = t[0]


@tx.kernel(workgroup_size=64)
def array_of_bool_parameter(flags: Array[tx.bool], out: Array[f32]):  # error `Array[tx.bool]`: bool is not host-shareable
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def array_without_element(x: Array, out: Array[f32]):  # error `Array`@1: Array needs an element type
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def array_of_arrays(x: Array[Array[f32]], out: Array[f32]):  # error `Array[f32]`@1: cannot be an array element
    out[0] = 1.0


# -- types ----------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def add_f32_i32(x: Array[f32], n: i32, out: Array[f32]):
    out[0] = x[0] + n  # error `x[0] + n`: cannot add f32 and i32


@tx.kernel(workgroup_size=64)
def subtract_u32_i32(n: i32, out: Array[u32]):
    out[0] = tx.global_invocation_id().x - n  # error `tx.global_invocation_id().x - n`: cannot subtract u32 and i32


@tx.kernel(workgroup_size=64)
def multiply_vector_by_other_scalar(n: i32, out: Array[vec3f]):
    out[0] = vec3f(1.0) * n  # error `vec3f(1.0) * n`: cannot multiply vec3f and i32


@tx.kernel(workgroup_size=64)
def add_vectors_of_different_sizes(out: Array[vec3f]):
    out[0] = vec3f(1.0) + vec2f(1.0)  # error `vec3f(1.0) + vec2f(1.0)`: cannot add vec3f and vec2f


@tx.kernel(workgroup_size=64)
def add_bool_to_number(n: i32, out: Array[i32]):
    out[0] = (n > 0) + n  # error `n > 0`: cannot add bool and i32


@tx.kernel(workgroup_size=64)
def add_struct(out: Array[f32]):
    p = Particle(vec3f(0.0), 1.0)
    out[0] = 1.0 + p  # error `p`: cannot add float literal and Particle


@tx.kernel(workgroup_size=64)
def float_literal_for_int(n: i32, out: Array[i32]):
    out[0] = n + 2.5  # error `2.5`: float literal 2.5 used where i32 is expected


@tx.kernel(workgroup_size=64)
def float_literal_into_int_variable(out: Array[i32]):
    k: i32 = 2.5  # error `2.5`: float literal 2.5 used where i32 is expected
    out[0] = k


@tx.kernel(workgroup_size=64)
def variable_changes_type(out: Array[f32]):
    v = 1.0
    v = i32(3)  # error `i32(3)`: value assigned to 'v' has type i32, expected f32
    out[0] = v


@tx.kernel(workgroup_size=64)
def parameter_changes_type(n: i32, out: Array[f32]):
    n = 2.5  # error `2.5`: float literal 2.5 used where i32 is expected
    out[0] = f32(n)


@tx.kernel(workgroup_size=64)
def annotation_disagrees(out: Array[f32]):
    y = 1.0
    y: i32 = 2  # error `i32`: 'y' was declared f32, not i32
    out[0] = y


@tx.kernel(workgroup_size=64)
def true_division_into_int(n: i32, out: Array[i32]):
    half: i32 = n / 2  # error `n / 2`: use // for integer division
    out[0] = half


@tx.kernel(workgroup_size=64)
def augmented_true_division(out: Array[i32]):
    k = 7
    k /= 2  # error `k /= 2`: k is i32; the result would be f32
    out[0] = k


@tx.kernel(workgroup_size=64)
def augmented_mixed(n: i32, out: Array[f32]):
    y = 1.0
    y += n  # error `y += n`: cannot add f32 and i32
    out[0] = y


@tx.kernel(workgroup_size=64)
def ternary_mixed(n: i32, x: f32, out: Array[f32]):
    out[0] = x if n > 0 else n  # error `x if n > 0 else n`: cannot choose between f32 and i32


@tx.kernel(workgroup_size=64)
def compare_u32_with_i32(n: i32, out: Array[f32]):
    if tx.global_invocation_id().x < n:  # error `tx.global_invocation_id().x < n`: cannot compare u32 and i32
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def chained_compare_mixed(x: Array[f32], n: i32, out: Array[f32]):
    if 0 < n < x[0]:  # error `n < x[0]`: cannot compare i32 and f32; convert one side, e.g. f32(n)
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def order_bools(n: i32, out: Array[f32]):
    if (n > 0) < (n > 1):  # error `(n > 0) < (n > 1)`: cannot order bools
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def compare_struct(out: Array[f32]):
    p = Particle(vec3f(0.0), 1.0)
    if p == p:  # error `p == p`: cannot compare Particle and Particle
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def is_comparison(n: i32, out: Array[f32]):
    out[0] = 1.0 if n is n else 0.0  # error `n is n`: 'is' compares compile-time objects (device functions, types, None), not values


@tx.kernel(workgroup_size=64)
def in_comparison(n: i32, out: Array[f32]):
    out[0] = 1.0 if n in MASKS else 0.0  # error `n in MASKS`: 'In' comparisons are not supported


@tx.kernel(workgroup_size=64)
def negate_u32(out: Array[u32]):
    out[0] = -tx.global_invocation_id().x  # error `tx.global_invocation_id().x`: cannot negate u32


@tx.kernel(workgroup_size=64)
def negate_bool(n: i32, out: Array[f32]):
    b = -(n > 0)  # error `n > 0`: cannot negate bool
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def not_a_number(n: i32, out: Array[f32]):
    out[0] = 1.0 if not n else 0.0  # error `n`@2: 'not' needs a bool, not i32


@tx.kernel(workgroup_size=64)
def invert_float(x: Array[f32], out: Array[f32]):
    out[0] = ~x[0]  # error `x[0]`: '~' needs an integer, not f32


@tx.kernel(workgroup_size=64)
def bitwise_and_floats(x: Array[f32], n: i32, out: Array[i32]):
    out[0] = n & x[0]  # error `x[0]`: cannot combine i32 and f32


@tx.kernel(workgroup_size=64)
def bitwise_bool_and_int(n: i32, out: Array[i32]):
    out[0] = n | (n > 0)  # error `n > 0`: cannot combine i32 and bool


@tx.kernel(workgroup_size=64)
def integer_power_runtime_exponent(n: i32, out: Array[i32]):
    out[0] = n**n  # error `n`@2: integer ** needs a constant exponent >= 0


@tx.kernel(workgroup_size=64)
def integer_power_negative_exponent(n: i32, out: Array[i32]):
    out[0] = n**-1  # error `-1`: integer ** needs a constant exponent >= 0


@tx.kernel(workgroup_size=64)
def power_of_bool(out: Array[f32]):
    out[0] = f32(True**2)  # error `True`: cannot raise


@tx.kernel(workgroup_size=64)
def matmul_scalars(out: Array[f32]):
    out[0] = 1.0 @ 2.0  # error `1.0 @ 2.0`: @ needs matrices


@tx.kernel(workgroup_size=64)
def modulo_of_bools(n: i32, out: Array[i32]):
    out[0] = i32((n > 0) % (n > 1))  # error `(n > 0) % (n > 1)`: cannot take the remainder of bool and bool


@tx.kernel(workgroup_size=64)
def unknown_type_annotation(out: Array[f32]):
    y: float64 = 1.0  # error `float64`: name 'float64' is not defined
    out[0] = y


@tx.kernel(workgroup_size=64)
def numpy_type_annotation(out: Array[f32]):
    y: np.float32 = 1.0  # error `np.float32`: cannot resolve the annotation of 'y'
    out[0] = y


@tx.kernel(workgroup_size=64)
def parameter_numpy_annotation(x: np.ndarray, out: Array[f32]):  # error `np.ndarray`: cannot resolve the annotation of parameter 'x'
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def parameter_unknown_annotation(x: Array[float64], out: Array[f32]):  # error `float64`: name 'float64' is not defined
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def parameter_string_annotation(x: "vec9f", out: Array[f32]):  # error `"vec9f"`: name 'vec9f' is not defined
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def parameter_without_annotation(x, out: Array[f32]):  # error `x`: parameter 'x' needs a type annotation
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def parameter_with_default(n: i32 = 3, out: Array[f32] = None):  # error `3`@2: only Const parameters can have defaults
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def star_parameters(*args):  # error `args`: kernels cannot take *args or **kwargs
    pass


@tx.kernel(workgroup_size=64)
def keyword_only_parameter(out: Array[f32], *, n: i32):  # error `n: i32`: must be plain positional parameters
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def annotated_array_local(x: Array[f32], out: Array[f32]):
    y: Array[f32] = x  # error `Array[f32]`: a local variable cannot be Array[f32]
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def annotation_as_value(out: Array[f32]):
    y = Array[f32]  # error `Array[f32]`: annotation 'Array' cannot be indexed
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def type_as_value(out: Array[f32]):
    y = f32  # error `f32`: type 'f32' is not a value
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def module_as_value(out: Array[f32]):
    y = tx  # error `tx`: module 'tx' is not a value
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def kernel_return_annotation(out: Array[f32]) -> f32:  # error `f32`@2: kernels return nothing
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def bool_parameter_in_arithmetic(flag: tx.bool, out: Array[f32]):
    out[0] = f32(flag + 1)  # error `flag`: cannot add bool and int literal


@tx.kernel(workgroup_size=64)
def convert_vector_to_scalar(out: Array[f32]):
    out[0] = f32(vec3f(0.0))  # error `vec3f(0.0)`: cannot convert vec3f to f32


@tx.kernel(workgroup_size=64)
def conversion_with_two_arguments(n: i32, out: Array[f32]):
    out[0] = f32(n, n)  # error `n`@2: f32() takes one argument


@tx.kernel(workgroup_size=64)
def bitcast_size_mismatch(out: Array[f32]):
    out[0] = f32(tx.bitcast(u32, vec2f(1.0)))  # error `tx.bitcast(u32, vec2f(1.0))`: cannot bitcast vec2f to u32


@tx.kernel(workgroup_size=64)
def bitcast_without_type(out: Array[f32]):
    out[0] = tx.bitcast(1, 2.0)  # error `1`: the first argument must be a type


# -- literals and constants -----------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def negative_into_u32(out: Array[u32]):
    x: u32 = -1  # error `-1`: integer literal -1 does not fit u32
    out[0] = x


@tx.kernel(workgroup_size=64)
def literal_too_big_for_i32(out: Array[i32]):
    out[0] = 5000000000  # error `5000000000`: integer literal 5000000000 does not fit i32


@tx.kernel(workgroup_size=64)
def module_constant_too_big(out: Array[u32]):
    out[0] = BIG  # error `BIG`: integer literal 5000000000 does not fit u32


@tx.kernel(workgroup_size=64)
def literal_too_big_for_f16(out: Array[tx.f16]):
    out[0] = 70000.0  # error `70000.0`: float literal 70000.0 does not fit f16


@tx.kernel(workgroup_size=64)
def integer_division_by_literal_zero(n: i32, out: Array[i32]):
    out[0] = n // 0  # error `0`@2: integer division by zero


@tx.kernel(workgroup_size=64)
def integer_modulo_by_literal_zero(n: i32, out: Array[i32]):
    out[0] = n % 0  # error `0`@2: integer division by zero


@tx.kernel(workgroup_size=64)
def augmented_division_by_zero(out: Array[i32]):
    k = i32(7)
    k //= 0  # error `0`: integer division by zero
    out[0] = k


@tx.kernel(workgroup_size=64)
def constant_division_by_zero(out: Array[f32]):
    out[0] = 1.0 / 0.0  # error `0.0`: division by zero in a constant expression


@tx.kernel(workgroup_size=64)
def constant_modulo_by_zero(out: Array[f32]):
    out[0] = f32(5 % 0)  # error `0`@2: division by zero in a constant expression


@tx.kernel(workgroup_size=64)
def shift_too_far(n: i32, out: Array[i32]):
    out[0] = n << 40  # error `40`: shift amount 40 is out of range for i32


@tx.kernel(workgroup_size=64)
def shift_negative(n: i32, out: Array[i32]):
    out[0] = n >> -1  # error `-1`: integer literal -1 does not fit u32


@tx.kernel(workgroup_size=64)
def shift_by_i32(n: i32, out: Array[i32]):
    out[0] = n << n  # error `n`@2: shift amounts must be u32, not i32


@tx.kernel(workgroup_size=64)
def shift_a_float(x: Array[f32], out: Array[f32]):
    out[0] = x[0] << 1  # error `x[0]`: cannot shift f32


@tx.kernel(workgroup_size=64)
def shift_by_a_float(n: i32, out: Array[i32]):
    out[0] = n << 1.5  # error `1.5`: cannot shift i32 by float literal


@tx.kernel(workgroup_size=64)
def strings_are_not_values(out: Array[f32]):
    s = "hello"  # error `"hello"`: strings are not supported in kernels
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def bytes_literal(out: Array[f32]):
    s = b"x"  # error `b"x"`: is not supported in kernels
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def complex_literal(out: Array[f32]):
    out[0] = 1j  # error `1j`: 1j is not supported in kernels


@tx.kernel(workgroup_size=64)
def none_value(out: Array[f32]):
    y = None  # error `None`: None is not supported in kernels
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def tuple_constant_out_of_range(out: Array[f32]):
    out[0] = WEIGHTS[3]  # error `3`: index 3 is out of range for length 3


@tx.kernel(workgroup_size=64)
def tuple_constant_as_value(out: Array[f32]):
    w = WEIGHTS  # error `WEIGHTS`: tuple constant 'WEIGHTS' is not a value
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def tuple_literal_value(out: Array[f32]):
    w = (1.0, 2.0)  # error `(1.0, 2.0)`: tuples are only supported in tuple assignment
    out[0] = 1.0


# -- Const parameters -----------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def const_without_value(out: Array[f32], BLOCK: Const[int]):  # error `BLOCK: Const[int]`: Const parameter 'BLOCK' has no value
    out[0] = f32(BLOCK)


@tx.kernel(workgroup_size=64)
def const_of_float_type(out: Array[f32], BLOCK: Const[f32] = 4):  # error `f32`@2: Const[...] takes int, float or bool
    out[0] = f32(BLOCK)


@tx.kernel(workgroup_size=64)
def const_default_of_wrong_type(out: Array[f32], BLOCK: Const[int] = 2.5):  # error `2.5`: Const parameter 'BLOCK' must be int, not float
    out[0] = f32(BLOCK)


@tx.kernel(workgroup_size=64)
def const_default_not_constant(out: Array[f32], BLOCK: Const[int] = len(WEIGHTS)):  # error `len(WEIGHTS)`: must be a constant
    out[0] = f32(BLOCK)


@tx.kernel(workgroup_size=64)
def const_reassigned(out: Array[f32], BLOCK: Const[int] = 4):
    BLOCK = 5  # error `BLOCK`: Const parameter 'BLOCK' cannot be reassigned
    out[0] = f32(BLOCK)


@tx.kernel(workgroup_size=64)
def const_too_big(out: Array[u32], BLOCK: Const[int] = -4):
    out[0] = BLOCK  # error `BLOCK`: integer literal -4 does not fit u32


# -- names and unsupported Python -----------------------------------------------------------


@tx.kernel(workgroup_size=64)
def undefined_name(out: Array[f32]):
    out[0] = nope  # error `nope`: name 'nope' is not defined


@tx.kernel(workgroup_size=64)
def misspelled_tx_function(x: Array[f32], out: Array[f32]):
    out[0] = tx.sqrtt(x[0])  # error `tx.sqrtt`: did you mean tx.sqrt?


@tx.kernel(workgroup_size=64)
def misspelled_tx_builtin(out: Array[f32]):
    i = tx.global_invocation_idx().x  # error `tx.global_invocation_idx`: did you mean tx.global_invocation_id?
    out[i] = 1.0


@tx.kernel(workgroup_size=64)
def misspelled_tx_type(out: Array[f32]):
    v = tx.vec3(1.0)  # error `tx.vec3`: pyshader_tx has no attribute 'vec3'
    out[0] = v.x


@tx.kernel(workgroup_size=64)
def tx_runtime_function(out: Array[f32]):
    tx.zeros(4)  # error `tx.zeros`: tx.zeros cannot be used inside a kernel


@tx.kernel(workgroup_size=64)
def unsupported_math_function(out: Array[f32]):
    out[0] = math.gamma(2.0)  # error `math.gamma(2.0)`: math.gamma


@tx.kernel(workgroup_size=64)
def calls_numpy(x: Array[f32], out: Array[f32]):
    out[0] = np.sqrt(x[0])  # error `np`: 'np' (module) cannot be used in a kernel


@tx.kernel(workgroup_size=64)
def calls_python_function(x: Array[f32], out: Array[f32]):
    out[0] = python_helper(x[0])  # error `python_helper`: (function) cannot be used in a kernel


@tx.kernel(workgroup_size=64)
def calls_sum(x: Array[f32], out: Array[f32]):
    out[0] = sum(x)  # error `sum`: 'sum' (builtin_function_or_method) cannot be used


@tx.kernel(workgroup_size=64)
def uses_lambda(out: Array[f32]):
    f = lambda v: v + 1.0  # error `lambda v: v + 1.0`: lambda functions are not supported
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def uses_list_comprehension(out: Array[f32]):
    t = [f32(k) for k in range(4)]  # error `[f32(k) for k in range(4)]`: list comprehensions
    out[0] = t[0]


@tx.kernel(workgroup_size=64)
def uses_generator(out: Array[f32]):
    out[0] = max(k for k in range(3))  # error `(k for k in range(3))`: generator expressions


@tx.kernel(workgroup_size=64)
def uses_dict_comprehension(out: Array[f32]):
    d = {k: k for k in range(3)}  # error `{k: k for k in range(3)}`: dict comprehensions
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def uses_dict(out: Array[f32]):
    d = {"a": 1.0}  # error `{"a": 1.0}`: dicts are not supported in kernels
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def uses_set(out: Array[f32]):
    s = {1.0, 2.0}  # error `{1.0, 2.0}`: sets are not supported in kernels
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def uses_f_string(n: i32, out: Array[f32]):
    s = f"{n}"  # error `f"{n}"`: f-strings are not supported
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def uses_walrus(n: i32, out: Array[f32]):
    out[0] = f32(m := n)  # error `m := n`: assignment expressions (:=) are not supported
    out[1] = f32(m)


@tx.kernel(workgroup_size=64)
def uses_try(out: Array[f32]):
    try:  # error: try/except statements are not supported in kernels
        out[0] = 1.0
    except ValueError:
        pass


@tx.kernel(workgroup_size=64)
def uses_with(out: Array[f32]):
    with open("f") as f:  # error: with statements are not supported in kernels
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def defines_class(out: Array[f32]):
    class Local:  # error: class definitions are not supported in kernels
        pass

    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def defines_function(out: Array[f32]):
    def inner(v: f32) -> f32:  # error: nested function definitions are not supported
        return v

    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def uses_global(out: Array[f32]):
    global WEIGHTS  # error `global WEIGHTS`: global declarations are not supported
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def uses_import(out: Array[f32]):
    import os  # error `import os`: imports are not supported in kernels

    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def uses_del(n: i32, out: Array[f32]):
    del n  # error `del n`: del statements are not supported
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def uses_assert(n: i32, out: Array[f32]):
    assert n > 0  # error `assert n > 0`: assert statements are not supported
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def uses_raise(n: i32, out: Array[f32]):
    raise ValueError(n)  # error `raise ValueError(n)`: raise statements are not supported


@tx.kernel(workgroup_size=64)
def uses_match(n: i32, out: Array[f32]):
    match n:  # error: match statements are not supported
        case 1:
            out[0] = 1.0


@tx.kernel(workgroup_size=64)
def uses_yield(out: Array[f32]):
    yield 1.0  # error `yield 1.0`: yield (generators) are not supported


@tx.kernel(workgroup_size=64)
def uses_star_args(out: Array[f32]):
    out[0] = max(*WEIGHTS)  # error `*WEIGHTS`: star arguments are not supported


@tx.kernel(workgroup_size=64)
def uses_star_star_kwargs(out: Array[f32]):
    out[0] = tx.clamp(**{"x": 1.0})  # error `**{"x": 1.0}`: **kwargs are not supported


@tx.kernel(workgroup_size=64)
def starred_assignment(out: Array[f32]):
    a, *b = 1, 2, 3  # error `*b`: nested or starred targets are not supported
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def tuple_assignment_from_scalar(out: Array[f32]):
    a, b = 1  # error `1`: tuple assignment needs a tuple of values on the right
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def tuple_assignment_count(out: Array[f32]):
    a, b = 1, 2, 3  # error `a, b = 1, 2, 3`: cannot assign 3 values to 2 names
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def use_before_any_assignment(out: Array[f32]):
    out[0] = y  # error `y`: 'y' is used before it is assigned
    y = 1.0


@tx.kernel(workgroup_size=64)
def expression_without_effect(n: i32):
    n + 1  # error `n + 1`: this expression has no effect


@tx.kernel(workgroup_size=64)
def unused_call_result(x: Array[f32]):
    tx.sqrt(x[0])  # error `tx.sqrt(x[0])`: the result of this call is unused


@tx.kernel(workgroup_size=64)
def assign_to_call_result(out: Array[f32]):
    f32(1.0).x = 2.0  # error `f32(1.0).x`: f32 has no attribute 'x'


@tx.kernel(workgroup_size=64)
def assign_to_constant(out: Array[f32]):
    WEIGHTS[0] = 2.0  # error `WEIGHTS[0]`: cannot assign to WEIGHTS[0]


@tx.kernel(workgroup_size=64)
def scalar_attribute(x: Array[f32], out: Array[f32]):
    out[0] = x[0].y  # error `x[0].y`: f32 has no attribute 'y'


@tx.kernel(workgroup_size=64)
def call_a_number(out: Array[f32]):
    k = 3
    out[0] = k()  # error `k`: this value is not callable


@tx.kernel(workgroup_size=64)
def call_a_kernel(x: Array[f32]):
    rebind_array(x)  # error `rebind_array`: kernels cannot be called from kernels


# -- control flow ---------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def if_on_float(x: Array[f32], out: Array[f32]):
    if x[0]:  # error `x[0]`: if condition must be bool, not f32
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def while_on_int(n: i32, out: Array[f32]):
    k = n
    while k:  # error `k`: while condition must be bool, not i32
        k -= 1


@tx.kernel(workgroup_size=64)
def ternary_on_int(n: i32, out: Array[f32]):
    out[0] = 1.0 if n else 0.0  # error `n`: condition must be bool, not i32


@tx.kernel(workgroup_size=64)
def and_of_numbers(n: i32, out: Array[f32]):
    if n > 0 and n:  # error `n`@3: 'and' needs bool operands, not i32
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def vector_condition(out: Array[f32]):
    v = vec3f(0.0)
    out[0] = 1.0 if v < v else 0.0  # error `v < v`: condition must be bool, not vec3b


@tx.kernel(workgroup_size=64)
def kernel_returns_value(out: Array[f32]):
    out[0] = 1.0
    return 1.0  # error `1.0`: cannot return a value: kernels return nothing


@tx.kernel(workgroup_size=64)
def return_value_in_loop(out: Array[f32]):
    for k in range(3):
        return k  # error `k`: cannot return a value: kernels return nothing


@tx.func
def returns_nothing_for_value(v: f32) -> f32:
    return  # error `return`: return needs a f32 value


@tx.kernel(workgroup_size=64)
def calls_returns_nothing_for_value(out: Array[f32]):
    out[0] = returns_nothing_for_value(1.0)


@tx.func
def returns_value_from_void(v: f32):
    return v  # error `v`: cannot return a value: the function returns None


@tx.kernel(workgroup_size=64)
def calls_returns_value_from_void(out: Array[f32]):
    returns_value_from_void(1.0)


@tx.func
def returns_wrong_type(v: f32) -> i32:
    return v  # error `v`: return value has type f32, expected i32


@tx.kernel(workgroup_size=64)
def calls_returns_wrong_type(out: Array[i32]):
    out[0] = returns_wrong_type(1.0)


@tx.func
def sometimes_returns(v: f32) -> f32:  # error `f32`@2: can reach its end without returning
    if v > 0.0:
        return v


@tx.kernel(workgroup_size=64)
def calls_sometimes_returns(out: Array[f32]):
    out[0] = sometimes_returns(1.0)


@tx.func
def never_returns(v: f32) -> f32:  # error `f32`@2: can reach its end without returning
    w = v * 2.0


@tx.kernel(workgroup_size=64)
def calls_never_returns(out: Array[f32]):
    out[0] = never_returns(1.0)


@tx.func
def recurse(n: i32) -> i32:
    return recurse(n - 1)  # error `recurse(n - 1)`: recursion is not supported on GPUs


@tx.kernel(workgroup_size=64)
def calls_recursive(out: Array[i32]):
    out[0] = recurse(3)


@tx.func
def ping(n: i32) -> i32:
    return pong(n - 1)


@tx.func
def pong(n: i32) -> i32:
    return ping(n - 1)  # error `ping(n - 1)`: recursion is not supported on GPUs: ping -> pong -> ping


@tx.kernel(workgroup_size=64)
def calls_mutual_recursion(out: Array[i32]):
    out[0] = ping(3)


@tx.kernel(workgroup_size=64)
def while_else(n: i32, out: Array[f32]):
    while n > 0:
        n -= 1
    else:
        out[0] = 1.0  # error `out[0] = 1.0`: while/else is not supported


@tx.kernel(workgroup_size=64)
def for_else(out: Array[f32]):
    for k in range(3):
        pass
    else:
        out[0] = 1.0  # error `out[0] = 1.0`: for/else is not supported


# -- range() --------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def range_runtime_step(n: i32, out: Array[f32]):
    for k in range(0, 10, n):  # error `n`@3: the range step must be a constant integer
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def range_zero_step(out: Array[f32]):
    for k in range(0, 10, 0):  # error `0`@3: the range step must not be zero
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def range_float_step(out: Array[f32]):
    for k in range(0, 10, 0.5):  # error `0.5`: range() needs integers, not float literal
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def range_of_float(out: Array[f32]):
    for k in range(1.5):  # error `1.5`: range() needs integers, not float literal
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def range_of_float_variable(x: Array[f32], out: Array[f32]):
    for k in range(0, x[0]):  # error `x[0]`: range() needs integers, not f32
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def range_without_arguments(out: Array[f32]):
    for k in range():  # error `range()`: range() takes 1 to 3 positional arguments
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def range_with_four_arguments(out: Array[f32]):
    for k in range(1, 2, 3, 4):  # error `range(1, 2, 3, 4)`: range() takes 1 to 3 positional
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def range_keyword(out: Array[f32]):
    for k in range(stop=4):  # error `range(stop=4)`: range() takes 1 to 3 positional
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def for_over_tuple(out: Array[f32]):
    for w in WEIGHTS:  # error `WEIGHTS`: only range() loops are supported
        out[0] = w


@tx.kernel(workgroup_size=64)
def for_over_array(x: Array[f32], out: Array[f32]):
    for w in x:  # error `x`: only range() loops are supported
        out[0] = w


@tx.kernel(workgroup_size=64)
def for_tuple_target(out: Array[f32]):
    for a, b in range(3):  # error `a, b`: the loop variable must be a single name
        pass


@tx.kernel(workgroup_size=64)
def range_outside_for(out: Array[f32]):
    r = range(3)  # error `range(3)`: range() is only supported as the iterable of a for loop
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def loop_variable_retyped(out: Array[f32]):
    for k in range(3):
        k = 1.5  # error `1.5`: float literal 1.5 used where i32 is expected
    out[0] = 1.0


# -- calls ----------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def func_missing_argument(out: Array[f32]):
    out[0] = scale(1.0)  # error `scale(1.0)`: scale() is missing argument(s) k


@tx.kernel(workgroup_size=64)
def func_too_many_arguments(out: Array[f32]):
    out[0] = scale(1.0, 2.0, 3.0)  # error `3.0`: scale() takes 2 argument(s), got 3


@tx.kernel(workgroup_size=64)
def func_wrong_argument_type(n: i32, out: Array[f32]):
    out[0] = scale(1.0, n)  # error `n`: argument 'k' has type i32, expected f32


@tx.kernel(workgroup_size=64)
def func_unknown_keyword(out: Array[f32]):
    out[0] = scale(1.0, q=2.0)  # error `q=2.0`: scale() has no parameter 'q'


@tx.kernel(workgroup_size=64)
def func_keyword_given_twice(out: Array[f32]):
    out[0] = scale(1.0, 2.0, v=2.0)  # error `v=2.0`: argument 'v' is given twice


@tx.kernel(workgroup_size=64)
def func_vector_argument(out: Array[f32]):
    out[0] = scale(vec3f(0.0), 1.0)  # error `vec3f(0.0)`: argument 'v' has type vec3f, expected f32


@tx.kernel(workgroup_size=64)
def func_array_for_value(x: Array[f32], out: Array[f32]):
    out[0] = scale(x, 1.0)  # error `x`: array 'x' is not a value


@tx.kernel(workgroup_size=64)
def func_value_for_array(x: Array[f32], out: Array[f32]):
    out[0] = total(x[0])  # error `x[0]`: must be an array parameter of type Array[f32], got f32


@tx.kernel(workgroup_size=64)
def func_array_of_other_type(x: Array[i32], out: Array[f32]):
    out[0] = total(x)  # error `x`: must be an array parameter of type Array[f32], got Array[i32]


@tx.kernel(workgroup_size=64)
def func_void_result_used(out: Array[f32]):
    out[0] = nothing(1.0)  # error `nothing(1.0)`: the function returns no value


@tx.kernel(workgroup_size=64)
def func_void_result_assigned(out: Array[f32]):
    y = nothing(1.0)  # error `nothing(1.0)`: the value assigned to 'y' is None
    out[0] = 1.0


@tx.func
def unannotated(v) -> f32:  # error `v`: parameter 'v' needs a type annotation
    return v


@tx.kernel(workgroup_size=64)
def calls_unannotated(out: Array[f32]):
    out[0] = unannotated(1.0)


@tx.func
def func_with_default(v: f32 = (1.0, 2.0),) -> f32:  # error `(1.0, 2.0)`: the default of parameter 'v' must be a constant
    return v


@tx.kernel(workgroup_size=64)
def calls_func_with_default(out: Array[f32]):
    out[0] = func_with_default(1.0)


@tx.func
def func_returns_array(v: f32,) -> Array[f32]:  # error `Array[f32]`: device functions cannot return Array[f32]
    return v


@tx.kernel(workgroup_size=64)
def calls_func_returns_array(out: Array[f32]):
    out[0] = 1.0
    func_returns_array(1.0)


@tx.func
def func_body_error(v: f32) -> f32:
    return v + i32(1)  # error `v + i32(1)`: cannot add f32 and i32


@tx.kernel(workgroup_size=64)
def calls_func_body_error(out: Array[f32]):
    out[0] = func_body_error(1.0)


@tx.kernel(workgroup_size=64)
def sqrt_without_arguments(out: Array[f32]):
    out[0] = tx.sqrt()  # error `tx.sqrt()`: takes 1 argument


@tx.kernel(workgroup_size=64)
def sqrt_of_bool(n: i32, out: Array[f32]):
    out[0] = tx.sqrt(n > 0)  # error `n > 0`: expected a float or float vector, got bool


@tx.kernel(workgroup_size=64)
def sqrt_of_int(n: i32, out: Array[f32]):
    out[0] = tx.sqrt(n)  # error `n`: expected a float or float vector, got i32


@tx.kernel(workgroup_size=64)
def clamp_mixed_types(x: Array[f32], n: i32, out: Array[f32]):
    out[0] = tx.clamp(x[0], 0.0, n)  # error `n`: arguments must have one type, got f32 and i32


@tx.kernel(workgroup_size=64)
def dot_of_scalars(out: Array[f32]):
    out[0] = tx.dot(1.0, 2.0)  # error `1.0`: expected a numeric vector


@tx.kernel(workgroup_size=64)
def intrinsic_keyword(x: Array[f32], out: Array[f32]):
    out[0] = tx.sqrt(x=x[0])  # error `x=x[0]`: tx.sqrt() takes no keyword arguments


@tx.kernel(workgroup_size=64)
def min_mixed_types(n: i32, out: Array[f32]):
    out[0] = min(1.5, n)  # error `1.5`: min(): expected i32, got float literal


@tx.kernel(workgroup_size=64)
def max_without_arguments(out: Array[f32]):
    out[0] = max()  # error `max()`: takes 2 arguments


@tx.kernel(workgroup_size=64)
def round_with_digits(x: Array[f32], out: Array[f32]):
    out[0] = round(x[0], 2)  # error `round(x[0], 2)`: takes 1 argument


@tx.kernel(workgroup_size=64)
def builtin_value_with_argument(out: Array[f32]):
    i = tx.global_invocation_id(1)  # error `tx.global_invocation_id(1)`: takes no arguments
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def conversion_keyword(n: i32, out: Array[f32]):
    out[0] = f32(x=n)  # error `x=n`: f32 takes no keyword arguments


# -- vectors and matrices -------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def vector_too_few_components(out: Array[vec3f]):
    out[0] = vec3f(1.0, 2.0)  # error `vec3f(1.0, 2.0)`: vec3f needs 3 components, got 2


@tx.kernel(workgroup_size=64)
def vector_too_many_components(out: Array[vec3f]):
    out[0] = vec3f(1.0, 2.0, 3.0, 4.0)  # error `vec3f(1.0, 2.0, 3.0, 4.0)`: needs 3 components, got 4


@tx.kernel(workgroup_size=64)
def vector_component_of_other_type(n: i32, out: Array[vec3f]):
    out[0] = vec3f(1.0, n, 2.0)  # error `n`: expected a f32 component, got i32


@tx.kernel(workgroup_size=64)
def vector_from_other_vector_type(out: Array[vec4f]):
    out[0] = vec4f(tx.vec2i(1), 1.0, 1.0)  # error `tx.vec2i(1)`: vec4f needs f32 components, not vec2i


@tx.kernel(workgroup_size=64)
def vector_from_vector_of_other_size(out: Array[vec3f]):
    out[0] = vec3f(vec2f(1.0))  # error `vec2f(1.0)`: cannot convert vec2f to vec3f


@tx.kernel(workgroup_size=64)
def vector_keyword(out: Array[f32]):
    out[0] = vec3f(x=1.0).x  # error `x=1.0`: vec3f takes no keyword arguments


@tx.kernel(workgroup_size=64)
def bad_swizzle_letters(out: Array[f32]):
    v = vec3f(0.0)
    out[0] = v.xq.x  # error `v.xq`: vec3f has no attribute 'xq'


@tx.kernel(workgroup_size=64)
def swizzle_mixed_sets(out: Array[f32]):
    v = vec3f(0.0)
    out[0] = v.xg.x  # error `v.xg`: swizzles use the letters x, y, z, w or r, g, b, a


@tx.kernel(workgroup_size=64)
def swizzle_past_size(out: Array[f32]):
    v = vec2f(0.0)
    out[0] = v.xyz.x  # error `v.xyz`: vec2f has no component 'xyz'


@tx.kernel(workgroup_size=64)
def swizzle_too_long(out: Array[f32]):
    v = vec4f(0.0)
    out[0] = v.xyzwx.x  # error `v.xyzwx`: vec4f has no attribute 'xyzwx'


@tx.kernel(workgroup_size=64)
def swizzle_write(out: Array[vec3f]):
    v = vec3f(0.0)
    v.xy = vec2f(1.0)  # error `v.xy`: cannot assign to v.xy
    out[0] = v


@tx.kernel(workgroup_size=64)
def vector_component_write_of_other_type(n: i32, out: Array[vec3f]):
    v = vec3f(0.0)
    v.x = n  # error `n`: value assigned to v.x has type i32, expected f32
    out[0] = v


@tx.kernel(workgroup_size=64)
def vector_index_out_of_range(out: Array[f32]):
    v = vec3f(0.0)
    out[0] = v[3]  # error `3`: index 3 is out of range for length 3


@tx.kernel(workgroup_size=64)
def vector_index_write_out_of_range(out: Array[vec3f]):
    v = vec3f(0.0)
    v[5] = 1.0  # error `5`: index 5 is out of range for length 3
    out[0] = v


@tx.kernel(workgroup_size=64)
def vector_two_indices(out: Array[f32]):
    v = vec3f(0.0)
    out[0] = v[0, 1]  # error `0, 1`: vec3f takes one index


@tx.kernel(workgroup_size=64)
def vector_method(out: Array[f32]):
    v = vec3f(0.0)
    out[0] = v.length()  # error `v.length`: vec3f has no attribute 'length'


@tx.kernel(workgroup_size=64)
def vector_into_scalar_element(out: Array[f32]):
    out[0] = vec3f(0.0)  # error `vec3f(0.0)`: value assigned to out[0] has type vec3f, expected f32


@tx.kernel(workgroup_size=64)
def matrix_too_few_values(out: Array[f32]):
    m = tx.mat2x2f(1.0, 0.0, 0.0)  # error `tx.mat2x2f(1.0, 0.0, 0.0)`: takes 2 column vectors or 4 scalars
    out[0] = m[0].x


@tx.kernel(workgroup_size=64)
def matrix_column_of_wrong_size(out: Array[f32]):
    m = tx.mat2x2f(vec3f(1.0), vec3f(1.0))  # error `vec3f(1.0)`@1: mat2x2f columns are vec2f, not vec3f
    out[0] = m[0].x


@tx.kernel(workgroup_size=64)
def matrix_column_out_of_range(out: Array[f32]):
    m = tx.mat2x2f(1.0, 0.0, 0.0, 1.0)
    out[0] = m[2].x  # error `2`: index 2 is out of range for length 2


@tx.kernel(workgroup_size=64)
def matrix_times_vector_with_star(out: Array[vec2f]):
    m = tx.mat2x2f(1.0, 0.0, 0.0, 1.0)
    out[0] = m * vec2f(1.0)  # error `m * vec2f(1.0)`: use @ for matrix products, not *


@tx.kernel(workgroup_size=64)
def matmul_size_mismatch(out: Array[vec3f]):
    m = tx.mat2x2f(1.0, 0.0, 0.0, 1.0)
    out[0] = m @ vec3f(1.0)  # error `m @ vec3f(1.0)`: cannot multiply mat2x2f by vec3f: sizes differ


@tx.kernel(workgroup_size=64)
def matrix_plus_scalar(out: Array[f32]):
    m = tx.mat2x2f(1.0, 0.0, 0.0, 1.0)
    n = m + 1.0  # error `m + 1.0`: cannot add mat2x2f and float literal
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def matrix_conversion_of_other_size(out: Array[f32]):
    m = tx.mat3x3f(tx.mat2x2f(1.0, 0.0, 0.0, 1.0))  # error `tx.mat2x2f(1.0, 0.0, 0.0, 1.0)`: cannot convert mat2x2f to mat3x3f
    out[0] = 1.0


# -- structs --------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def unknown_struct_field(ps: Array[Particle], out: Array[f32]):
    out[0] = ps[0].weight  # error `ps[0].weight`: Particle has no field 'weight'


@tx.kernel(workgroup_size=64)
def struct_field_of_wrong_type(ps: Array[Particle], n: i32):
    ps[0].mass = n  # error `n`: value assigned to ps[0].mass has type i32, expected f32


@tx.kernel(workgroup_size=64)
def struct_missing_field(out: Array[f32]):
    p = Particle(vec3f(0.0))  # error `Particle(vec3f(0.0))`: Particle(...) is missing field(s) mass
    out[0] = p.mass


@tx.kernel(workgroup_size=64)
def struct_unknown_keyword(out: Array[f32]):
    p = Particle(pos=vec3f(0.0), mass=1.0, q=2.0)  # error `q=2.0`: Particle has no field 'q'
    out[0] = p.mass


@tx.kernel(workgroup_size=64)
def struct_field_given_twice(out: Array[f32]):
    p = Particle(vec3f(0.0), 1.0, mass=2.0)  # error `mass=2.0`: field 'mass' is given twice
    out[0] = p.mass


@tx.kernel(workgroup_size=64)
def struct_too_many_values(out: Array[f32]):
    p = Particle(vec3f(0.0), 1.0, 2.0)  # error `2.0`: Particle has 2 fields
    out[0] = p.mass


@tx.kernel(workgroup_size=64)
def struct_value_of_wrong_type(n: i32, out: Array[f32]):
    p = Particle(n, 2.0)  # error `n`: field 'pos' has type i32, expected vec3f
    out[0] = p.mass


@tx.kernel(workgroup_size=64)
def struct_type_attribute(out: Array[f32]):
    out[0] = Particle.mass  # error `Particle.mass`: type 'Particle' has no attribute 'mass'


@tx.kernel(workgroup_size=64)
def struct_into_number(ps: Array[Particle], out: Array[f32]):
    out[0] = ps[0]  # error `ps[0]`: value assigned to out[0] has type Particle, expected f32


@tx.kernel(workgroup_size=64)
def struct_annotation_with_number(out: Array[f32]):
    p: Particle = 1.0  # error `1.0`: value of 'p' has type float literal, expected Particle
    out[0] = 1.0


@tx.struct
class StructWithArrayField:
    data: Array[f32]  # error `Array[f32]`: struct fields cannot be Array[f32]


@tx.struct
class StructWithUnknownType:
    weight: float64  # error `float64`: name 'float64' is not defined


@tx.struct
class StructWithDefault:
    mass: f32 = 1.0  # error `1.0`: struct fields have no default values


@tx.struct
class StructWithoutFields:  # error: needs at least one annotated field
    pass


@tx.struct
class StructWithAtomic:
    count: tx.Atomic[u32]  # error `tx.Atomic[u32]`: struct fields cannot be Atomic[u32]


@tx.struct
class Flagged:
    flag: tx.bool
    mass: f32


@tx.kernel(workgroup_size=64)
def struct_with_bool_in_buffer(ps: Array[Flagged], out: Array[f32]):  # error `Array[Flagged]`: cannot be stored in a buffer
    out[0] = ps[0].mass


# -- atomics --------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def atomic_on_plain_array(out: Array[f32]):
    tx.atomic_add(out[0], 1.0)  # error `out[0]`: expected an element of Atomic[i32], Atomic[u32] or Atomic[f32], got f32


@tx.kernel(workgroup_size=64)
def atomic_on_local(out: Array[u32]):
    k = u32(0)
    tx.atomic_add(k, u32(1))  # error `k`: tx.atomic_add() takes a reference into


@tx.kernel(workgroup_size=64)
def atomic_read_directly(counts: Array[tx.Atomic[u32]], out: Array[u32]):
    out[0] = counts[0]  # error `counts[0]`: atomic element counts[0] is read with tx.atomic_load


@tx.kernel(workgroup_size=64)
def atomic_written_directly(counts: Array[tx.Atomic[u32]]):
    counts[0] = u32(1)  # error `counts[0]`: atomic element counts[0] is written with tx.atomic_store


@tx.kernel(workgroup_size=64)
def atomic_incremented_directly(counts: Array[tx.Atomic[u32]]):
    counts[0] += u32(1)  # error `counts[0]`: is written with tx.atomic_add


@tx.kernel(workgroup_size=64)
def atomic_value_of_other_type(counts: Array[tx.Atomic[u32]], n: i32):
    tx.atomic_add(counts[0], n)  # error `n`@2: expected u32, got i32


@tx.kernel(workgroup_size=64)
def atomic_min_of_floats(counts: Array[tx.Atomic[f32]]):
    tx.atomic_min(counts[0], 1.0)  # error `counts[0]`: an element of Atomic[i32] or Atomic[u32]


@tx.kernel(workgroup_size=64)
def atomic_of_bool(flags: Array[tx.Atomic[tx.bool]],):  # error `tx.bool`: Atomic[...] takes i32, u32 or f32
    pass


@tx.kernel(workgroup_size=64)
def atomic_load_with_value(counts: Array[tx.Atomic[u32]], out: Array[u32]):
    out[0] = tx.atomic_load(counts[0], u32(1))  # error `tx.atomic_load(counts[0], u32(1))`: takes 1 argument


# -- workgroup memory, barriers and subgroups -----------------------------------------------


@tx.kernel(workgroup_size=64)
def workgroup_array_declared_twice(out: Array[f32]):
    tile = tx.workgroup_array(f32, 64)
    tile = tx.workgroup_array(f32, 64)  # error `tile = tx.workgroup_array(f32, 64)`: is declared twice
    out[0] = tile[0]


@tx.kernel(workgroup_size=64)
def workgroup_array_reassigned(out: Array[f32]):
    tile = tx.workgroup_array(f32, 64)
    tile = 1.0  # error `tile = 1.0`: workgroup array 'tile' is assigned twice
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def workgroup_array_copied(out: Array[f32]):
    tile = tx.workgroup_array(f32, 64)
    copy = tile  # error `tile`: workgroup array 'tile' cannot be copied or passed
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def workgroup_array_runtime_length(n: i32, out: Array[f32]):
    tile = tx.workgroup_array(f32, n)  # error `n`: the length must be a constant integer
    out[0] = tile[0]


@tx.kernel(workgroup_size=64)
def workgroup_array_in_expression(out: Array[f32]):
    out[0] = tx.workgroup_array(f32, 4)[0]  # error `tx.workgroup_array(f32, 4)`: declares a name


@tx.kernel(workgroup_size=64)
def workgroup_array_of_number(out: Array[f32]):
    tile = tx.workgroup_array(4, 4)  # error `4`@1: the first argument must be a type
    out[0] = tile[0]


@tx.kernel(workgroup_size=64)
def workgroup_array_in_branch(out: Array[f32]):
    if out[0] > 0.0:
        tile = tx.workgroup_array(f32, 4)  # error `tile = tx.workgroup_array(f32, 4)`: must be declared before its uses
    tile[0] = 1.0


@tx.func
def declares_workgroup_array(v: f32) -> f32:
    tile = tx.workgroup_array(f32, -1)  # error `-1`: the length must be positive
    return v


@tx.kernel(workgroup_size=64)
def calls_declares_workgroup_array(out: Array[f32]):
    out[0] = declares_workgroup_array(1.0)


@tx.kernel(workgroup_size=64)
def barrier_in_lane_branch(out: Array[f32]):
    if tx.local_invocation_index() < 32:
        tx.workgroup_barrier()  # error `tx.workgroup_barrier()`: must be reached by the whole workgroup


@tx.kernel(workgroup_size=64)
def barrier_after_lane_return(x: Array[f32]):
    if tx.global_invocation_id().x >= len(x):
        return
    tx.storage_barrier()  # error `tx.storage_barrier()`: after the `return` at line


@tx.kernel(workgroup_size=64)
def barrier_in_loop_over_written_buffer(out: Array[i32]):
    out[0] = 1
    for k in range(out[0]):
        tx.workgroup_barrier()  # error `tx.workgroup_barrier()`: buffer 'out', which the kernel writes


@tx.kernel(workgroup_size=64)
def barrier_as_value(out: Array[f32]):
    out[0] = tx.workgroup_barrier()  # error `tx.workgroup_barrier()`: has no value


@tx.kernel(workgroup_size=64)
def barrier_with_argument(out: Array[f32]):
    tx.workgroup_barrier(1)  # error `tx.workgroup_barrier(1)`: takes 0 arguments


@tx.kernel(workgroup_size=64)
def uniform_load_of_buffer(x: Array[f32], out: Array[f32]):
    out[0] = tx.workgroup_uniform_load(x[0])  # error `x[0]`: takes a reference into workgroup memory


@tx.kernel(workgroup_size=64)
def uniform_load_at_lane_index(out: Array[f32]):
    tile = tx.workgroup_array(f32, 64)
    out[0] = tx.workgroup_uniform_load(tile[tx.local_invocation_index()])  # error `tile[tx.local_invocation_index()]`: must be uniform


@tx.func
def synchronise_if(flag: tx.bool):
    if flag:
        tx.workgroup_barrier()


@tx.kernel(workgroup_size=64)
def barrier_controlled_by_lane_argument(out: Array[f32]):
    synchronise_if(tx.local_invocation_index() < 8)  # error `tx.local_invocation_index() < 8`: argument 'flag' of 'synchronise_if' must be uniform


@tx.kernel(workgroup_size=64)
def subgroup_sum_in_lane_branch(x: Array[f32], out: Array[f32]):
    if tx.global_invocation_id().x < 3:
        out[0] = tx.subgroup_add(x[0])  # error `tx.subgroup_add(x[0])`: must be reached by the whole subgroup


@tx.kernel(workgroup_size=64)
def subgroup_broadcast_runtime_lane(x: Array[f32], n: u32, out: Array[f32]):
    out[0] = tx.subgroup_broadcast(x[0], n)  # error `n`: the lane of tx.subgroup_broadcast() must be a compile-time constant


@tx.kernel(workgroup_size=64)
def subgroup_broadcast_lane_out_of_range(x: Array[f32], out: Array[f32]):
    out[0] = tx.subgroup_broadcast(x[0], u32(200))  # error `u32(200)`: must be between 0 and 127, got 200


@tx.kernel(workgroup_size=64)
def subgroup_and_of_floats(x: Array[f32], out: Array[f32]):
    out[0] = tx.subgroup_and_(x[0])  # error `x[0]`: expected an integer or integer vector, got f32


# -- found by probing: internal errors and invalid shaders, now diagnostics --------------------


@tx.kernel(workgroup_size=64)
def convert_infinity_to_int(out: Array[i32]):
    out[0] = i32(math.inf)  # error `math.inf`: cannot convert inf to i32


@tx.kernel(workgroup_size=64)
def convert_nan_to_int(out: Array[i32]):
    out[0] = i32(math.nan)  # error `math.nan`: cannot convert nan to i32


@tx.kernel(workgroup_size=64)
def huge_integer_as_float(out: Array[f32]):
    out[0] = f32(10**400)  # error `10**400`: integer literal 10000000... (401 digits) is too large for a float


@tx.kernel(workgroup_size=64)
def huge_integer_against_float(out: Array[f32]):
    out[0] = 10**400 + 0.5  # error `10**400 + 0.5`: int too large to convert to float


@tx.kernel(workgroup_size=64)
def local_array_too_long(out: Array[f32]):
    t = tx.local_array(f32, 10**12)  # error `10**12`: the length 1000000000000 is too large
    out[0] = t[0]


@tx.kernel(workgroup_size=64)
def workgroup_array_too_long(out: Array[f32]):
    tile = tx.workgroup_array(f32, 2**40)  # error `2**40`: the length 1099511627776 is too large
    out[0] = tile[0]


@tx.kernel(workgroup_size=64)
def endless_loop(out: Array[f32]):
    while True:  # error `True`: this loop never ends: nothing in it breaks out or returns
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def endless_loop_with_inner_break(out: Array[f32]):
    while 1 == 1:  # error `1 == 1`: this loop never ends
        for k in range(4):
            break


@tx.kernel(workgroup_size=64)
def complex_constant(out: Array[f32]):
    out[0] = (-8) ** (1 / 3)  # error `(-8) ** (1 / 3)`: the constant expression has a complex value


@tx.func
def first_of_grid(a: Array2D[f32]) -> f32:
    return a[0]  # error `0`: 'a' is 2-D: it takes 2 index(es), got 1


@tx.kernel(workgroup_size=64)
def calls_first_of_grid(m: Array2D[f32], out: Array[f32]):
    out[0] = first_of_grid(m)


@tx.func
def bumped(a: Array[f32]) -> f32:
    a = a  # error `a`@1: array parameter 'a' cannot be reassigned
    return 1.0


@tx.kernel(workgroup_size=64)
def calls_bumped(out: Array[f32]):
    out[0] = bumped(out)


@tx.struct
class StructWithFieldTwice:
    n: i32
    n: f32  # error `n`: field 'n' is declared twice


@tx.struct
class StructDerived(Particle):  # error `Particle`: struct StructDerived cannot derive from another class
    w: f32


@tx.kernel(workgroup_size=64)
def element_annotation_disagrees(out: Array[f32]):
    out[0]: i32 = 1  # error `i32`: out[0] is f32, not i32


@tx.kernel(workgroup_size=64)
def augmented_integer_power(n: i32, out: Array[i32]):
    k = 2
    k **= n  # error `n`: integer ** needs a constant exponent >= 0; use floats, e.g. f32(k) ** ...
    out[0] = k


@tx.kernel(workgroup_size=64)
def shift_float_literal(out: Array[i32]):
    out[0] = 1 << 1.5  # error `1.5`: cannot shift int literal by float literal


@tx.kernel(workgroup_size=64)
def combine_float_literals(out: Array[i32]):
    out[0] = 1.5 & 2.5  # error `1.5 & 2.5`: cannot combine float literal and float literal


@tx.kernel(workgroup_size=64)
def compare_number_with_bool(n: i32, out: Array[f32]):
    if 0 == (n > 0):  # error `0 == (n > 0)`: cannot compare int literal and bool
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def divide_bool(out: Array[f32]):
    out[0] = 1 / True  # error `True`: cannot divide int literal and bool


@tx.kernel(workgroup_size=64)
def sign_of_unsigned(x: Array[u32]):
    x[1] = tx.sign(x[0])  # error `x[0]`: u32 has no sign


# -- the stdlib's language: named ops, compile-time tests, defaults, tx.compile_error ------


@tx.func
def fold_op(op: tx.Func, a: f32, b: f32) -> f32:
    return op(a, b)


@tx.kernel(workgroup_size=64)
def unknown_named_op(out: Array[f32]):
    out[0] = fold_op("sum", 1.0, 2.0)  # error `"sum"`: unknown op 'sum': the named ops are 'add'


@tx.kernel(workgroup_size=64)
def is_between_values(n: i32, k: i32, out: Array[f32]):
    if n is not k:  # error `n is not k`: 'is' compares compile-time objects
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def is_chained_with_less(out: Array[f32]):
    if fold_op is fold_op < 3:  # error: 'is' cannot be chained with other comparisons
        out[0] = 1.0


@tx.func
def scaled(v: f32, k: f32 = None) -> f32:
    return v * k  # error `k`: parameter 'k' was not given (its default is None)


@tx.kernel(workgroup_size=64)
def omitted_used_as_value(out: Array[f32]):
    out[0] = scaled(2.0)


@tx.func
def array_default(a: Array[f32] = None) -> f32:  # error `None`: array parameters have no defaults
    return 1.0


@tx.kernel(workgroup_size=64)
def calls_array_default(out: Array[f32]):
    out[0] = array_default(out)


@tx.func
def needs_named(op: tx.Func, v: f32) -> f32:
    if op is fold_op:
        return v
    tx.compile_error("only fold_op here")  # error `tx.compile_error("only fold_op here")`: only fold_op here


@tx.kernel(workgroup_size=64)
def takes_wrong_branch(out: Array[f32]):
    out[0] = needs_named("add", 1.0)


@tx.kernel(workgroup_size=64)
def compile_error_without_text(out: Array[f32]):
    tx.compile_error(3)  # error `tx.compile_error(3)`: tx.compile_error takes one string


@tx.kernel(workgroup_size=64)
def kernel_func_without_value(out: Array[f32], op: tx.Func):  # error `op: tx.Func`: tx.Func parameter 'op' has no value
    out[0] = op(1.0, 2.0)


@tx.kernel(workgroup_size=64)
def stdlib_host_function_in_kernel(out: Array[f32]):
    out[0] = tx.stdlib.reduce(out)  # error `tx.stdlib.reduce`: tx.stdlib.reduce cannot be used inside a kernel


@tx.kernel(workgroup_size=64)
def static_range_of_a_variable(out: Array[f32], count: u32):
    for i in tx.static_range(count):  # error `count`: tx.static_range needs bounds known at compile time
        out[i] = 1.0


@tx.kernel(workgroup_size=64)
def static_range_too_long(out: Array[f32]):
    for i in tx.static_range(1000):  # error `tx.static_range(1000)`: would copy the loop body 1000 times
        out[i] = 1.0


@tx.kernel(workgroup_size=64)
def static_range_with_break(out: Array[f32]):
    for i in tx.static_range(4):
        if out[i] > 0.0:
            break  # error `break`: 'break' in a tx.static_range loop
        out[i] = 1.0


@tx.kernel(workgroup_size=64)
def static_range_variable_used_after(out: Array[f32]):
    for slot in tx.static_range(4):  # error `slot`: 'slot' of a tx.static_range loop is a constant
        out[slot] = 1.0
    out[slot] = 2.0


@tx.kernel(workgroup_size=64)
def static_range_outside_a_loop(out: Array[f32]):
    r = tx.static_range(4)  # error `tx.static_range(4)`: tx.static_range is the iterable of a for loop
    out[0] = 1.0


# -- print() --------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def print_an_array(x: Array[f32]):
    print("x is", x)  # error `x`@2: print() in a kernel takes strings, and scalar (bool, i32, u32, f32, f16) or vector values, not array 'x'


@tx.kernel(workgroup_size=64)
def print_a_struct(p: Array[Particle]):
    print(p[0])  # error `p[0]`: not Particle


@tx.kernel(workgroup_size=64)
def print_a_matrix(out: Array[f32]):
    m = tx.mat2x2f(1.0, 0.0, 0.0, 1.0)
    print(m)  # error `m`: print its members or elements one by one


@tx.kernel(workgroup_size=64)
def print_a_local_array(out: Array[f32]):
    t = [1.0, 2.0]
    print(t)  # error `t`@2: not array<f32, 2>


@tx.kernel(workgroup_size=64)
def print_an_f_string(n: i32):
    print(f"n = {n}")  # error `f"n = {n}"`: pass the values as arguments: print("x =", x)


@tx.kernel(workgroup_size=64)
def print_a_tuple_constant(n: i32):
    print(WEIGHTS)  # error `WEIGHTS`: not tuple constant 'WEIGHTS'


@tx.kernel(workgroup_size=64)
def print_bytes(n: i32):
    print(b"n")  # error `b"n"`: not bytes


@tx.kernel(workgroup_size=64)
def print_to_a_file(n: i32):
    print(n, file=n)  # error `file=n`: print() in a kernel takes sep= and end= only, not file=


@tx.kernel(workgroup_size=64)
def print_with_flush(n: i32):
    print(n, flush=True)  # error `flush=True`: not flush=


@tx.kernel(workgroup_size=64)
def print_with_computed_sep(n: i32):
    print(n, n, sep=SEPARATOR)  # error `SEPARATOR`: print()'s sep= must be a string literal


@tx.kernel(workgroup_size=64)
def print_star_arguments(n: i32):
    print(*WEIGHTS)  # error `*WEIGHTS`: print(*values) is not supported in kernels; pass the values one by one


@tx.kernel(workgroup_size=64)
def print_as_a_value(out: Array[f32], n: i32):
    r = print(n)  # error `print(n)`: print() is a statement in kernels


@tx.kernel(workgroup_size=64)
def print_as_an_argument(out: Array[f32], n: i32):
    out[0] = f32(print(n))  # error `print(n)`: print() is a statement in kernels


@tx.func
def print_in_a_function(v: f32):
    print("v", v, file=v)  # error `file=v`: not file=


@tx.kernel(workgroup_size=64)
def print_in_a_device_function(out: Array[f32]):
    print_in_a_function(out[0])


@tx.kernel(workgroup_size=64)
def print_a_string_constant(n: i32):
    print(SEPARATOR, n)  # error `SEPARATOR`: print() in a kernel takes text as string literals only


@tx.kernel(workgroup_size=64)
def print_a_string_operation(n: i32):
    print("n" + "=", n)  # error `"n" + "="`: print() in a kernel takes text as string literals only


@tx.kernel(workgroup_size=64)
def local_array_three_indices(out: Array[f32]):
    a = tx.local_array(f32, (2, 2))
    out[0] = a[0, 1, 0]  # error `0, 1, 0`: array<array<f32, 2>, 2> takes 2 indices


@tx.kernel(workgroup_size=64)
def atomic_tile_two_dimensions(out: Array[u32]):
    bins = tx.workgroup_array(tx.Atomic[u32], (4, 4))  # error `(4, 4)`: workgroup arrays of atomics have one dimension
    out[0] = tx.atomic_load(bins[0])


@tx.kernel(workgroup_size=64)
def local_array_empty_shape(out: Array[f32]):
    a = tx.local_array(f32, ())  # error `()`: the shape needs at least one length
    out[0] = 0.0


@tx.kernel(workgroup_size=64)
def range_runtime_step_over_i32(out: Array[i32], n: i32, stride: u32):
    for k in range(0, n, stride):  # error `range(0, n, stride)`: range() with a step known at run time counts in u32, not i32
        out[k] = k
