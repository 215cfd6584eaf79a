"""How `print()` in kernels is formatted on the host, shared by every executor.

A line is formatted as Python's print formats it: the printed arguments (constant text
as is, values by `format_value`) joined by `sep`, then `end`. Values:

- bool: `True` / `False`; i32, u32: the integer; f32: `str(np.float32(x))` (the shortest
  text that reads back to the same f32: `0.1`, `1e+20`, `nan`, `-0.0`); f16: likewise
  with `np.float16`;
- vectors: the type's name and components, as the constructor that builds them:
  `vec3f(1.0, 2.0, 0.5)`, `vec2b(True, False)`, `vec4u(1, 2, 3, 4)`.

`format_print(stmt, values)` is the text of one `ir.Print` with its evaluated values (what
the CPU simulator writes), and `line_order(invocation)` the key that orders the lines of
one dispatch (the GPU path's order; stable sorting keeps each invocation's program order).

`PrintSite` describes one print statement for the host, and `read_records` turns the
words of a GPU print buffer (`pyshader_tx.ir.print_buffer`) into lines: sorted by the
printing invocation's global id (z, then y, then x: x varies fastest, as in
`tx.local_invocation_index()`), and within one invocation in the order it printed; one
more line reports the records dropped for lack of room.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import types as t
from .ir.print_buffer import HEADER_WORDS, RECORD_HEADER_WORDS, value_words

__all__ = [
    "PrintSite",
    "format_value",
    "format_line",
    "format_print",
    "line_order",
    "read_records",
    "dropped_message",
]

#: Scalar name -> what turns one value word (a u32) back into the value printed.
WORD_DECODERS = {
    "bool": lambda word: bool(word),
    "i32": lambda word: int(np.uint32(word).view(np.int32)),
    "u32": lambda word: int(word),
    "f32": lambda word: np.uint32(word).view(np.float32),
    "f16": lambda word: np.float16(np.uint32(word).view(np.float32)),
}

#: Scalar name -> the text of one value (numpy or Python scalar).
SCALAR_FORMATS = {
    "bool": lambda value: str(bool(value)),
    "i32": lambda value: str(int(value)),
    "u32": lambda value: str(int(value)),
    "f32": lambda value: str(np.float32(value)),
    "f16": lambda value: str(np.float16(value)),
}


@dataclass(frozen=True)
class PrintSite:
    """One `print(...)` of a kernel, as the host formats its records: `parts` as in
    `ir.Print` (text, or the index of a value), the value types, `sep`, `end`, and where
    it is (for messages)."""

    parts: tuple
    types: tuple
    sep: str
    end: str
    filename: str
    lineno: int

    @classmethod
    def from_ir(cls, stmt) -> "PrintSite":
        span = stmt.span
        types = tuple(value.ty for value in stmt.values)
        where = (span.filename, span.lineno) if span is not None else ("<unknown>", 0)
        return cls(tuple(stmt.parts), types, stmt.sep, stmt.end, *where)

    @property
    def record_words(self) -> int:
        return RECORD_HEADER_WORDS + sum(value_words(ty) for ty in self.types)


def format_value(ty: t.Type, value) -> str:
    """The text of a printed value of type `ty` (a scalar, or a sequence of components
    for a vector)."""
    if isinstance(ty, t.VectorType):
        scalar = SCALAR_FORMATS[ty.scalar.name]
        return f"{ty!r}({', '.join(scalar(v) for v in value)})"
    return SCALAR_FORMATS[ty.name](value)


def format_line(parts: tuple, sep: str, end: str, texts: list) -> str:
    """The output of one print: `parts` (text, or index into `texts`) joined by `sep`,
    then `end`."""
    return sep.join(part if isinstance(part, str) else texts[part] for part in parts) + end


def format_print(stmt, values) -> str:
    """The output of `ir.Print` `stmt` given its evaluated `values` (one per `stmt.values`,
    in order: a scalar, or the components of a vector)."""
    texts = [format_value(expr.ty, value) for expr, value in zip(stmt.values, values)]
    return format_line(stmt.parts, stmt.sep, stmt.end, texts)


def line_order(invocation) -> tuple:
    """The sort key of a line printed by the invocation with global id `invocation` (x, y,
    z): z, then y, then x, as `tx.local_invocation_index()` counts."""
    x, y, z = (int(v) for v in invocation)
    return (z, y, x)


def _decode_record(site: PrintSite, words: np.ndarray) -> str:
    """The line of one record's value words."""
    texts, position = [], 0
    for ty in site.types:
        count = value_words(ty)
        decode = WORD_DECODERS[t.scalar_of(ty).name]
        values = [decode(word) for word in words[position : position + count]]
        texts.append(format_value(ty, values if isinstance(ty, t.VectorType) else values[0]))
        position += count
    return format_line(site.parts, site.sep, site.end, texts)


def read_records(words: np.ndarray, sites: tuple) -> tuple:
    """(the output text, records dropped) of a print buffer's u32 `words` (zeroed before
    the dispatch) written by a kernel with print sites `sites` (site id k is
    `sites[k - 1]`); see the module doc for the order of the lines."""
    records = []
    position = HEADER_WORDS
    while position < len(words) and 1 <= words[position] <= len(sites):
        site = sites[int(words[position]) - 1]
        if position + site.record_words > len(words):  # never written so (a safeguard)
            break
        order = line_order(words[position + 1 : position + 4])
        records.append(((order, position), site, position))
        position += site.record_words
    records.sort(key=lambda record: record[0])
    text = "".join(
        _decode_record(site, words[start + RECORD_HEADER_WORDS : start + site.record_words])
        for _, site, start in records
    )
    return text, int(words[1])


def dropped_message(kernel: str, dropped: int, capacity: int) -> str:
    """The line that reports prints dropped by one dispatch."""
    lines = "line was" if dropped == 1 else "lines were"
    return (
        f"[pyshader_tx] {kernel}: {dropped} printed {lines} dropped: the print buffer holds"
        f" {capacity} lines per dispatch (raise tx.options.print_capacity)\n"
    )
