"""Compile-time values in the lowering: `Meta`, what a kernel name or expression is when it
is not a run-time value (a type, a device function, `tx`, `math`, a tuple constant, ...).

Its own module, below the lowering mixins that make and read Meta values (`expressions`,
`calls`, `statements`, `python_math`, ...), so that they need not import each other for it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Meta:
    """A compile-time value: `kind` says what `value` is."""

    kind: str  # 'type' 'function' 'intrinsic' 'special' 'builtin' 'namespace' 'tuple' 'array'
    # 'shape' 'value' (a host vector or matrix constant) 'omitted' (a parameter not given,
    # default None) 'none' (None, in `is` tests)
    value: object
    name: str = ""
