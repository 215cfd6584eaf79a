"""Source spans and `CompileError`, the one exception for problems in kernel source.

A `Span` points into the original Python file (1-based lines, 0-based columns like
`ast`). `CompileError` renders like a compiler diagnostic:

    kernels.py:12:14: error: cannot add f32 and i32; convert one side, e.g. f32(i)
        out[i] = x[i] + i
                 ^^^^^^^^

The column in the header is 1-based (as gcc, clang and rustc print it); the attribute
`col_offset` is 0-based, as in `ast`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "Span",
    "CompileError",
    "FeatureError",
    "SimulationError",
    "OutOfBoundsError",
    "DataRaceError",
    "DeadlockError",
]


@dataclass(frozen=True)
class Span:
    """A range of Python source: where an IR node or a diagnostic comes from."""

    filename: str
    lineno: int
    col_offset: int
    end_lineno: int
    end_col_offset: int
    # The file's lines, shared by every span of one source (for rendering only).
    lines: tuple = field(default=(), repr=False, compare=False)

    def line_text(self) -> str:
        if 1 <= self.lineno <= len(self.lines):
            return self.lines[self.lineno - 1].rstrip("\n")
        return ""


class CompileError(Exception):
    """A problem in kernel source, reported at a Python file, line and column."""

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None):
        self.message = message
        self.span = span
        self.hint = hint
        self.filename = span.filename if span else "<unknown>"
        self.lineno = span.lineno if span else 0
        self.col_offset = span.col_offset if span else 0
        self.end_col_offset = span.end_col_offset if span else 0
        super().__init__(self.render())

    def render(self) -> str:
        """The full diagnostic: header, source line and caret line."""
        text = self.message if not self.hint else f"{self.message}; {self.hint}"
        if self.span is None:
            return f"error: {text}"
        span = self.span
        header = f"{span.filename}:{span.lineno}:{span.col_offset + 1}: error: {text}"
        line = span.line_text()
        if not line:
            return header
        if span.end_lineno == span.lineno:
            end = max(span.end_col_offset, span.col_offset + 1)
        else:
            end = len(line)
        carets = " " * span.col_offset + "^" * max(1, end - span.col_offset)
        return f"{header}\n{line}\n{carets}"

    def __str__(self) -> str:
        return self.render()


class FeatureError(RuntimeError):
    """A kernel needs a device feature that the adapter in use does not have."""


class SimulationError(RuntimeError):
    """A problem the CPU simulator (`tx.simulator`) found while running a kernel, reported
    at the kernel's Python line like a `CompileError`; `invocations` lists the global
    invocation ids ((x, y, z) tuples) involved (the message shows the first
    `SHOWN_INVOCATIONS`)."""

    SHOWN_INVOCATIONS = 8

    def __init__(self, message: str, span: Span | None = None, invocations=()):
        self.invocations = [tuple(int(c) for c in ids) for ids in invocations]
        shown = ", ".join(str(ids) for ids in self.invocations[: self.SHOWN_INVOCATIONS])
        more = len(self.invocations) - self.SHOWN_INVOCATIONS
        if shown:
            message = f"{message} (invocations {shown}{f' and {more} more' if more > 0 else ''})"
        self.diagnostic = CompileError(message, span)
        self.message = message
        self.span = span
        self.filename = self.diagnostic.filename
        self.lineno = self.diagnostic.lineno
        self.col_offset = self.diagnostic.col_offset
        self.end_col_offset = self.diagnostic.end_col_offset
        super().__init__(str(self))

    def __str__(self) -> str:
        return self.diagnostic.render()


class OutOfBoundsError(SimulationError):
    """An index outside its array, vector or matrix (storage, workgroup or local memory)."""


class DataRaceError(SimulationError):
    """Two invocations touch one element with no barrier between them, at least one writes,
    not both atomically."""


class DeadlockError(SimulationError):
    """An invocation waits forever under the schedule: a spin loop on memory no running
    workgroup will change, or a barrier not all invocations of its workgroup reach."""
