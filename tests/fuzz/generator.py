"""Seeded generator of random valid kernels (as `program.Program`s).

`generate(seed, features)` builds a program whose behaviour is defined everywhere by our
semantics: array indices are in range by construction (`k`, `-k`, `e % n`, `e & (n - 1)`),
loops terminate (`range` bounds are small, `while` loops count their iterations), integer
division by a literal zero and out-of-range literal shift amounts (compile errors by
design) are not written. What the GPU may compute differently (float rounding, NaN, inf,
subnormals) is generated freely; the reference evaluator tracks error bounds and marks such
values unreliable instead.

`features` switches program classes on (see `FEATURES`): each was known to be broken until
another change landed, so it could be left out meanwhile; the CI test and `tools/fuzz.py`
name the ones they enable.
"""

from __future__ import annotations

import dataclasses

import random

import numpy as np

from . import reference
from .program import (
    INPUTS,
    INTEGER,
    NUMERIC,
    OUTPUTS,
    Arr,
    Expr,
    FuncDef,
    Program,
    Stmt,
    StructDef,
    COMPONENTS,
    is_matrix,
    is_vector,
    matrix_shape,
    matrix_type,
    scalar_of,
    size_of,
    vector_type,
)

#: Feature switches for program classes: name -> what enabling it generates.
FEATURES = {
    "const_fold": "operators, casts and built-ins whose operands are all literals "
    "(`u32(2) << (u32(31) & u32(31))`: constant folding, issue 11 item 1)",
    "range_typing": "range() counters used as u32 and ranges over u32 bounds (item 2)",
    "exact_float_floor": "float // and % of exact operands expected exactly as Python "
    "computes them, also where the quotient rounds across an integer (item 3)",
}

#: Enabled by default: all (issue 11 items 1-3 are merged). A class that breaks again can
#: be left out (`tools/fuzz.py --without NAME`) while it is being fixed.
DEFAULT_FEATURES = frozenset(FEATURES)

INT_EDGES = {
    "i32": [0, 1, -1, 2, -2, 31, 32, 2**31 - 1, -(2**31), -(2**31) + 1, 7, -7, 13],
    "u32": [0, 1, 2, 31, 32, 33, 2**32 - 1, 2**31, 2**31 - 1, 7, 13, 255],
}
FLOAT_LITERALS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -3.0, 1.5, 0.25, 10.0, 100.0, -7.25]
FLOAT_LITERALS += [0.1, 1e-3, 1e6, 3.5e9, -2.5e9, 1e30, 16777216.0]

INT_BUILTINS = ["abs", "min", "max", "tx.clamp", "tx.count_one_bits", "tx.reverse_bits"]
INT_BUILTINS += ["tx.first_leading_bit", "tx.first_trailing_bit"]
INT_BUILTINS += ["tx.extract_bits", "tx.insert_bits"]
FLOAT_BUILTINS = ["abs", "min", "max", "tx.clamp", "tx.floor", "tx.ceil", "tx.trunc", "round"]
ARITHMETIC = {"i32": "+ - * // % & | ^ << >> **", "u32": "+ - * // % & | ^ << >> **"}
ARITHMETIC["f32"] = "+ - * / // %"
VECTOR_OPS = {"i32": "+ - * // % & | ^ << >>", "u32": "+ - * // % & | ^ << >>"}
VECTOR_OPS["f32"] = "+ - *"
MATRICES = ["mat2x2f", "mat2x3f", "mat3x2f", "mat3x3f"]
#: Built-ins applied to vectors here (component-wise; no bit-range or clamp forms).
VECTOR_BUILTINS = {
    "i32": ["abs", "min", "max", "tx.count_one_bits", "tx.reverse_bits", "tx.first_leading_bit"],
    "u32": ["min", "max", "tx.first_trailing_bit", "tx.reverse_bits"],
    "f32": ["abs", "min", "max", "tx.floor", "tx.ceil", "tx.trunc"],
}


def frontend_literal(e: Expr) -> bool:
    """Whether the frontend makes `e` a literal (a literal divisor of zero or shift amount
    of 32 or more is a compile error, a computed one is not): literals, module constants,
    conversions of literals, `not` of one, `-`/`~` of a bare (abstract) literal."""
    if e.op in ("lit", "const"):
        return True
    if e.op == "cast" or (e.op == "un" and e.value == "not"):
        return frontend_literal(e.args[0])
    if e.op == "un":
        return e.args[0].op == "lit" and e.args[0].bare
    if e.op == "ternary" and e.args[0].constant:  # `a if 6 > 23 else b`: folded, a branch
        return frontend_literal(chosen_branch(e))
    return False


def chosen_branch(e: Expr) -> Expr:
    """`e` with each conditional expression on a constant condition (`True`, `not True`,
    `u32(6) > u32(23)`) replaced by the branch it takes (what the frontend folds it to;
    the other branch may read variables)."""
    if e.op == "ternary" and e.args[0].constant:
        taken = literal_value(e.args[0])
        if taken is not None:
            return chosen_branch(e.args[1 if taken else 2])
    return dataclasses.replace(e, args=[chosen_branch(a) for a in e.args])


def literal_value(e: Expr):
    """The value of an expression of literals and constants (None if it has none, or
    needs what a program declares: its structs)."""
    try:
        value = reference.Evaluator(Program(0, [], [], []), {}, 0).eval(chosen_branch(e), {})
    except (KeyError, StopIteration):
        return None
    return None if value.bad else value.v


class Scope:
    """Variables visible at a point: a stack of blocks of (name, type, assignable)."""

    def __init__(self):
        self.blocks = [[]]

    def push(self):
        self.blocks.append([])

    def pop(self):
        self.blocks.pop()

    def add(self, name, ty, assignable=True):
        self.blocks[-1].append((name, ty, assignable))

    def names(self, ty=None, assignable=False, predicate=None):
        found = []
        for block in self.blocks:
            for name, vty, ok in block:
                if (ty is None or vty == ty) and (ok or not assignable):
                    if predicate is None or predicate(vty):
                        found.append((name, vty))
        return found


class Generator:
    def __init__(self, seed: int, features=DEFAULT_FEATURES, sections: int = 1):
        self.rng = random.Random(seed)
        self.seed = seed
        self.features = frozenset(features)
        self.section_count = sections
        self.counter = 0
        self.structs: list = []
        self.funcs: list = []
        self.in_function = False
        self.loop_depth = 0
        self.scope = Scope()

    # -- helpers -------------------------------------------------------------------------

    def fresh(self, prefix="v") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def choice(self, items):
        return self.rng.choice(list(items))

    def value_types(self, vectors=True, structs=True):
        types = ["i32", "u32", "f32", "i32", "u32", "f32", "bool"]
        if vectors:
            types += [vector_type(self.choice(NUMERIC), self.choice((2, 3, 4)))]
            if self.chance(0.3):
                types.append(self.choice(MATRICES))
        if structs and self.structs:
            types.append(self.choice(self.structs).name)
        return types

    # -- program -------------------------------------------------------------------------

    def program(self) -> Program:
        self.constants = self.module_constants()
        for _ in range(self.rng.randint(0, 2)):
            self.structs.append(self.struct_def())
        for _ in range(self.rng.randint(0, 3)):
            self.funcs.append(self.func_def())
        self.uniforms = [self.uniform(i) for i in range(self.rng.randint(0, 3))]
        sections = [self.section() for _ in range(self.section_count)]
        program = Program(self.seed, self.structs, self.funcs, sections, self.features)
        program.constants = self.constants
        program.uniforms = self.uniforms
        return program

    def uniform(self, index: int) -> tuple:
        """A uniform kernel parameter: (name, type, host value)."""
        ty = self.choice(["i32", "u32", "f32", "bool", "vec2i", "vec3u", "vec4f", "vec3f"])

        def number(scalar):
            if scalar == "f32":
                return float(np.float32(self.choice(FLOAT_LITERALS)))
            if scalar == "bool":
                return self.chance(0.5)
            return self.literal(scalar).value

        if is_vector(ty):
            return (f"u{index}", ty, tuple(number(scalar_of(ty)) for _ in range(size_of(ty))))
        return (f"u{index}", ty, number(ty))

    def module_constants(self) -> list:
        """Module-level constants (ints that fit i32 and u32, tuples of them, floats)."""
        constants = []
        for i in range(self.rng.randint(0, 3)):
            kind = self.rng.randrange(3)
            if kind == 0:
                constants.append((f"K{i}", self.rng.choice([1, 3, 5, 17, 255, 65536, 2**31 - 1])))
            elif kind == 1:
                values = tuple(self.rng.randint(1, 100) for _ in range(self.rng.randint(1, 4)))
                constants.append((f"K{i}", values))
            else:
                constants.append((f"K{i}", self.choice([0.5, 2.5, -3.0, 1e-3, 1e20])))
        return constants

    def constant_operand(self, ty):
        """A module constant usable as an operand of type `ty`, or None."""
        wanted = float if ty == "f32" else (int, tuple)
        options = [(n, v) for n, v in self.constants if isinstance(v, wanted)]
        if not options or ty not in NUMERIC:
            return None
        name, value = self.choice(options)
        if isinstance(value, tuple):
            index = self.rng.randrange(-len(value), len(value))
            return Expr("const", ty, value=(name, index, value[index]))
        return Expr("const", ty, value=(name, None, value))

    def struct_def(self) -> StructDef:
        name = f"S{len(self.structs)}"
        count = self.rng.randint(1, 3)
        fields = [(f"f{i}", self.choice(self.value_types(structs=False))) for i in range(count)]
        fields = [(n, "i32" if ty == "bool" else ty) for n, ty in fields]  # host-shareable
        return StructDef(name, fields)

    def func_def(self) -> FuncDef:
        name = f"fn{len(self.funcs)}"
        params = [("p0", "i32"), ("p1", "u32"), ("p2", "f32")]
        for i in range(self.rng.randint(0, 2)):
            params.append((f"p{3 + i}", self.choice(self.value_types())))
        self.rng.shuffle(params)
        result = self.choice(self.value_types())
        saved = self.scope, self.in_function, self.loop_depth
        self.scope, self.in_function, self.loop_depth = Scope(), True, 0
        for p, ty in params:
            self.scope.add(p, ty, assignable=False)
        body = self.block(self.rng.randint(1, 4), depth=1, result=result)
        body.append(Stmt("return", expr=self.expr(result, 3)))
        self.scope, self.in_function, self.loop_depth = saved
        return FuncDef(name, params, result, body)

    def section(self) -> list:
        self.scope = Scope()
        for name, ty, _ in self.uniforms:
            self.scope.add(name, ty, assignable=False)
        self.used_slots = set()
        body = self.block(self.rng.randint(4, 10), depth=0)
        # Every variable still in scope is observed at the end.
        for name, ty in self.scope.names():
            if name.startswith("u") or len(self.used_slots) >= OUTPUTS * 3:
                break
            if self.chance(0.6):
                self.observe(Expr("var", ty, value=name), body)
        return body

    def observe(self, e: Expr, body: list) -> None:
        """Output statements for the value `e` (its scalar components)."""
        ty = e.ty
        if ty in self.struct_names():
            struct = self.struct_by_name(ty)
            fname, fty = self.choice(struct.fields)
            return self.observe(Expr("field", fty, [e], fname), body)
        if isinstance(ty, Arr):
            return
        if is_matrix(ty):
            column = self.rng.randrange(matrix_shape(ty)[0])
            e = Expr("column", f"vec{matrix_shape(ty)[1]}f", [e], column)
            ty = e.ty
        if is_vector(ty):
            index = self.rng.randrange(size_of(ty))
            e = Expr("swizzle", scalar_of(ty), [e], COMPONENTS[index])
            ty = e.ty
        if ty == "bool":
            e, ty = Expr("cast", "i32", [e]), "i32"
        slot = self.free_slot(ty)
        if slot is not None:
            body.append(Stmt("out", expr=e, slot=slot))

    def free_slot(self, ty):
        free = [s for s in range(OUTPUTS) if (ty, s) not in self.used_slots]
        if not free:
            return None
        slot = self.choice(free)
        self.used_slots.add((ty, slot))
        return slot

    def struct_names(self):
        return [s.name for s in self.structs]

    def struct_by_name(self, name):
        return next(s for s in self.structs if s.name == name)

    # -- statements ----------------------------------------------------------------------

    def block(self, count: int, depth: int, result=None) -> list:
        stmts = []
        for _ in range(count):
            stmts.extend(self.statement(depth, result))
        return stmts

    def nested(self, depth, result, count=None):
        self.scope.push()
        body = self.block(count or self.rng.randint(1, 3), depth + 1, result)
        self.scope.pop()
        return body

    def statement(self, depth: int, result) -> list:
        kinds = ["let"] * 5 + ["set", "aug", "aug"] + ["array", "write"]
        if not self.in_function:
            kinds += ["out"] * 3
        if depth < 3:
            kinds += ["if", "if", "for", "while"]
        if self.loop_depth and depth > 0:
            kinds += ["jump"]
        if self.in_function and depth > 0:
            kinds += ["return"]
        elif depth > 0 and self.chance(0.3):
            kinds += ["kernel_return"]
        kind = self.choice(kinds)
        return getattr(self, f"stmt_{kind}")(depth, result)

    def stmt_let(self, depth, result):
        ty = self.choice(self.value_types())
        e = self.expr(ty, 3)
        name = self.fresh()
        self.scope.add(name, ty)
        return [Stmt("let", name, e)]

    def stmt_set(self, depth, result):
        candidates = self.scope.names(assignable=True, predicate=lambda ty: not isinstance(ty, Arr))
        if not candidates:
            return self.stmt_let(depth, result)
        name, ty = self.choice(candidates)
        return [Stmt("set", name, self.expr(ty, 3))]

    def stmt_aug(self, depth, result):
        candidates = self.scope.names(
            assignable=True, predicate=lambda ty: ty in NUMERIC or is_vector(ty)
        )
        if not candidates:
            return self.stmt_let(depth, result)
        name, ty = self.choice(candidates)
        scalar = scalar_of(ty)
        ops = (VECTOR_OPS if is_vector(ty) else ARITHMETIC)[scalar].split()
        op = self.choice([o for o in ops if o not in ("/", "**")])
        if op in ("<<", ">>"):
            rhs = self.shift_amount(ty)
        else:
            rhs = self.expr(ty, 2)
            if op in ("//", "%"):
                rhs = self.nonzero_divisor(rhs)
        return [Stmt("aug", name, rhs, op=op, ty=ty)]

    def stmt_array(self, depth, result):
        element = self.choice(["i32", "u32", "f32", "i32", vector_type("f32", 2)])
        length = self.rng.randint(2, 6)
        if self.chance(0.5):
            exprs = [self.expr(element, 2) for _ in range(length)]
        else:
            exprs = []
        name = self.fresh("a")
        ty = Arr(element, length)
        self.scope.add(name, ty, assignable=False)
        return [Stmt("array", name, exprs=exprs, ty=ty)]

    def stmt_write(self, depth, result):
        choice = self.rng.randrange(4)
        if choice == 0:
            arrays = self.scope.names(predicate=lambda ty: isinstance(ty, Arr))
            if arrays:
                name, ty = self.choice(arrays)
                index = self.array_index(ty)
                return [Stmt("store", name, self.expr(ty.element, 3), index=index)]
        elif choice == 1:
            structs = self.scope.names(
                assignable=True, predicate=lambda ty: ty in self.struct_names()
            )
            if structs:
                name, ty = self.choice(structs)
                fname, fty = self.choice(self.struct_by_name(ty).fields)
                return [Stmt("set_field", name, self.expr(fty, 3), op=fname, aug=self.aug(fty))]
        elif choice == 2:
            vectors = self.scope.names(assignable=True, predicate=is_vector)
            if vectors:
                name, ty = self.choice(vectors)
                slot = self.rng.randrange(size_of(ty))
                scalar = scalar_of(ty)
                value = self.expr(scalar, 3)
                return [Stmt("set_component", name, value, slot=slot, aug=self.aug(scalar))]
        pairs = {}
        for name, ty in self.scope.names(assignable=True):
            pairs.setdefault(ty, []).append(name)
        pairs = [names for names in pairs.values() if len(names) > 1]
        if pairs:
            a, b = self.rng.sample(self.choice(pairs), 2)
            return [Stmt("swap", a, op=b)]
        return self.stmt_let(depth, result)

    def aug(self, ty) -> str:
        """An operator for an augmented assignment to a field or component (or '')."""
        if ty not in ("i32", "u32", "f32") or self.chance(0.5):
            return ""
        return self.choice(["+", "-", "*"] + (["&", "|", "^"] if ty != "f32" else []))

    def stmt_out(self, depth, result):
        ty = self.choice(["i32", "u32", "f32", "bool"])
        stmts = []
        self.observe(self.expr(ty, 4), stmts)
        return stmts

    def stmt_if(self, depth, result):
        cond = self.expr("bool", 3)
        body = self.nested(depth, result)
        orelse = []
        if self.chance(0.3):
            orelse = [Stmt("if", cond=self.expr("bool", 2), body=self.nested(depth, result))]
            if self.chance(0.5):
                orelse[0].orelse = self.nested(depth, result)
        elif self.chance(0.4):
            orelse = self.nested(depth, result)
        return [Stmt("if", cond=cond, body=body, orelse=orelse)]

    def stmt_for(self, depth, result):
        """A range() loop. With `range_typing`: over typed u32 bounds (a u32 counter), or
        over literal bounds >= 0 with the counter also used as u32 in operators (it takes
        the type each use needs, like a literal)."""
        name = self.fresh("j")
        mode = "i32"
        if "range_typing" in self.features:
            mode = self.choice(["i32", "u32", "adaptive"])
        counter_type = "u32" if mode == "u32" else "i32"
        step = self.choice([1, 1, 1, 2, -1, -2] if mode != "adaptive" else [1, 1, 2])
        if step > 0:
            if self.chance(0.5):
                exprs = [self.bound(counter_type, 0, 6, mode)]
            else:
                exprs = [self.bound(counter_type, 0, 3, mode), self.bound(counter_type, 0, 7, mode)]
        else:
            low = 0 if counter_type == "u32" else -2
            exprs = [self.bound(counter_type, 0, 6, mode), self.bound(counter_type, low, 1, mode)]
        self.loop_depth += 1
        self.scope.push()
        self.scope.add(name, counter_type, assignable=False)
        if mode == "adaptive":
            self.scope.add(name, "adaptive counter", assignable=False)
        body = self.block(self.rng.randint(1, 3), depth + 1, result)
        self.scope.pop()
        self.loop_depth -= 1
        return [Stmt("for", name, exprs=exprs, body=body, step=step)]

    def bound(self, ty, low, high, mode="i32"):
        """A small range bound: a literal, or an input value reduced into [low, high)."""
        if mode == "adaptive" or self.chance(0.5) or self.in_function:
            value = self.rng.randint(low, high - 1)
            return Expr("lit", ty, value=value, bare=mode != "u32")
        span = high - low
        e = Expr("bin", ty, [self.leaf(ty), Expr("lit", ty, value=span, bare=True)], "%")
        if low:
            e = Expr("bin", ty, [e, Expr("lit", ty, value=low, bare=True)], "+")
        return e

    def stmt_while(self, depth, result):
        name = self.fresh("w")
        limit = self.rng.randint(1, 5)
        self.loop_depth += 1
        self.scope.push()
        self.scope.add(name, "i32", assignable=False)
        cond = self.expr("bool", 2)
        body = self.block(self.rng.randint(1, 3), depth + 1, result)
        self.scope.pop()
        self.loop_depth -= 1
        return [Stmt("while", name, cond=cond, body=body, limit=limit)]

    def stmt_jump(self, depth, result):
        jump = Stmt(self.choice(["break", "continue"]))
        if self.chance(0.7):
            return [Stmt("if", cond=self.expr("bool", 2), body=[jump])]
        return [jump]

    def stmt_kernel_return(self, depth, result):
        return [Stmt("if", cond=self.expr("bool", 2), body=[Stmt("return")])]

    def stmt_return(self, depth, result):
        return [
            Stmt("if", cond=self.expr("bool", 2), body=[Stmt("return", expr=self.expr(result, 2))])
        ]

    # -- expressions ---------------------------------------------------------------------

    def literal(self, ty, bare=False) -> Expr:
        if bare and self.chance(0.3):
            constant = self.constant_operand(ty)
            if constant is not None:
                return constant
        if ty == "bool":
            return Expr("lit", "bool", value=self.chance(0.5))
        if ty == "f32":
            return Expr("lit", "f32", value=self.choice(FLOAT_LITERALS), bare=bare)
        if self.chance(0.5):
            value = self.choice(INT_EDGES[ty])
        elif ty == "i32":
            value = self.rng.randint(-20, 20)
        else:
            value = self.rng.randint(0, 40)
        return Expr("lit", ty, value=value, bare=bare)

    def leaf(self, ty) -> Expr:
        """A non-constant value of type `ty`: a variable or an input."""
        names = self.scope.names(ty)
        if names and (self.in_function or self.chance(0.6)):
            return Expr("var", ty, value=self.choice(names)[0])
        if ty in NUMERIC and not self.in_function:
            return Expr("input", ty, value=self.rng.randrange(INPUTS))
        if ty == "bool":
            return Expr("cmp", "bool", [self.leaf("i32"), self.literal("i32", bare=True)], "<")
        if ty in NUMERIC:  # in a device function: a conversion of a parameter
            source = {"i32": "u32", "u32": "i32", "f32": "i32"}[ty]
            return Expr("cast", ty, [self.leaf(source)])
        return self.construct(ty, 1)

    def construct(self, ty, depth) -> Expr:
        if is_matrix(ty):
            columns, rows = matrix_shape(ty)
            if self.chance(0.5):
                return Expr(
                    "mat", ty, [self.expr(f"vec{rows}f", depth - 1) for _ in range(columns)]
                )
            return Expr("mat", ty, [self.expr("f32", depth - 1) for _ in range(columns * rows)])
        if is_vector(ty):
            scalar = scalar_of(ty)
            if self.chance(0.2):
                return Expr("vec", ty, [self.expr(scalar, depth - 1)])  # splat
            return Expr("vec", ty, [self.expr(scalar, depth - 1) for _ in range(size_of(ty))])
        struct = self.struct_by_name(ty)
        return Expr("struct", ty, [self.expr(fty, depth - 1) for _, fty in struct.fields])

    def expr(self, ty, depth) -> Expr:
        e = self._expr(ty, depth)
        if e.op == "bool" and e.args[0].constant and "const_fold" not in self.features:
            # WGSL evaluates `false && x` as a constant: `y % u32(false && x)` is rejected
            # as a division by zero by Tint (the constant-expression class).
            e.args[0] = self.leaf("bool")
        if e.op != "lit" and e.constant and "const_fold" not in self.features:
            e.args[-1] = self.leaf(e.args[-1].ty)
            if e.op == "bin" and e.value in ("//", "%"):
                e.args[1] = self.nonzero_divisor(e.args[1])
        return e

    def _expr(self, ty, depth) -> Expr:
        if depth <= 0 or self.chance(0.2):
            if ty in ("i32", "u32", "f32", "bool") and self.chance(0.35):
                return self.literal(ty)
            return self.leaf(ty)
        options = ["leaf", "ternary", "call", "index"]
        if ty in NUMERIC:
            options += ["bin"] * 6 + ["cast", "cast", "builtin", "builtin", "component"]
            options += ["field", "bitcast"] + (["neg"] if ty != "u32" else []) + ["invert"]
        elif ty == "bool":
            options += ["compare"] * 5 + ["logic", "logic", "not", "cast"]
        elif is_vector(ty):
            options += ["construct", "construct", "vbin", "vbin", "swizzle", "field", "vcast"]
            options += ["vbuiltin"] + (["matmul", "matmul", "column"] if ty[4] == "f" else [])
        elif is_matrix(ty):
            options += ["construct", "matmul", "matmul", "mbin", "field"]
        else:
            options += ["construct", "construct", "field"]
        kind = self.choice(options)
        made = getattr(self, f"make_{kind}")(ty, depth)
        return made if made is not None else self.leaf(ty)

    def make_leaf(self, ty, depth):
        return self.leaf(ty)

    def make_construct(self, ty, depth):
        return self.construct(ty, depth)

    def make_ternary(self, ty, depth):
        return Expr(
            "ternary",
            ty,
            [self.expr("bool", depth - 1), self.expr(ty, depth - 1), self.expr(ty, depth - 1)],
        )

    def make_call(self, ty, depth):
        funcs = [f for f in self.funcs if f.result == ty]
        if not funcs:
            return None
        f = self.choice(funcs)
        return Expr("call", ty, [self.expr(pty, depth - 1) for _, pty in f.params], f.name)

    def make_index(self, ty, depth):
        arrays = self.scope.names(predicate=lambda a: isinstance(a, Arr) and a.element == ty)
        if not arrays:
            return None
        name, aty = self.choice(arrays)
        return Expr("index", ty, [Expr("var", aty, value=name), self.array_index(aty)])

    def array_index(self, aty: Arr) -> Expr:
        n = aty.length
        way = self.rng.randrange(4)
        if way == 0:
            return Expr("lit", "i32", value=self.rng.randint(-n, n - 1), bare=True)
        ty = self.choice(INTEGER)
        if way == 1 and n & (n - 1) == 0:
            return Expr("bin", ty, [self.expr(ty, 1), Expr("lit", ty, value=n - 1, bare=True)], "&")
        return Expr("bin", ty, [self.expr(ty, 1), Expr("lit", ty, value=n, bare=True)], "%")

    def nonzero_divisor(self, e: Expr) -> Expr:
        """`e`, unless it is a zero made of constants (`0`, `u32(0)`, `+int(f32(-0.0))`, or a
        conditional on a literal condition taking one: the frontend folds them to a literal
        zero divisor, a compile error)."""
        if e.ty in INTEGER and (frontend_literal(e) or chosen_branch(e).constant):
            value = literal_value(e)
            if value is None or value == 0:
                return Expr("lit", e.ty, value=self.choice([1, 3, 7]), bare=e.bare)
        if (
            e.op == "vec"
            and scalar_of(e.ty) in INTEGER
            and all(a.op == "lit" and a.value == 0 for a in e.args)
        ):
            e.args[0] = Expr("lit", scalar_of(e.ty), value=5)
        return e

    def shift_amount(self, ty) -> Expr:
        amount_type = "u32" if not is_vector(ty) else vector_type("u32", size_of(ty))
        if not is_vector(ty) and self.chance(0.4):
            return Expr("lit", "u32", value=self.rng.randint(0, 31), bare=self.chance(0.5))
        counters = self.scope.names("adaptive counter")
        if not is_vector(ty) and counters and self.chance(0.3):
            return Expr("var", "u32", value=self.choice(counters)[0])  # < 32
        amount = self.expr(amount_type, 2)
        # A constant amount must be below 32 (like WGSL, a compile error otherwise); a
        # conditional on a literal condition is the branch it takes.
        core = chosen_branch(amount)
        if core.op == "lit":
            amount = core
            amount.value %= 32
        elif amount.constant or core.constant:
            mask = Expr("vec", amount_type, [Expr("lit", "u32", value=31)])
            amount = Expr(
                "bin", amount_type, [amount, mask if is_vector(ty) else mask.args[0]], "&"
            )
        return amount

    def make_bin(self, ty, depth):
        op = self.choice(ARITHMETIC[ty].split())
        if op == "/" and ty == "f32" and self.chance(0.3):  # true division of integers
            source = self.choice(INTEGER)
            return Expr(
                "bin", "f32", [self.expr(source, depth - 1), self.expr(source, depth - 1)], "/"
            )
        left = self.expr(ty, depth - 1)
        if ty in INTEGER and op not in ("**", "<<", ">>", "-") and self.chance(0.3):
            counters = self.scope.names("adaptive counter")
            if counters:  # a range() counter used as a literal would be, as `ty`, with an
                # operand that is not constant (so the result is an ordinary value)
                counter = Expr("var", ty, value=self.choice(counters)[0])
                if self.chance(0.3):
                    exponent = Expr("lit", ty, value=self.rng.randint(0, 3), bare=True)
                    counter = Expr("bin", ty, [counter, exponent], "**")
                return Expr("bin", ty, [counter, self.leaf(ty)], op)
        if op in ("<<", ">>"):
            right = self.shift_amount(ty)
        elif op == "**":
            right = Expr("lit", ty, value=self.rng.randint(0, 4), bare=True)
        elif self.chance(0.25) and left.op != "lit":
            right = self.literal(ty, bare=True)
        else:
            right = self.expr(ty, depth - 1)
        if op in ("//", "%"):
            right = self.nonzero_divisor(right)
        if op == "**" and left.op == "lit":
            left = self.leaf(ty)
        return Expr("bin", ty, [left, right], op)

    def make_vbin(self, ty, depth):
        scalar = scalar_of(ty)
        op = self.choice(VECTOR_OPS[scalar].split())
        left = self.expr(ty, depth - 1)
        if op in ("<<", ">>"):
            return Expr("bin", ty, [left, self.shift_amount(ty)], op)
        if self.chance(0.3) and op in "+-*":
            scalar_operand = self.expr(scalar, depth - 1)  # vector-scalar, either side
            if self.chance(0.5):
                return Expr("bin", ty, [scalar_operand, left], op)
            return Expr("bin", ty, [left, scalar_operand], op)
        right = self.expr(ty, depth - 1)
        if op in ("//", "%"):
            right = self.nonzero_divisor(right)
        return Expr("bin", ty, [left, right], op)

    def make_matmul(self, ty, depth):
        """`m @ v`, `v @ m` (vectors) or `a @ b` (matrices)."""
        if is_vector(ty):
            size = size_of(ty)
            other = self.choice((2, 3))
            if self.chance(0.5):  # matCxR @ vecC -> vecR
                m = self.expr(matrix_type(other, size), depth - 1)
                return Expr("bin", ty, [m, self.expr(f"vec{other}f", depth - 1)], "@")
            m = self.expr(matrix_type(size, other), depth - 1)  # vecR @ matCxR -> vecC
            return Expr("bin", ty, [self.expr(f"vec{other}f", depth - 1), m], "@")
        columns, rows = matrix_shape(ty)
        inner = self.choice((2, 3))
        a = self.expr(matrix_type(inner, rows), depth - 1)
        return Expr("bin", ty, [a, self.expr(matrix_type(columns, inner), depth - 1)], "@")

    def make_mbin(self, ty, depth):
        """`a + b`, `a - b`, `m * s`, `s * m`."""
        op = self.choice(["+", "-", "*", "*"])
        if op == "*":
            args = [self.expr(ty, depth - 1), self.expr("f32", depth - 1)]
            return Expr("bin", ty, args if self.chance(0.5) else args[::-1], "*")
        return Expr("bin", ty, [self.expr(ty, depth - 1), self.expr(ty, depth - 1)], op)

    def make_column(self, ty, depth):
        m = self.expr(matrix_type(self.choice((2, 3)), size_of(ty)), depth - 1)
        return Expr("column", ty, [m], self.rng.randrange(matrix_shape(m.ty)[0]))

    def make_vbuiltin(self, ty, depth):
        name = self.choice(VECTOR_BUILTINS[scalar_of(ty)])
        arity = 2 if name in ("min", "max") else 1
        return Expr("builtin", ty, [self.expr(ty, depth - 1) for _ in range(arity)], name)

    def make_cast(self, ty, depth):
        if ty == "bool":
            source = self.choice(NUMERIC)
        else:
            source = self.choice([s for s in ("i32", "u32", "f32", "bool") if s != ty])
        python_name = ty != "u32" and self.chance(0.25)  # int(x), float(x), bool(x)
        return Expr("cast", ty, [self.expr(source, depth - 1)], "python" if python_name else None)

    def make_vcast(self, ty, depth):
        source = vector_type(self.choice([s for s in NUMERIC if s != scalar_of(ty)]), size_of(ty))
        return Expr("cast", ty, [self.expr(source, depth - 1)])

    def make_bitcast(self, ty, depth):
        source = self.choice([s for s in NUMERIC if s != ty])
        return Expr("bitcast", ty, [self.expr(source, depth - 1)])

    def make_builtin(self, ty, depth):
        name = self.choice(FLOAT_BUILTINS if ty == "f32" else INT_BUILTINS)
        if name == "tx.clamp":  # constant bounds, low <= high (else undefined in SPIR-V)
            low, high = sorted((self.literal(ty), self.literal(ty)), key=lambda e: e.value)
            return Expr("builtin", ty, [self.expr(ty, depth - 1), low, high], name)
        if name in ("tx.extract_bits", "tx.insert_bits"):
            args = [self.expr(ty, depth - 1)]
            if name == "tx.insert_bits":
                args.append(self.expr(ty, depth - 1))
            for _ in range(2):  # offset and count: often in range, sometimes not
                if self.chance(0.6):
                    args.append(Expr("lit", "u32", value=self.rng.randint(0, 33)))
                else:
                    args.append(self.expr("u32", depth - 1))
            return Expr("builtin", ty, args, name)
        arity = self.choice([2, 2, 3]) if name in ("min", "max") else 1
        return Expr("builtin", ty, [self.expr(ty, depth - 1) for _ in range(arity)], name)

    def make_component(self, ty, depth):
        source = vector_type(ty, self.choice((2, 3, 4)))
        index = self.rng.randrange(size_of(source))
        return Expr("swizzle", ty, [self.expr(source, depth - 1)], COMPONENTS[index])

    def make_swizzle(self, ty, depth):
        source = vector_type(scalar_of(ty), self.choice((2, 3, 4)))
        pattern = "".join(self.choice(COMPONENTS[: size_of(source)]) for _ in range(size_of(ty)))
        return Expr("swizzle", ty, [self.expr(source, depth - 1)], pattern)

    def make_field(self, ty, depth):
        options = [(s, f) for s in self.structs for f, fty in s.fields if fty == ty]
        if not options:
            return None
        struct, fname = self.choice(options)
        return Expr("field", ty, [self.expr(struct.name, depth - 1)], fname)

    def make_neg(self, ty, depth):
        return Expr("un", ty, [self.expr(ty, depth - 1)], "+" if self.chance(0.1) else "-")

    def make_invert(self, ty, depth):
        if ty == "f32":
            return None
        return Expr("un", ty, [self.expr(ty, depth - 1)], "~")

    def make_compare(self, ty, depth):
        source = self.choice(NUMERIC)
        op = self.choice(["<", "<=", ">", ">=", "==", "!="])
        if self.chance(0.15):  # a chained comparison
            second = self.choice(["<", "<=", ">", ">=", "==", "!="])
            args = [self.expr(source, depth - 1) for _ in range(3)]
            return Expr("chain", "bool", args, (op, second))
        left = self.expr(source, depth - 1)
        if self.chance(0.25) and left.op != "lit":
            right = self.literal(source, bare=True)
        else:
            right = self.expr(source, depth - 1)
        return Expr("cmp", "bool", [left, right], op)

    def make_logic(self, ty, depth):
        args = [self.expr("bool", depth - 1), self.expr("bool", depth - 1)]
        if self.chance(0.3):  # on bools: & | ^ (no short circuit), == !=
            op = self.choice(["&", "|", "^", "==", "!="])
            return Expr("cmp" if op in ("==", "!=") else "bin", "bool", args, op)
        return Expr("bool", "bool", args, self.choice(["and", "or"]))

    def make_not(self, ty, depth):
        return Expr("un", "bool", [self.expr("bool", depth - 1)], "not")


def generate(seed: int, features=DEFAULT_FEATURES, sections: int = 1) -> Program:
    """The random program of `seed` (deterministic for a seed, features and section count)."""
    return Generator(seed, features, sections).program()
