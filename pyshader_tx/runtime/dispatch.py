"""The dispatch shape of a launch: workgroup counts from `threads=` or `workgroups=`, and the
folding of large 1-D launches. Pure functions of the counts and the device's limit, shared by
every executor (the GPU's launcher, the simulator's, the native Vulkan host) and by
`capture.py`.

Large 1-D launches. When `threads=N` needs W workgroups in x and W exceeds the device's
`max-compute-workgroups-per-dimension` L, the launcher dispatches the folded variant of
the shader (`get_code(True)`), which numbers workgroups linearly as
`workgroup_id.x + workgroup_id.y * num_workgroups.x`, with the grid (X, Y, 1) chosen by
`fold_workgroups`: Y is the least count that makes X <= L possible (ceil(W / L)),
raised by up to 256 when a larger Y divides W exactly (then X * Y == W); otherwise
X = ceil(W / Y) and the X * Y - W < Y surplus workgroups run invocations whose linear ids
lie past the rounded-up thread count, like the round-up tail of any launch, which the
kernel's bounds check already skips. The kernel reads `tx.workgroup_id()` as
(linear id, 0, 0), `tx.num_workgroups()` as (X * Y, 1, 1) and `tx.global_invocation_id()`
as the unfolded launch's.

`workgroups=N` (or (N,), (N, 1, 1)) beyond L folds too, but there every workgroup below N
must run once, no other, and `tx.num_workgroups()` must read (N, 1, 1), as unfolded. Where
N = X * Y with X, Y <= L (`exact_fold`: the least such Y), the folded variant above runs
on that grid as it is. Otherwise (N prime, say) the grid is `fold_workgroups(N, L)` and
the variant for exactly N workgroups runs (`get_code(N)`, an int: one per such N, cached
per launcher up to `COUNTED_VARIANTS`): its body is skipped where the linear id is N or
more (a whole workgroup at once, so barriers stay in uniform control flow) and
`tx.num_workgroups()` reads (N, 1, 1). Launches with more than one dimension are not
folded: beyond L in any dimension they are an error.
"""

from __future__ import annotations

import functools
import operator

__all__ = ["compute_dispatch", "fold_workgroups", "exact_fold", "FOLD_SEARCH"]

FOLD_SEARCH = 256  # how far above the least Y `fold_workgroups` looks for an exact divisor


def fold_workgroups(total: int, limit: int) -> tuple[int, int]:
    """The (X, Y) grid for `total` workgroups when X may be at most `limit` (see module doc)."""
    least_y = -(-total // limit)
    if least_y > limit:
        raise ValueError(
            f"{total} workgroups exceed what a folded 1-D launch can reach ({limit} x {limit})"
        )
    for y in range(least_y, min(least_y + FOLD_SEARCH, limit) + 1):
        if total % y == 0:
            return total // y, y
    return -(-total // least_y), least_y


@functools.lru_cache(maxsize=256)
def exact_fold(total: int, limit: int) -> tuple[int, int] | None:
    """(X, Y) with X * Y == `total` and X, Y <= `limit`, Y the least such; None where there
    is none (`total` prime and above `limit`, say). Of a divisor pair, the smaller one is
    at most sqrt(total), so Y is searched from ceil(total / limit) up to there."""
    y = -(-total // limit)
    if y > limit:
        return None
    while y * y <= total:
        if total % y == 0:
            return total // y, y
        y += 1
    return None


def compute_dispatch(name: str, workgroup_size: tuple, limit: int, threads, workgroups):
    """((X, Y, Z), folded) for a call's `threads`/`workgroups`, or None for an empty launch,
    when at most `limit` workgroups fit in one dimension (`workgroup_size` has 3 entries;
    `name` is the kernel's, for errors). Shared by every executor. `folded` is what
    `get_code` takes: False (the normal variant), True (the folded variant) or, for a
    `workgroups=N` launch that folds with surplus workgroups, the int N (see module doc)."""
    if workgroups is not None:
        if threads is not None:
            raise TypeError(f"{name}(): give threads= or workgroups=, not both")
        counts = _count_tuple(workgroups, "workgroups")
        counts = counts + (1,) * (3 - len(counts))
        if 0 in counts:
            return None
        total = counts[0]
        if total > limit and counts[1:] == (1, 1):
            exact = exact_fold(total, limit)
            if exact is not None:
                return (*exact, 1), True
            x, y = fold_workgroups(total, limit)
            return (x, y, 1), total
        _check_limit(
            counts,
            limit,
            f"{name}(): workgroups={workgroups!r} asks for",
            "only 1-D launches are folded: workgroups=N, threads=N",
        )
        return counts, False
    if threads is None:
        raise TypeError(
            f"{name}() needs threads=N, (X, Y) or (X, Y, Z) (the global invocation "
            f"count) or workgroups=(X, Y, Z)"
        )
    counts = _count_tuple(threads, "threads")
    if 0 in counts:
        return None
    groups = tuple(-(-n // size) for n, size in zip(counts, workgroup_size))
    groups = groups + (1,) * (3 - len(groups))
    if len(counts) == 1 and groups[0] > limit:
        x, y = fold_workgroups(groups[0], limit)
        return (x, y, 1), True
    _check_limit(
        groups,
        limit,
        f"{name}(): threads={threads!r} needs",
        "only 1-D launches are folded: threads=N, workgroups=N",
    )
    return groups, False


def _check_limit(groups: tuple, limit: int, what: str, hint: str) -> None:
    """ValueError when a dimension of `groups` exceeds the device's per-dimension limit."""
    for axis, n in zip("xyz", groups):
        if n > limit:
            raise ValueError(
                f"{what} {n} workgroups in {axis}, more than the device's limit of {limit}"
                f" per dimension ({hint})"
            )


def _count_tuple(value, what: str) -> tuple:
    """An int or a tuple of 1 to 3 ints, as a tuple of non-negative ints."""
    items = (value,) if not isinstance(value, (tuple, list)) else tuple(value)
    if not 1 <= len(items) <= 3:
        raise TypeError(f"{what} takes an int or a tuple of 1 to 3 ints, got {value!r}")
    try:
        counts = tuple(operator.index(n) for n in items)
    except TypeError:
        raise TypeError(f"{what} takes an int or a tuple of 1 to 3 ints, got {value!r}") from None
    if any(n < 0 for n in counts):
        raise ValueError(f"{what} must not be negative, got {value!r}")
    return counts
