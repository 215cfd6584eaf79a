"""Delta reduction of a failing fuzz program into a small repro.

`reduce(program, still_fails, budget)` tries, in rounds until nothing more helps or the
time budget is spent: keeping one section; dropping device functions and structs nobody
uses; deleting statements (an `if` or loop may also be replaced by its body); replacing an
expression by one of its operands of the same type or by a plain value. A candidate is kept
when `still_fails(candidate)` holds (the harness checks that the same failure class
persists); candidates that are no longer valid programs fail to compile with another
message and are rejected by that check.
"""

from __future__ import annotations

import copy
import time

from .program import Expr, Program, scalar_of


def _blocks(program: Program):
    """Every statement list of the program (sections, function bodies, nested blocks)."""
    pending = list(program.sections) + [f.body for f in program.funcs]
    while pending:
        block = pending.pop()
        yield block
        for s in block:
            pending.extend(s.blocks())


def _statement_sites(program: Program):
    """(block, index) of every statement, outermost first."""
    return [(block, i) for block in _blocks(program) for i in range(len(block))]


def _expression_sites(program: Program):
    """(owner, setter, expr) for every expression: setter(new) puts `new` in its place."""
    sites = []

    def visit(expr, setter):
        sites.append((expr, setter))
        for i, arg in enumerate(expr.args):
            visit(arg, lambda new, e=expr, i=i: e.args.__setitem__(i, new))

    for block in _blocks(program):
        for s in block:
            for attr in ("expr", "cond", "index"):
                e = getattr(s, attr)
                if e is not None:
                    visit(e, lambda new, s=s, attr=attr: setattr(s, attr, new))
            for i, e in enumerate(s.exprs):
                visit(e, lambda new, s=s, i=i: s.exprs.__setitem__(i, new))
    return sites


def _names_used(program: Program) -> set:
    names = set()
    for expr, _ in _expression_sites(program):
        if expr.op in ("call", "struct"):
            names.add(expr.value if expr.op == "call" else expr.ty)
        names.add(str(expr.ty))
    for f in program.funcs:
        names.update(str(ty) for _, ty in f.params)
        names.add(f.result)
    return names


def _simpler(expr: Expr) -> list:
    """Replacements to try for `expr`: operands of its type, then a plain value."""
    options = [a for a in expr.args if a.ty == expr.ty]
    if expr.op in ("lit", "var", "input"):
        return []
    ty = expr.ty
    if ty in ("i32", "u32"):
        options += [Expr("lit", ty, value=0), Expr("lit", ty, value=1)]
    elif ty == "f32":
        options += [Expr("lit", ty, value=0.0), Expr("lit", ty, value=1.0)]
    elif ty == "bool":
        options += [Expr("lit", ty, value=True), Expr("lit", ty, value=False)]
    elif isinstance(ty, str) and ty.startswith("vec"):
        options.append(Expr("vec", ty, [Expr("lit", scalar_of(ty), value=1)]))
    return options


class _Reducer:
    def __init__(self, still_fails, budget, log):
        self.still_fails = still_fails
        self.deadline = time.monotonic() + budget
        self.log = log or (lambda message: None)
        self.tries = 0

    def out_of_time(self) -> bool:
        return time.monotonic() > self.deadline

    def attempt(self, candidate: Program) -> bool:
        self.tries += 1
        return self.still_fails(candidate)

    def run(self, program: Program) -> Program:
        program = self.sections(program)
        changed = True
        while changed and not self.out_of_time():
            changed = False
            for step in (self.functions, self.statements, self.expressions):
                program, progress = step(program)
                changed |= progress
        self.log(f"reduced in {self.tries} tries")
        return program

    def sections(self, program: Program) -> Program:
        if len(program.sections) == 1:
            return program
        for index in range(len(program.sections)):
            candidate = copy.deepcopy(program)
            candidate.sections = [candidate.sections[index]]
            if self.attempt(candidate):
                self.log(f"kept section {index}")
                return candidate
        return program

    def functions(self, program: Program):
        progress = False
        for attr in ("funcs", "structs"):
            index = len(getattr(program, attr)) - 1
            while index >= 0 and not self.out_of_time():
                candidate = copy.deepcopy(program)
                removed = getattr(candidate, attr).pop(index)
                if removed.name not in _names_used(candidate) and self.attempt(candidate):
                    program, progress = candidate, True
                index -= 1
        return program, progress

    def statements(self, program: Program):
        progress = False
        index = 0
        while not self.out_of_time():
            sites = _statement_sites(program)
            if index >= len(sites):
                break
            block_position = index
            kept = False
            for variant in ("delete", "inline"):
                candidate = copy.deepcopy(program)
                block, i = _statement_sites(candidate)[block_position]
                statement = block[i]
                if statement.kind == "return" and i == len(block) - 1:
                    break  # a device function must end with its return
                if variant == "delete":
                    block[i : i + 1] = []
                elif statement.kind in ("if", "for", "while") and statement.body:
                    block[i : i + 1] = statement.body
                else:
                    continue
                if self.attempt(candidate):
                    program, progress, kept = candidate, True, True
                    break
            if not kept:
                index += 1
        return program, progress

    def expressions(self, program: Program):
        progress = False
        index = 0
        while not self.out_of_time():
            sites = _expression_sites(program)
            if index >= len(sites):
                break
            kept = False
            for replacement in _simpler(sites[index][0]):
                candidate = copy.deepcopy(program)
                expr, setter = _expression_sites(candidate)[index]
                setter(copy.deepcopy(replacement))
                if self.attempt(candidate):
                    program, progress, kept = candidate, True, True
                    break
            if not kept:
                index += 1
        return program, progress


def reduce(program: Program, still_fails, budget: float = 120.0, log=None) -> Program:
    """A smaller program for which `still_fails` holds (the input itself if none is found)."""
    return _Reducer(still_fails, budget, log).run(copy.deepcopy(program))
