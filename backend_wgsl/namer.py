"""Names for the WGSL backend: Python names where WGSL allows them, renamed where it does not.

WGSL rejects its keywords and reserved words as identifiers, the name `_` and names that
start with `__`: Tint and naga refuse every word listed below as a local, a function and a
struct member, except `binding_array` and `bitcast` (kept for the reasons given).

Beyond that, a WGSL declaration may shadow a predeclared type or built-in function, which
is legal but breaks any later use of that built-in in the scope. The namer therefore also
keeps every built-in identifier the module actually uses (`min`, `vec3f`, `floor` inside a
helper, ...) free, and it keeps names unique: across module scope (structs, globals,
helpers, functions, the entry point), and inside each function (parameters, entry-point
inputs, locals), where locals also avoid module names.

A clash is resolved by a numeric suffix: `min` -> `min_1`, `_` -> `_1`.
"""

from __future__ import annotations

import re

__all__ = ["KEYWORDS", "RESERVED_WORDS", "Namer", "FunctionNamer", "legal_base"]

#: WGSL keywords (spec section "Keyword Summary").
KEYWORDS = frozenset("""
    alias break case const const_assert continue continuing default diagnostic discard else
    enable false fn for if let loop override requires return struct switch true var while
    """.split())

#: WGSL reserved words (spec section "Reserved Words", which still lists `binding_array`),
#: plus `bitcast`: a predeclared name that the writer spells with a template argument.
RESERVED_WORDS = frozenset("""
    NULL Self abstract active alignas alignof as asm asm_fragment async attribute auto await
    become binding_array bitcast cast catch class co_await co_return co_yield coherent
    column_major common compile compile_fragment concept const_cast consteval constexpr
    constinit crate debugger decltype delete demote demote_to_helper do dynamic_cast enum
    explicit export extends extern external fallthrough filter final finally friend from
    fxgroup get goto groupshared highp impl implements import inline instanceof interface
    layout lowp macro macro_rules match mediump meta mod module move mut mutable namespace new
    nil noexcept noinline nointerpolation non_coherent noncoherent noperspective null nullptr
    of operator package packoffset partition pass patch pixelfragment precise precision
    premerge priv protected pub public readonly ref regardless register reinterpret_cast
    require resource restrict self set shared sizeof smooth snorm static static_assert
    static_cast std subroutine super target template this thread_local throw trait try type
    typedef typeid typename typeof union unless unorm unsafe unsized use using varying virtual
    volatile wgsl where with writeonly yield
    """.split())

_NOT_IDENTIFIER_CHARACTER = re.compile(r"\W")
_DOUBLE_UNDERSCORE_PREFIX = re.compile(r"^__+")


def legal_base(name: str) -> str:
    """`name` made a WGSL identifier shape: invalid characters become `_`, a leading digit
    gets a `_` before it and a leading `__` (reserved by WGSL) shrinks to `_`. The result
    may still be a keyword or `_`; `Namer` takes care of those."""
    name = _NOT_IDENTIFIER_CHARACTER.sub("_", name) or "_"
    if name[0].isdigit():
        name = "_" + name
    return _DOUBLE_UNDERSCORE_PREFIX.sub("_", name)


def _unique(wanted: str, taken) -> str:
    """The first of `wanted`, `wanted_1`, `wanted_2`, ... that is legal and not in `taken`."""
    base = legal_base(wanted)
    if base != "_" and base not in taken and base not in KEYWORDS and base not in RESERVED_WORDS:
        return base
    separator = "" if base.endswith("_") else "_"
    number = 1
    while f"{base}{separator}{number}" in taken:
        number += 1
    return f"{base}{separator}{number}"


class Namer:
    """Module-scope names, keyed by the IR object they belong to.

    `builtins` are the predeclared identifiers (types, built-in functions) the module uses;
    no declaration may take them.
    """

    def __init__(self, builtins=()):
        self._avoid = set(KEYWORDS) | RESERVED_WORDS | set(builtins)
        self._names: dict[object, str] = {}
        self._members: dict[object, tuple] = {}

    def declare(self, key, wanted: str) -> str:
        """Give module-scope object `key` a name based on `wanted` (once; later calls return
        the same name)."""
        if key not in self._names:
            name = _unique(wanted, self._avoid)
            self._avoid.add(name)
            self._names[key] = name
        return self._names[key]

    def __getitem__(self, key) -> str:
        return self._names[key]

    def __contains__(self, key) -> bool:
        return key in self._names

    def members(self, struct) -> tuple:
        """The member names of a struct type: the Python field names, legalised and unique
        within the struct (members have their own namespace)."""
        if struct not in self._members:
            taken = set()
            names = []
            for field_name, _ in struct.fields:
                name = _unique(field_name, taken)
                taken.add(name)
                names.append(name)
            self._members[struct] = tuple(names)
        return self._members[struct]

    def function_scope(self) -> "FunctionNamer":
        """A namer for one function's parameters and locals; they avoid every name and
        built-in known at module scope."""
        return FunctionNamer(self._avoid)


class FunctionNamer:
    """Names inside one function. Distinct objects (two temporaries called `t`) get distinct
    names; the same object always gets the same name."""

    def __init__(self, module_avoid):
        self._avoid = set(module_avoid)
        self._names: dict[object, str] = {}

    def declare(self, key, wanted: str) -> str:
        if key not in self._names:
            name = _unique(wanted, self._avoid)
            self._avoid.add(name)
            self._names[key] = name
        return self._names[key]

    def __getitem__(self, key) -> str:
        return self._names[key]
