"""Small helpers shared by the benchmark scripts (timing statistics, rank correlation, tables,
environment)."""

from __future__ import annotations

import os
import platform
import statistics
import sys


def median(values) -> float:
    return statistics.median(values)


def spread(values) -> str:
    """'min..max' of a list of numbers, for tables."""
    return f"{min(values):.3g}..{max(values):.3g}"


def spearman(predicted, measured) -> float | None:
    """The rank correlation of two lists over the entries both have, ties sharing their
    mean rank (None: fewer than 3, or one list constant)."""
    import numpy as np

    pairs = [(p, m) for p, m in zip(predicted or (), measured) if p is not None and m is not None]
    if len(pairs) < 3:
        return None

    def ranks(values):
        order = np.argsort(values, kind="stable")
        result = np.empty(len(values))
        result[order] = np.arange(len(values))
        for value in set(values):  # ties share their mean rank
            where = np.asarray(values) == value
            result[where] = result[where].mean()
        return result

    p, m = ranks([p for p, _ in pairs]), ranks([m for _, m in pairs])
    if p.std() == 0 or m.std() == 0:
        return None
    return float(np.corrcoef(p, m)[0, 1])


def table(headers, rows) -> str:
    """A Markdown table (columns padded so it also reads as plain text)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row):
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |"

    out = [line(cells[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(row) for row in cells[1:]]
    return "\n".join(out)


def environment(adapter_info: dict | None = None) -> str:
    """One paragraph describing where the numbers were taken."""
    import numpy
    import wgpu

    parts = [
        f"python {platform.python_version()} ({sys.executable})",
        f"wgpu {wgpu.__version__}",
        f"numpy {numpy.__version__}",
        f"{os.cpu_count()} CPUs ({platform.machine()})",
    ]
    if adapter_info:
        name = adapter_info.get("device") or adapter_info.get("description") or "?"
        parts.append(
            f"adapter {name!r} via {adapter_info.get('backend_type', '?')} "
            f"(driver {adapter_info.get('description', '?')!r})"
        )
    return "; ".join(parts)
