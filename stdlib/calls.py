"""How tx.stdlib's host functions prepare and run their launches (`runtime/plans.py`).

A host function first asks `cached` for the plan of its call shape (the input's dtype and
shape and its other key arguments); only when there is none does it check its arguments,
ask its tuner for a config and build the plan (`prepare`); then it takes its results from
the pool and `run`s the plan. So a repeated call costs its launches' recording and a few
microseconds, not its checks, tuning lookups and bindings again.

Small helpers size the launches: `split` divides n elements among a bounded number of
workgroups, `zeroed` and `finish_state` give the launches' zeroed scratch.
"""

from __future__ import annotations

import numpy as np

from pyshader_tx import types as t
from pyshader_tx.runtime import plans, pool
from pyshader_tx.runtime.arrays import DeviceArray, element_layout

from . import device_kernels

__all__ = ["cached", "prepare", "run", "zeroed", "zero", "split", "finish_state"]


def cached(cache: plans.PlanCache, x, *key):
    """The plan `cache` holds for a call on `x` with `key` (its other arguments), or None
    (also for arguments that cannot key a plan: the call's checks then speak)."""
    try:
        return cache.get((x.dtype, x.shape, *key))
    except (AttributeError, TypeError):
        return None


def prepare(cache, tuner, plan_key, tuning_key, size, build, x, inputs) -> plans.Plan:
    """The plan of a call (checked already) that `cache` did not hold: `build(config)` with
    the config `tuner` chooses for `tuning_key` and `size`, kept in `cache` under
    `plan_key` (`cache` None: not kept) unless the tuner's choice holds for this call only. A tuning runs plans of
    the other configs on `x` and `inputs(scratch, dx)` (the plan's other inputs: arrays
    taken from `scratch`, never the caller's; `dx` is `x` on the device)."""

    def make_run(scratch):
        dx = scratch.upload(x)
        args = (dx, *inputs(scratch, dx))
        made = {}

        def run(config):
            key = repr(config)
            if key not in made:
                made[key] = build(config)
            made[key].run(*args)

        return run

    plan = build(tuner.choose(tuning_key, size, make_run))
    if cache is not None and tuner.steady:
        cache.put(plan_key, plan)
    return plan


def run(plan: plans.Plan, x, *arrays) -> None:
    """Run `plan` on `x` (a DeviceArray, or numpy data uploaded for the call) and `arrays`."""
    if type(x) is DeviceArray and x._view is None:
        plan.run(x, *arrays)
        return
    with pool.device_input(x) as dx:
        plan.run(dx, *arrays)


def zeroed(plan: plans.Plan, shape, dtype):
    """A scratch array of `plan`, zero-filled before the launches added after this call:
    the plan's own (small) by a `zero_words` launch (a buffer clear would end the compute
    pass, which costs more host time than a launch), one from the pool (large) by a
    recorded buffer clear."""
    array = plan.scratch(shape, dtype)
    if isinstance(array, DeviceArray):
        zero(plan, array)
    else:
        plan.clear(array)
    return array


def zero(plan: plans.Plan, array) -> None:
    """Add a `zero_words` launch over the words of `array` (the plan's own array, or a
    Slot) to `plan`."""
    if isinstance(array, DeviceArray):
        words = array.storage_nbytes // 4
        target = DeviceArray(array.buffer, (words,), element_layout(t.u32))
    else:
        words = int(np.prod(array.shape, dtype=np.int64)) * array.dtype.itemsize // 4
        target = plans.View(array, (words,), t.u32)
    plan.launch(device_kernels.zero_words, target, threads=words)


def split(n: int, workgroups: int, row: int) -> tuple:
    """(per, groups): n elements (at least one) split into ranges of `per` elements, one
    per workgroup: `per` the smallest multiple of `row` (what a workgroup takes in one
    round of its loop: its invocations times their loads) with which at most `workgroups`
    workgroups cover n; `groups` = -(-n // per), the workgroups to launch (the last range
    may be partial)."""
    per = -(-n // workgroups)
    per = -(-per // row) * row
    return per, -(-n // per)


def finish_state(plan: plans.Plan, workgroups: int) -> DeviceArray:
    """The state of `device_kernels.finish_reduce` for a launch of `workgroups` workgroups:
    2 * workgroups + 1 u32 words (each workgroup's total, then the ticket), the plan's own,
    zero-filled once now: every launch's last workgroup leaves them zero again."""
    state = plan.scratch(2 * workgroups + 1, np.uint32)
    if not isinstance(state, DeviceArray):  # (a pooled Slot would not stay zero)
        raise ValueError(f"finish_state: {workgroups} workgroups are too many")
    pool.clear(state)
    return state
