"""Deliberately broken kernels for tests/frontend/test_atomic_diagnostics.py: misuses of
atomics, one per kernel. The test compares full rendered messages, so line numbers here
matter: append new cases at the end."""

import pyshader_tx as tx
from pyshader_tx import Array, f32, u32


@tx.kernel(workgroup_size=64)
def plain_read(counts: Array[tx.Atomic[u32]], out: Array[u32]):
    out[0] = counts[0]


@tx.kernel(workgroup_size=64)
def plain_write(counts: Array[tx.Atomic[u32]]):
    counts[1] = 5


@tx.kernel(workgroup_size=64)
def augmented(counts: Array[tx.Atomic[u32]]):
    counts[2] += 1


@tx.kernel(workgroup_size=64)
def not_atomic(counts: Array[u32]):
    tx.atomic_add(counts[0], 1)


@tx.kernel(workgroup_size=64)
def local_reference(out: Array[u32]):
    total = u32(0)
    tx.atomic_add(total, 1)


@tx.kernel(workgroup_size=64)
def float_min(values: Array[tx.Atomic[f32]]):
    tx.atomic_min(values[0], 1.0)


@tx.kernel(workgroup_size=64)
def wrong_value_type(counts: Array[tx.Atomic[u32]]):
    tx.atomic_add(counts[0], 1.5)


@tx.kernel(workgroup_size=64)
def uniform_load_of_atomic(out: Array[u32]):
    flags = tx.workgroup_array(tx.Atomic[u32], 4)
    out[0] = tx.workgroup_uniform_load(flags[0])


@tx.kernel(workgroup_size=64)
def hoisted_result(counts: Array[tx.Atomic[u32]], out: Array[u32]):
    if out[0] > 0:
        r = tx.atomic_compare_exchange(counts[0], 0, 1)
    else:
        r = tx.atomic_compare_exchange(counts[1], 0, 1)
    out[1] = r.old_value


@tx.kernel(workgroup_size=64)
def atomic_of_vector(out: Array[u32]):
    tiles = tx.workgroup_array(tx.Atomic[tx.vec2u], 4)


@tx.kernel(workgroup_size=64)
def barrier_after_atomic(counts: Array[tx.Atomic[u32]]):
    if tx.atomic_add(counts[0], 1) == 0:
        tx.workgroup_barrier()


@tx.kernel(workgroup_size=64)
def whole_array(counts: Array[tx.Atomic[u32]]):
    tx.atomic_add(counts, 1)


@tx.func
def bump(counts: Array[tx.Atomic[u32]], key: u32) -> u32:
    return tx.atomic_add(counts[key], 1)


@tx.kernel(workgroup_size=64)
def array_of_wrong_type(counts: Array[u32]):
    bump(counts, 0)


@tx.kernel(workgroup_size=64)
def value_for_array(counts: Array[tx.Atomic[u32]]):
    bump(5, 0)


@tx.kernel(workgroup_size=64)
def workgroup_array_for_array(counts: Array[tx.Atomic[u32]]):
    local = tx.workgroup_array(tx.Atomic[u32], 4)
    bump(local, 0)


@tx.func
def atomic_value(a: tx.Atomic[u32]) -> u32:
    return 0


@tx.kernel(workgroup_size=64)
def atomic_parameter(counts: Array[tx.Atomic[u32]]):
    atomic_value(counts[0])


@tx.kernel(workgroup_size=64)
def misspelled_and(counts: Array[tx.Atomic[u32]]):
    tx.atomic_and(counts[0], 1)
