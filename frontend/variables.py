"""Where each Python local is declared, and which locals can be WGSL `let`s.

Python scopes locals to the whole function; WGSL scopes them to blocks. Before lowering,
this pass records every reference to every assigned name and chooses:

- the block to declare it in: the innermost block that contains all its references
  (loop headers count as their parent block). If the first reference is a plain
  assignment directly in that block, the declaration *is* that assignment
  (`var x = ...;` / `let x = ...;`); otherwise it is declared without a value at the start
  of the block — hoisted out of any loop, so values survive iterations as in Python;
- whether it is assigned exactly once, by that declaration (then it can be a `let`);
- which `for i in range(...)` loops can own their counter (`for (var i = ...)`): the
  loop variable is used only inside loops over it and never assigned there.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field


@dataclass(slots=True)
class Reference:
    path: tuple  # ids of the enclosing statement lists, outermost first
    store: bool
    direct: bool  # a plain `name = value` (or tuple element) directly in path[-1]
    statement: ast.stmt
    through: bool = False  # a store into an element or field (`name[i] = v`, `name.x = v`)
    node: ast.AST | None = None  # the target of a store (`ast.Name`), for diagnostics


@dataclass
class VariablePlan:
    """How one Python local is declared."""

    name: str
    block: int = 0  # id() of the statement list to declare it in
    declare_at: ast.stmt | None = None  # the assignment that declares it, else block start
    single_assignment: bool = False  # stored once, by its declaration: may be a `let`


@dataclass
class FunctionPlan:
    """The result of the pass for one function."""

    variables: dict = field(default_factory=dict)  # name -> VariablePlan
    simple_loops: set = field(default_factory=set)  # ids of ast.For owning their counter
    # Parameters stored to: name -> the target node of the first statement that rebinds it
    # (`p = ...`, `p += ...`, `for p in ...`), None when it is only written through
    # (`p.x = ...`, `p[i] = ...`).
    assigned_params: dict = field(default_factory=dict)
    # Plans keyed by block id: names to declare at the start of that block.
    block_starts: dict = field(default_factory=dict)


class _ReferenceCollector:
    """Walks statements in evaluation order, recording references per name."""

    def __init__(self):
        self.references: dict[str, list[Reference]] = {}
        self.loop_blocks: set[int] = set()
        self.parents: dict[int, int | None] = {}
        self.for_loops: dict[str, list[ast.For]] = {}
        self.loop_of_block: dict[int, ast.stmt] = {}

    def add(
        self, name: str, path, store: bool, direct: bool, statement, through=False, node=None
    ) -> None:
        reference = Reference(path, store, direct, statement, through, node)
        self.references.setdefault(name, []).append(reference)

    def block(self, statements: list, path: tuple, loop: ast.stmt | None = None) -> None:
        key = id(statements)
        self.parents[key] = path[-1] if path else None
        if loop is not None:
            self.loop_blocks.add(key)
            self.loop_of_block[key] = loop
        inner = path + (key,)
        for statement in statements:
            self.statement(statement, inner)

    def loads(self, node: ast.AST | None, path: tuple, statement) -> None:
        if node is None:
            return
        for name in _names_in(node):
            self.add(name.id, path, isinstance(name.ctx, ast.Store), False, statement, node=name)

    def target(self, target: ast.AST, path: tuple, statement, direct: bool) -> None:
        if isinstance(target, ast.Name):
            self.add(target.id, path, True, direct, statement, node=target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.target(element, path, statement, direct)
        else:
            # `v.x = ...` / `a[i] = ...`: reads the index, stores through the base name.
            base = target
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                if isinstance(base, ast.Subscript):
                    self.loads(base.slice, path, statement)
                base = base.value
            if isinstance(base, ast.Name):
                self.add(base.id, path, True, False, statement, through=True, node=base)
            else:
                self.loads(base, path, statement)

    def statement(self, node: ast.stmt, path: tuple) -> None:
        if isinstance(node, ast.Assign):
            self.loads(node.value, path, node)
            for target in node.targets:
                self.target(target, path, node, direct=True)
        elif isinstance(node, ast.AnnAssign):
            self.loads(node.value, path, node)
            self.target(node.target, path, node, direct=node.value is not None)
        elif isinstance(node, ast.AugAssign):
            self.loads(node.value, path, node)
            self.loads(node.target, path, node)
            self.target(node.target, path, node, direct=False)
        elif isinstance(node, ast.If):
            self.loads(node.test, path, node)
            self.block(node.body, path)
            self.block(node.orelse, path)
        elif isinstance(node, ast.While):
            self.loads(node.test, path, node)
            self.block(node.body, path, loop=node)
            self.block(node.orelse, path)
        elif isinstance(node, ast.For):
            self.loads(node.iter, path, node)
            if isinstance(node.target, ast.Name):
                self.for_loops.setdefault(node.target.id, []).append(node)
                # The loop variable is assigned at the start of every iteration.
                self.add(
                    node.target.id, path + (id(node.body),), True, True, node, node=node.target
                )
            else:
                self.target(node.target, path + (id(node.body),), node, direct=False)
            self.block(node.body, path, loop=node)
            self.block(node.orelse, path)
        else:
            # Return, Expr and the statements the lowering rejects.
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.loads(child, path, node)


#: The child nodes that can hold names, for the common expression nodes, in the order of
#: `ast.iter_child_nodes` (operators and contexts hold none); other nodes go through
#: `ast.iter_child_nodes`.
_NAME_HOLDERS = {
    ast.Constant: lambda node: (),
    ast.Attribute: lambda node: (node.value,),
    ast.Subscript: lambda node: (node.value, node.slice),
    ast.BinOp: lambda node: (node.left, node.right),
    ast.UnaryOp: lambda node: (node.operand,),
    ast.BoolOp: lambda node: node.values,
    ast.Compare: lambda node: (node.left, *node.comparators),
    ast.Call: lambda node: (node.func, *node.args, *node.keywords),
    ast.IfExp: lambda node: (node.test, node.body, node.orelse),
    ast.Tuple: lambda node: node.elts,
    ast.List: lambda node: node.elts,
}


def _names_in(node: ast.AST) -> list:
    """The `ast.Name` nodes in `node`, in the order of `ast.walk` (breadth first: the order
    in which they are queued, so they are collected then and never queued themselves)."""
    if type(node) is ast.Name:
        return [node]
    names = []
    queue = [node]
    for current in queue:  # the loop reaches the nodes appended while it runs
        children = _NAME_HOLDERS.get(type(current))
        for child in children(current) if children else ast.iter_child_nodes(current):
            if type(child) is ast.Name:
                names.append(child)
            else:
                queue.append(child)
    return names


def plan_function(node: ast.FunctionDef) -> FunctionPlan:
    """Run the pass over a function definition."""
    collector = _ReferenceCollector()
    collector.block(node.body, ())
    params = {arg.arg for arg in node.args.args}
    plan = FunctionPlan()
    simple_names = set()
    for name, loops in collector.for_loops.items():
        if name not in params and _loops_own_variable(name, loops, collector):
            plan.simple_loops.update(id(loop) for loop in loops)
            simple_names.add(name)
    for name, references in collector.references.items():
        stores = [r for r in references if r.store]
        if not stores or name in simple_names:
            continue
        if name not in params and all(r.through for r in stores):
            continue  # `name[i] = v` alone does not make a local: `name` is a global
        if name in params:
            rebinding = [r.node for r in stores if not r.through]
            plan.assigned_params[name] = min(rebinding, key=_position) if rebinding else None
            continue
        plan.variables[name] = _place(name, references, collector)
    for variable in plan.variables.values():
        if variable.declare_at is None:
            plan.block_starts.setdefault(variable.block, []).append(variable.name)
    return plan


def _position(node: ast.AST) -> tuple:
    return (node.lineno, node.col_offset)


def _loops_own_variable(name: str, loops: list, collector: _ReferenceCollector) -> bool:
    """Whether every reference to `name` is inside one of `loops` (not nested in each
    other) and none of them assigns it besides the loop itself."""
    bodies = {id(loop.body): loop for loop in loops}
    for reference in collector.references.get(name, ()):
        owners = [key for key in reference.path if key in bodies]
        if len(owners) != 1:
            return False
        if reference.store and reference.statement is not bodies[owners[0]]:
            return False
    return all(isinstance(loop.iter, ast.Call) for loop in loops)


def _place(name: str, references: list, collector: _ReferenceCollector) -> VariablePlan:
    common = list(references[0].path)
    for reference in references[1:]:
        length = 0
        for a, b in zip(common, reference.path):
            if a != b:
                break
            length += 1
        del common[length:]
    block = common[-1]
    first = references[0]
    stores = sum(1 for r in references if r.store)
    if first.store and first.direct and first.path[-1] == block:
        # Declared by this assignment (for a loop variable: the For statement itself).
        return VariablePlan(name, block, first.statement, stores == 1)
    # Declared at a block start: hoist out of loops so values persist across iterations.
    outermost = block
    key = block
    while key is not None:
        if key in collector.loop_blocks:
            outermost = collector.parents[key]
        key = collector.parents.get(key)
    return VariablePlan(name, outermost, None, False)
