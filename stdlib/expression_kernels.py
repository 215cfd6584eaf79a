"""The kernels of lazy DeviceArray expressions (`pyshader_tx/runtime/expressions.py`):
generated as Python source for a `@tx.kernel`, compiled like user code, launched through
prepared plans (`pyshader_tx/runtime/plans.py`). Registered with the runtime when the
stdlib is imported.

An expression's structure (`expressions.Key`: operators, dtypes, the leaves' shapes and views)
gives its plan; the plan's kernel is found by its generated source text (and the
`@tx.vectorize` functions it calls), so a kernel is compiled once per structure, never per
value: scalars are uniforms, and array shapes, offsets and strides are uniforms baked
into the plan.

Each invocation computes a group of four consecutive elements (C order of the result):
- an array that has the result's shape and lies contiguous is read by the element's own
  index, four at a time as one vec4 (or, for bool data, one word of four bytes) when the
  element count is a multiple of 4 and it starts at a multiple of 4 elements;
- any other (broadcast dimensions, views with offsets and strides) through the element's
  multi-index (up to 4 dimensions) dotted with its strides, read where it lies (no copy);
- bool results are stored four bytes to a word (a bool element takes one byte, as numpy).

A reduction of an expression (`sum prod max min mean`, `tx.dot`) evaluates the same
groups in the load of a reduction: workgroups over contiguous ranges of groups (ITEMS
groups in flight per invocation), a workgroup reduce, and the last workgroup to finish
combines the workgroups' totals (`device_kernels.finish_reduce`, as `stdlib.reduce`
does): one launch, one pass over the inputs.
"""

from __future__ import annotations

import functools
import linecache
import re
import math
import weakref

import numpy as np

import pyshader_tx as tx
from pyshader_tx import types as t
from pyshader_tx.runtime import capture, expressions, plans, pool, views
from pyshader_tx.runtime.device import simulated_device
from pyshader_tx.runtime.arrays import DeviceArray
from pyshader_tx.runtime.expressions import LazyArray, become, node_of

from . import calls
from .array_kernels import CONVERTED as TYPES
from .ops import NAMED_OPS
from .scan_passes import VECTORS as VECTOR_TYPES
from .scan_passes import vec4s

#: Invocations per workgroup of the generated kernels.
WORKGROUP = 256
#: Groups of four elements in flight per invocation of a reduction.
ITEMS = 4
#: Workgroups of a reduction's first pass at most.
REDUCE_WORKGROUPS = 4096
#: Result dimensions a broadcast or strided operand may have.
MAX_DIMS = 4

TYPE_NAMES = {
    np.dtype(np.float32): "f32",
    np.dtype(np.int32): "i32",
    np.dtype(np.uint32): "u32",
    np.dtype(np.bool_): "bool",
}
NUMPY_OF = {ty: dtype for dtype, ty in TYPES.items()}
VECTORS = {np.dtype(np.float32): "vec4f", np.dtype(np.int32): "vec4i", np.dtype(np.uint32): "vec4u"}
BOOL = np.dtype(np.bool_)
U32 = np.dtype(np.uint32)
I32 = np.dtype(np.int32)
F32 = np.dtype(np.float32)
COMPONENTS = "xyzw"


def _kind(dtype: np.dtype) -> str:
    return "b" if dtype == BOOL else dtype.kind


# -- operators as code ----------------------------------------------------------------------

#: (operator, loop kind or None for any) -> code with {a}, {b} (operands in the loop dtype).
BINARY_CODE = {
    ("add", "b"): "({a} or {b})",
    ("add", None): "({a} + {b})",
    ("subtract", None): "({a} - {b})",
    ("multiply", "b"): "({a} and {b})",
    ("multiply", None): "({a} * {b})",
    ("true_divide", None): "({a} / {b})",
    ("floor_divide", "f"): "({a} // {b})",
    ("floor_divide", None): "int_floor_divide({a}, {b})",
    ("remainder", "f"): "({a} % {b})",
    ("remainder", None): "int_remainder({a}, {b})",
    ("power", "f"): "float_power({a}, {b})",
    ("power", None): "int_power({a}, {b})",
    ("bitwise_and", "b"): "({a} and {b})",
    ("bitwise_and", None): "({a} & {b})",
    ("bitwise_or", "b"): "({a} or {b})",
    ("bitwise_or", None): "({a} | {b})",
    ("bitwise_xor", "b"): "({a} != {b})",
    ("bitwise_xor", None): "({a} ^ {b})",
    ("left_shift", None): "left_shift({a}, {b})",
    ("right_shift", None): "right_shift({a}, {b})",
    ("less", "b"): "(u32({a}) < u32({b}))",
    ("less", None): "({a} < {b})",
    ("less_equal", "b"): "(u32({a}) <= u32({b}))",
    ("less_equal", None): "({a} <= {b})",
    ("greater", "b"): "(u32({a}) > u32({b}))",
    ("greater", None): "({a} > {b})",
    ("greater_equal", "b"): "(u32({a}) >= u32({b}))",
    ("greater_equal", None): "({a} >= {b})",
    ("equal", None): "({a} == {b})",
    ("not_equal", None): "({a} != {b})",
    ("minimum", "b"): "({a} and {b})",
    ("minimum", None): "min({a}, {b})",
    ("maximum", "b"): "({a} or {b})",
    ("maximum", None): "max({a}, {b})",
    ("arctan2", None): "tx.atan2({a}, {b})",
}
#: The math functions: numpy's name -> tx's (the inverse of the host's `tx.sqrt`, ... table).
MATH = {
    operator: name
    for name, operator in expressions.INTRINSIC_OPERATORS.items()
    if operator in expressions.UNARY and operator != "absolute"
}
UNARY_CODE = {
    ("negative", "u"): "(u32(0) - {a})",
    ("negative", None): "(-{a})",
    ("absolute", "u"): "{a}",
    ("absolute", "b"): "{a}",
    ("absolute", None): "abs({a})",
    ("invert", "b"): "(not {a})",
    ("invert", None): "(~{a})",
    ("sign", "u"): "sign_u32({a})",
    **{(name, kind): "{a}" for name in ("floor", "ceil", "rint", "trunc") for kind in "iub"},
    **{(name, None): f"tx.{spelled}({{a}})" for name, spelled in MATH.items()},
}


def _code(table: dict, name: str, kind: str) -> str:
    code = table.get((name, kind))
    return code if code is not None else table[(name, None)]


def cast(code: str, source: np.dtype, target: np.dtype) -> str:
    """`code` (a value of `source`) as a value of `target`, as numpy's astype converts."""
    if source == target:
        return code
    if target == BOOL:
        return f"({code} != {TYPE_NAMES[source]}(0))"
    return f"{TYPE_NAMES[target]}({code})"


# -- leaves ---------------------------------------------------------------------------------


class Leaf:
    """How the kernel reads one operand (see the module doc)."""

    def __init__(self, index: int, key, shape: tuple, vectors: bool):
        self.index = index
        self.scalar = key[0] == "s"
        if self.scalar:
            self.dtype = np.dtype(key[1])
            self.access = "uniform"
            return
        dtype, own_shape = key[1][0], key[1][1]
        view = key[2]
        self.dtype = dtype
        itemsize = dtype.itemsize
        if view is None:
            offset, strides = 0, views.c_strides(tuple(own_shape), 1)
        else:
            offset = view.offset // itemsize
            strides = tuple(s // itemsize for s in view.strides)
        rank = len(shape)
        strides = (0,) * (rank - len(own_shape)) + tuple(
            0 if n == 1 else s for n, s in zip(own_shape, strides)
        )
        padded = (1,) * (rank - len(own_shape)) + tuple(own_shape)
        self.offset, self.strides = offset, strides
        self.own_size = math.prod(own_shape)
        self.whole = view is None
        contiguous = padded == tuple(shape) and all(
            s == c or n == 1 for s, c, n in zip(strides, views.c_strides(tuple(shape), 1), shape)
        )
        if not any(strides):
            self.access = "one"
        elif contiguous:
            self.access = "vector" if vectors and offset % 4 == 0 else "flat"
        else:
            self.access = "strided"  # (its dimensions merged by `Generator._collapse`)
        self.own_shape = tuple(own_shape)
        # what the binding must cover, from element 0
        self.elements = views.extent(shape, views.ViewLayout(offset, strides), 1)[1]

    def parameter(self) -> str:
        i = self.index
        if self.scalar:
            return f"c{i}: {'u32' if self.dtype == BOOL else TYPE_NAMES[self.dtype]}"
        if self.dtype == BOOL:
            element = "u32"
        elif self.access == "vector":
            element = VECTORS[self.dtype]
        else:
            element = TYPE_NAMES[self.dtype]
        extra = f", s{i}: tx.vec4i" if self.access == "strided" else ""
        return f"x{i}: Array[{element}], o{i}: i32{extra}"

    def bound_as(self) -> tuple:
        """(shape, dtype) of the numpy array the kernel parameter takes (vec4f: (n, 4))."""
        if self.dtype == BOOL:
            return (-(-self.elements // 4),), U32
        if self.access == "vector":
            return (self.elements // 4, 4), self.dtype
        return (self.elements,), self.dtype

    def direct(self, fast: bool) -> bool:
        """Whether the run's array itself binds as the parameter (its binding covers the
        same bytes: a whole array from element 0 that the reads cover), not a View of it:
        prepared launches on the GPU (`fast`) bind arrays without checking their type."""
        return fast and self.whole and self.offset == 0 and self.elements == self.own_size

    def binding(self, slot, direct: bool) -> list:
        """The plan's arguments for this leaf: the array's view, its offset (and strides)."""
        if self.scalar:
            return [slot]
        if direct:
            view = slot
        elif self.dtype == BOOL:
            view = plans.View(slot, (-(-self.elements // 4),), t.u32)
        elif self.access == "vector":
            view = vec4s(slot, self.elements)
        else:
            view = plans.View(slot, (self.elements,), TYPES[self.dtype])
        offset = self.offset // 4 if self.access == "vector" else self.offset
        if self.access != "strided":
            return [view, offset]
        padding = (0,) * (MAX_DIMS - len(self.strides))
        return [view, offset, tx.vec4i(*(padding + self.strides))]

    def load(self, lines: list, group: str) -> None:
        """Lines that read this leaf's group of four elements once (vector access)."""
        if self.access == "vector":
            lines.append(f"L{self.index} = x{self.index}[{group} + u32(o{self.index})]")

    def value(self, c: int) -> str:
        """Element c (0..3) of the group, a value of the leaf's dtype."""
        i = self.index
        if self.scalar:
            return f"(c{i} != u32(0))" if self.dtype == BOOL else f"c{i}"
        place = {
            "one": f"u32(o{i})",
            "flat": f"(k{c} + u32(o{i}))",
            "strided": f"u32(o{i} + {_dotted(i)})".replace("@", str(c)),
        }.get(self.access)
        if self.access == "vector":
            if self.dtype == BOOL:
                return f"byte_of(L{i}, u32({c}))"
            return f"L{i}.{COMPONENTS[c]}"
        if self.dtype == BOOL:
            return f"byte_of(x{i}[{place} >> u32(2)], {place} & u32(3))"
        return f"x{i}[{place}]"


def _dotted(i: int) -> str:
    return " + ".join(f"i32(m@{d}) * s{i}.{COMPONENTS[d]}" for d in range(MAX_DIMS))


# -- generating a kernel --------------------------------------------------------------------


class Generator:
    """The source of the kernel of one expression structure (`key`) over a result of
    `shape` (see the module doc)."""

    def __init__(self, key, shape: tuple):
        self.shape = tuple(shape)
        self.count = math.prod(self.shape)
        self.vectors = self.count % 4 == 0
        self.leaves: list[Leaf] = []
        self.functions: list = []  # vectorized @tx.funcs, named vf0, vf1, ...
        self.tree = self._walk(key)
        self.index_shape = self._collapse()

    def _collapse(self) -> tuple:
        """The result's dimensions as the strided leaves need them: neighbours merged where
        every strided leaf steps through them as one (numpy's iterator does the same), so a
        broadcast or transposed operand of up to MAX_DIMS merged dimensions is read in
        place; the strided leaves' strides follow."""
        strided = [leaf for leaf in self.leaves if leaf.access == "strided"]
        if not strided:
            return ()
        dims = [n for n in self.shape]
        strides = [list(leaf.strides) for leaf in strided]
        for d in range(len(dims) - 2, -1, -1):
            if dims[d + 1] == 1:  # (a dimension of one: no steps)
                del dims[d + 1]
                for s in strides:
                    del s[d + 1]
            elif all(s[d] == s[d + 1] * dims[d + 1] or dims[d] == 1 for s in strides):
                dims[d] *= dims[d + 1]
                for s in strides:
                    s[d] = s[d + 1]
                    del s[d + 1]
                del dims[d + 1]
        if len(dims) > MAX_DIMS:
            leaf = strided[0]
            raise ValueError(
                f"an operand of shape {leaf.own_shape} broadcast or viewed into a result of "
                f"shape {self.shape}: its elements need {len(dims)} dimensions of strides "
                f"(at most {MAX_DIMS}); pass a copy (d.copy()) of the same shape as the result"
            )
        for leaf, s in zip(strided, strides):
            leaf.strides = tuple(s)
        return tuple(dims)

    def _walk(self, key):
        """`key` with its leaves replaced by Leaf objects (numbered in order)."""
        if key[0] in ("a", "s"):
            leaf = Leaf(len(self.leaves), key, self.shape, self.vectors)
            self.leaves.append(leaf)
            return leaf
        name, loops, dtype, *children = key
        if name == "vectorize":
            func, *loops = loops
            if func not in self.functions:
                self.functions.append(func)
            name = f"vf{self.functions.index(func)}"
        return (name, tuple(loops), dtype, [self._walk(child) for child in children])

    @property
    def strided(self) -> bool:
        return any(leaf.access == "strided" for leaf in self.leaves)

    def parameters(self) -> str:
        params = [leaf.parameter() for leaf in self.leaves]
        params.append("n: u32")
        params.append("groups: u32")
        if self.strided:
            params.append("shape: tx.vec4u")
        return ", ".join(params)

    def arguments(self, slots, fast: bool) -> list:
        args = []
        for leaf, slot in zip(self.leaves, slots):
            args += leaf.binding(slot, not leaf.scalar and leaf.direct(fast))
        args += [self.count, -(-self.count // 4)]
        if self.strided:
            padded = (1,) * (MAX_DIMS - len(self.index_shape)) + self.index_shape
            args.append(tx.vec4u(*padded))
        return args

    def group_lines(self, group: str) -> tuple[list, list]:
        """(lines, the four result codes) computing the group `group` (a u32 expression)."""
        lines = [f"k0 = {group} * u32(4)"]
        if any(leaf.access in ("flat", "strided") for leaf in self.leaves):
            for c in range(1, 4):  # (the last group's elements past n read element n - 1)
                lines.append(f"k{c} = min(k0 + u32({c}), n - u32(1))")
        for leaf in self.leaves:
            leaf.load(lines, group)
        results = []
        for c in range(4):
            if self.strided:
                self._multi_index(lines, c)
            results.append(self._expression(self.tree, c, lines))
        return lines, results

    def _multi_index(self, lines: list, c: int) -> None:
        rank = len(self.index_shape)
        lines.append(f"e = k{c}")
        for d in range(MAX_DIMS - 1, -1, -1):
            if d < MAX_DIMS - rank:
                lines.append(f"m{c}{d} = u32(0)")
            elif d == MAX_DIMS - rank:
                lines.append(f"m{c}{d} = e")
            else:
                lines.append(f"m{c}{d} = e % shape.{COMPONENTS[d]}")
                lines.append(f"e = e // shape.{COMPONENTS[d]}")

    def _expression(self, tree, c: int, lines: list) -> str:
        """A name holding `tree`'s value for element c (lines appended compute it)."""
        if isinstance(tree, Leaf):
            return tree.value(c)
        name, loops, _, children = tree
        args = [
            cast(self._expression(child, c, lines), _dtype_of(child), loop)
            for child, loop in zip(children, loops)
        ]
        if name.startswith("vf"):
            code = f"{name}({', '.join(args)})"
        elif name == "where":
            code = f"({args[1]} if {args[0]} else {args[2]})"
        elif len(args) == 2:
            code = _code(BINARY_CODE, name, _kind(loops[0])).format(a=args[0], b=args[1])
        else:
            code = _code(UNARY_CODE, name, _kind(loops[0])).format(a=args[0])
        temp = f"t{len(lines)}"  # (of `dtype`: numpy's loop gives it; vf and where return it)
        lines.append(f"{temp} = {code}")
        return temp

    @property
    def dtype(self) -> np.dtype:
        return _dtype_of(self.tree)

    def elementwise_source(self) -> str:
        """The source of the kernel that stores the expression's elements in `out`."""
        dtype = self.dtype
        if dtype == BOOL:
            out = "u32"
        elif self.vectors:
            out = VECTORS[dtype]
        else:
            out = TYPE_NAMES[dtype]
        lines, results = self.group_lines("q")
        if dtype == BOOL:
            lines.append(f"out[q] = pack_bytes({', '.join(results)})")
        elif self.vectors:
            lines.append(f"out[q] = {out}({', '.join(results)})")
        else:
            for c, result in enumerate(results):
                lines.append(f"if k0 + u32({c}) < n:")
                lines.append(f"    out[k0 + u32({c})] = {result}")
        body = "\n".join(f"        {line}" for line in lines)
        return (
            f"@tx.kernel(workgroup_size={WORKGROUP})\n"
            f"def expression(out: Array[{out}], {self.parameters()}):\n"
            f"    q = tx.global_invocation_id().x\n"
            f"    if q < groups:\n"
            f"{body}\n"
        )

    def reduction_source(self, how: str, accumulate: np.dtype) -> str:
        """The source of a reduction: out[0] = the reduction of every group (workgroup g
        reduces its range of `per` groups, a multiple of WORKGROUP * ITEMS; the last
        workgroup to finish combines the totals through `state`, times `scale`)."""
        acc = TYPE_NAMES[accumulate]
        named = REDUCED_OPS[how]
        op = f"{NAMED_OPS[named].__name__}({{a}}, {{b}})"  # (stdlib.ops' device function)
        lines_of = []
        for j in range(ITEMS):
            lines, results = self.group_lines(f"(q + u32({j * WORKGROUP}))")
            values = [cast(r, self.dtype, accumulate) for r in results]
            if not self.vectors:  # (the last group may be partial: its extra elements count not)
                values = [f"({v} if k0 + u32({c}) < n else unit)" for c, v in enumerate(values)]
            combined = op.format(
                a=op.format(a=values[0], b=values[1]), b=op.format(a=values[2], b=values[3])
            )
            lines_of.append((lines, combined))
        full = []
        for j, (lines, combined) in enumerate(lines_of):
            full += _renamed(lines, j)
            full.append(f"acc = {op.format(a='acc', b=_renamed_code(combined, j))}")
        tail = []
        for j, (lines, combined) in enumerate(lines_of):
            tail.append(f"if q + u32({j * WORKGROUP}) < end:")
            tail += [f"    {line}" for line in _renamed(lines, j)]
            tail.append(f"    acc = {op.format(a='acc', b=_renamed_code(combined, j))}")
        full_body = "\n".join(f"        {line}" for line in full)
        tail_body = "\n".join(f"    {line}" for line in tail)
        return (
            f"@loops_end\n"
            f"@tx.kernel(workgroup_size={WORKGROUP})\n"
            f"def reduction(\n"
            f"    out: Array[{acc}], state: Array[tx.Atomic[u32]], per: u32, scale: f32,\n"
            f"    {self.parameters()}\n"
            f"):\n"
            f"    g = tx.workgroup_id().x\n"
            f"    t = tx.local_invocation_id().x\n"
            f"    unit = identity({named!r}, {acc}(0))\n"
            f"    acc = unit\n"
            f"    q = g * per + t\n"
            f"    end = min(g * per + per, groups)\n"
            f"    while q + u32({WORKGROUP * (ITEMS - 1)}) < end:\n"
            f"{full_body}\n"
            f"        q += u32({WORKGROUP * ITEMS})\n"
            f"{tail_body}\n"
            f"    total = workgroup_reduce(acc, {named!r})\n"
            f"    finish_reduce(total, out, state, {named!r}, scale)\n"
        )


def _renamed(lines: list, j: int) -> list:
    """The lines of group j with their names made its own (k0 -> k0_j, t5 -> t5_j, ...)."""
    return [_renamed_code(line, j) for line in lines]


def _renamed_code(code: str, j: int) -> str:
    return re.sub(r"\b([ktmLe])(\d*)\b", lambda m: f"{m.group(1)}{m.group(2)}_{j}", code)


def _dtype_of(tree) -> np.dtype:
    return tree.dtype if isinstance(tree, Leaf) else tree[2]


# -- reductions -----------------------------------------------------------------------------

#: A reduction -> the stdlib op (`stdlib/ops.py`'s NAMED_OPS) that combines its values, and
#: whose `identity` starts each invocation and fills a partial group.
REDUCED_OPS = {"sum": "add", "mean": "add", "prod": "mul", "max": "max", "min": "min"}


def accumulation(how: str, dtype: np.dtype) -> tuple[np.dtype, np.dtype]:
    """(the dtype a reduction accumulates in, its result's dtype) over `dtype` (numpy's,
    narrowed: integer sums and products stay 32-bit, bool ones count in int32, means are
    float32)."""
    if how == "mean":
        return F32, F32
    if dtype == BOOL:
        return (I32, I32) if how in ("sum", "prod") else (U32, BOOL)
    return dtype, dtype


# -- kernels and plans ----------------------------------------------------------------------

HEADER = """import pyshader_tx as tx
from pyshader_tx.kernel import loops_end
from pyshader_tx import Array, f32, i32, u32, vec4f, vec4i, vec4u
from pyshader_tx.stdlib.expression_functions import (
    byte_of, float_power, int_floor_divide, int_power, int_remainder, left_shift,
    pack_bytes, right_shift, sign_u32,
)
from pyshader_tx.stdlib.ops import add, identity, maximum, minimum, mul
from pyshader_tx.stdlib.workgroup import workgroup_reduce
from pyshader_tx.stdlib.device_kernels import finish_reduce
"""
_kernels: dict = {}  # (source, vectorized functions) -> the kernel
PLANS = plans.PlanCache("expressions", size=64)


def kernel_of(source: str, functions: list, name: str):
    """The kernel `name` of generated `source` (compiled once per source and functions)."""
    key = (source, tuple(functions))
    kernel = _kernels.get(key)
    if kernel is None:
        filename = f"<pyshader_tx expression {len(_kernels)}>"
        text = HEADER + source
        linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
        namespace = {"__name__": f"pyshader_tx_expression_{len(_kernels)}"}
        for i, func in enumerate(functions):
            namespace[f"vf{i}"] = func
        exec(compile(text, filename, "exec"), namespace)
        kernel = _kernels[key] = namespace[name]
    return kernel


def _inputs(plan, generator: Generator, fast: bool) -> list:
    slots = []
    for leaf in generator.leaves:
        if leaf.scalar:
            dtype = U32 if leaf.dtype == BOOL else leaf.dtype
            slots.append(plan.input(None, dtype))
        elif leaf.direct(fast):
            slots.append(plan.input(*leaf.bound_as()))
        else:
            slots.append(plan.input((leaf.elements,), leaf.dtype))
    return slots


def _fast() -> bool:
    """Whether plans record through `Launcher.record` now (not the simulator, not captured):
    then arrays bind without type checks, so a plan may bind an array as another type."""
    return capture._launches is None and simulated_device() is None


def _elementwise_plan(key, shape: tuple, dtype: np.dtype, fast: bool) -> plans.Plan:
    generator = Generator(key, shape)
    kernel = kernel_of(generator.elementwise_source(), generator.functions, "expression")
    plan = plans.Plan("expression")
    count = generator.count
    if dtype == BOOL:
        bound, element = ((-(-count // 4),), U32), t.u32
    elif generator.vectors:
        bound, element = ((count // 4, 4), dtype), VECTOR_TYPES[dtype]
    else:
        bound, element = ((count,), dtype), TYPES[dtype]
    if fast:  # (the result's binding is the parameter's bytes: bound itself)
        view = out = plan.input(*bound)
    else:
        out = plan.input((count,), dtype)
        view = plans.View(out, (bound[0][0],), element)
    slots = _inputs(plan, generator, fast)
    groups = -(-count // 4)
    plan.launch(kernel, view, *generator.arguments(slots, fast), threads=groups)
    plan.bools = _bool_scalars(generator)
    plan.nbytes = max(4, (count * dtype.itemsize + 3) & ~3)
    plan.count = count
    return plan


def _bool_scalars(generator: Generator) -> tuple:
    return tuple(i for i, leaf in enumerate(generator.leaves) if leaf.scalar and leaf.dtype == BOOL)


def _values(plan, leaves) -> tuple:
    if plan.bools:
        leaves = list(leaves)
        for i in plan.bools:
            leaves[i] = int(bool(leaves[i]))
    return leaves


def evaluate(array: LazyArray) -> None:
    """Give the LazyArray `array` its storage: its expression's kernel, recorded."""
    key, leaves = node_of(array)
    fast = _fast()
    plan = PLANS.get((fast, key))
    if plan is None:
        plan = PLANS.put((fast, key), _elementwise_plan(key, array.shape, array.dtype, fast))
    nbytes = plan.nbytes
    buffers = pool.buffer_pool()
    free = _free.get((buffers, nbytes))
    buffer = free.pop() if free else buffers._buffer(nbytes, False)
    reference = _reference(array, functools.partial(_released, buffers, nbytes, buffer))
    _kept[id(reference)] = reference
    become(array, buffer, nbytes)
    if plan.count:
        if plan.bools:
            leaves = _values(plan, leaves)
        plan.run(array, *leaves)


#: Results' buffers of small sizes given back when their arrays die, for the next results
#: (cheaper than the pool's buckets; safe as the pool's reuse is: work is recorded in order).
_free: dict = {}  # (BufferPool, bytes) -> [buffers]
#: Results of at most these bytes reuse buffers from `_free`; `FREE_BUFFERS` of each size,
#: `FREE_SIZES` (pool, size) entries at most (then the oldest one's go back to its pool).
FREE_BYTES = 1 << 20
FREE_BUFFERS = 4
FREE_SIZES = 64
_kept: dict = {}  # id of a weak reference -> it (kept until its array dies)
_reference = weakref.ref


def _released(buffers, nbytes: int, buffer, reference) -> None:
    """The array of `buffer` (from the pool `buffers`) died: its buffer goes to `_free`
    (small) or back to the pool."""
    _kept.pop(id(reference), None)
    if nbytes > FREE_BYTES:
        buffers._park(buffer)
        return
    free = _free.get((buffers, nbytes))
    if free is None:
        if len(_free) >= FREE_SIZES:  # (the oldest size's buffers back to their pool)
            oldest = next(iter(_free))
            for parked in _free.pop(oldest):
                oldest[0]._park(parked)
        free = _free[(buffers, nbytes)] = []
    if len(free) < FREE_BUFFERS:
        free.append(buffer)
    else:
        buffers._park(buffer)


def _reduction_plan(how: str, key, shape: tuple, dtype: np.dtype, fast: bool) -> plans.Plan:
    generator = Generator(key, shape)
    accumulate, result = accumulation(how, dtype)
    source = generator.reduction_source(how, accumulate)
    kernel = kernel_of(source, generator.functions, "reduction")
    per, workgroups = calls.split(-(-generator.count // 4), REDUCE_WORKGROUPS, WORKGROUP * ITEMS)
    plan = plans.Plan(f"expression {how}")
    plan.out = plan.result((), result)
    out = plan.input((), result)
    slots = _inputs(plan, generator, fast)
    state = calls.finish_state(plan, workgroups)
    target = plans.View(out, (1,), TYPES[accumulate])
    scale = 1.0 / generator.count if how == "mean" else 1.0
    arguments = generator.arguments(slots, fast)
    plan.launch(kernel, target, state, per, scale, *arguments, workgroups=workgroups)
    plan.bools = _bool_scalars(generator)
    return plan


def reduce(array: DeviceArray, how: str) -> DeviceArray:
    """The reduction `how` of `array` (its expression fused into the load): a 0-d array."""
    if type(array) is LazyArray:
        key, leaves = node_of(array)
    else:
        key, leaves = expressions.array_key(array), (array,)
    dtype = array.dtype
    if array.size == 0:
        return _empty_reduction(how, dtype)
    fast = _fast()
    plan = PLANS.get((how, fast, key))
    if plan is None:
        plan = PLANS.put((how, fast, key), _reduction_plan(how, key, array.shape, dtype, fast))
    result = pool.result_like(plan.out)
    plan.run(result, *_values(plan, leaves))
    return result


def _empty_reduction(how: str, dtype: np.dtype) -> DeviceArray:
    if how in ("max", "min"):
        raise ValueError(f"{how}() of an empty array: the operation has no identity")
    result = accumulation(how, dtype)[1]
    value = {"sum": 0, "prod": 1, "mean": np.nan}[how]
    return tx.to_device(np.array(value, result))


# -- stdlib calls and vectorize --------------------------------------------------------------


def _one_dimensional(array, name: str):
    if array.ndim != 1:
        raise ValueError(f"DeviceArray.{name}() takes a 1-D array, not shape {array.shape}")
    return array


def cumsum(array, axis=None):
    """numpy's cumsum (of the flattened array: axis=None): tx.stdlib.inclusive_scan."""
    from .device import inclusive_scan

    if axis is not None and not (array.ndim == 1 and axis in (0, -1)):
        raise NotImplementedError("DeviceArray.cumsum: only axis=None (or 0 for 1-D arrays)")
    flat = array if array.ndim == 1 else array.ravel()
    if flat.dtype == BOOL:
        flat = flat.astype(np.int32)
    return inclusive_scan(flat)


def sort(array, descending=False):
    """tx.stdlib.sort of a 1-D array (a new array)."""
    from .sort import sort as stdlib_sort

    return stdlib_sort(_one_dimensional(array, "sort"), descending=descending)


def argsort(array, descending=False):
    """tx.stdlib.argsort of a 1-D array (u32 indices, stable)."""
    from .sort import argsort as stdlib_argsort

    return stdlib_argsort(_one_dimensional(array, "argsort"), descending=descending)


def signature(func, dtypes: tuple) -> tuple:
    """(parameter dtypes, result dtype) of the vectorized @tx.func `func` for arguments of
    `dtypes` (numpy dtypes, or Python types of weak scalars): a TypeVar parameter takes
    numpy's promotion of the arguments it annotates, a typed one its type (the argument
    converted where numpy's same_kind casting allows)."""
    from pyshader_tx.frontend import annotations

    source = func.function_source()
    args = source.node.args.args
    name = func.__name__
    if len(args) != len(dtypes):
        raise TypeError(f"{name} takes {len(args)} arguments, got {len(dtypes)}")
    if source.node.returns is None:
        raise TypeError(f"@tx.vectorize: {name} must annotate its (scalar) result")
    weak = {int: 0, float: 0.0, bool: False}
    grouped: dict = {}
    for arg, dtype in zip(args, dtypes):
        for typevar in annotations.typevars_in(arg.annotation, source):
            grouped.setdefault(typevar, []).append(weak.get(dtype, dtype))
    binding = {}
    for typevar, members in grouped.items():
        promoted = np.result_type(*members)
        if all(type(m) in (int, float, bool) for m in members):  # (numpy's kind, GPU width)
            promoted = {"i": I32, "f": F32, "b": BOOL}[promoted.kind]
        promoted = expressions.NARROWED.get(promoted, promoted)
        if promoted not in TYPES:
            raise TypeError(f"{name}: its arguments of {promoted} cannot be {typevar!r}")
        binding[typevar] = TYPES[promoted]
    bound = annotations.bind_typevars(source, binding) if binding else source
    params = []
    for position, (arg, dtype) in enumerate(zip(args, dtypes)):
        ty = annotations.evaluate_annotation(arg.annotation, bound, f"{name}'s parameter")
        target = NUMPY_OF.get(ty)
        if target is None:
            raise TypeError(f"@tx.vectorize: {name}'s parameter {arg.arg} must be u32, i32 or f32")
        if isinstance(dtype, np.dtype) and not np.can_cast(dtype, target, "same_kind"):
            raise TypeError(
                f"{name}: argument {position + 1} of {dtype} does not convert to {arg.arg}'s "
                f"{target} (numpy's same_kind casting); cast it first"
            )
        params.append(target)
    result = annotations.evaluate_annotation(source.node.returns, bound, f"{name}'s result")
    if result not in NUMPY_OF and result != t.bool_:
        raise TypeError(f"@tx.vectorize: {name} must return u32, i32, f32 or bool")
    return tuple(params), NUMPY_OF.get(result, BOOL)


expressions.register_evaluator(
    evaluate, reduce, {"cumsum": cumsum, "sort": sort, "argsort": argsort}, signature
)
