"""`workgroups=N` launches beyond the per-dimension workgroup limit fold like `threads=N`
(runtime/launch.py): every workgroup below N runs once, none past it, and the built-in
values read as in the unfolded launch of N workgroups. The limit is lowered to 4 here (on
every executor) so that the launches stay tiny; N = X * Y folds onto that grid exactly, any
other N (5, 7, 13) onto a grid with surplus workgroups, which must not run the body.
"""

import importlib

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array2D, u32
from pyshader_tx.runtime.dispatch import compute_dispatch, exact_fold
from pyshader_tx.runtime.launch import EXECUTORS

LIMIT = 4
SIZE = (2, 2)  # the workgroup size: 4 invocations, global ids with a y part
COLUMNS = 11


@tx.kernel(workgroup_size=SIZE)
def launch_ids(out: Array2D[u32]):
    wid = tx.workgroup_id()
    nwg = tx.num_workgroups()
    gid = tx.global_invocation_id()
    row = wid.x * 4 + tx.local_invocation_index()
    tx.workgroup_barrier()  # in uniform control flow, also inside the surplus check
    values = [wid.x, wid.y, wid.z, nwg.x, nwg.y, nwg.z, gid.x, gid.y, gid.z]
    for k in range(9):
        out[row, k] = values[k]
    out[row, 9] = tx.local_invocation_index()
    out[row, 10] += u32(1)  # how often the row's invocation ran


@pytest.fixture
def low_limit(monkeypatch, workgroup_limit):
    """At most LIMIT workgroups per dimension, on every executor; launch_ids gets launchers
    of its own for the test."""
    workgroup_limit(LIMIT)
    native = importlib.import_module("pyshader_tx.vulkan_host.launch")

    class LimitedNativeLauncher(native.NativeLauncher):
        def __init__(self, interface, get_code, max_workgroups_per_dimension=None):
            super().__init__(interface, get_code, LIMIT)

    monkeypatch.setitem(EXECUTORS, "vulkan", LimitedNativeLauncher)
    interface = launch_ids.compiled().interface
    monkeypatch.setitem(interface.__dict__, "_launchers", {})


def expected(groups: int, counted: int, rows: int) -> np.ndarray:
    """What launch_ids writes for a launch of `groups` workgroups (1-D) whose
    num_workgroups().x reads `counted`, in an array of `rows` rows."""
    out = np.zeros((rows, COLUMNS), np.uint32)
    w, local = np.divmod(np.arange(groups * 4), 4)
    lx, ly = local % SIZE[0], local // SIZE[0]
    zero, one = np.zeros_like(w), np.ones_like(w)
    columns = [w, zero, zero, counted * one, one, one, w * SIZE[0] + lx, ly, zero, local, one]
    out[: groups * 4] = np.stack(columns, axis=1)
    return out


@pytest.mark.parametrize(
    "workgroups, grid",
    [
        (4, (4, 1, 1)),  # within the limit: not folded
        (6, (3, 2, 1)),  # 3 x 2 exactly
        (16, (4, 4, 1)),  # 4 x 4 exactly: the most a limit of 4 reaches
        (13, (4, 4, 1)),  # prime: 3 surplus workgroups
        ((5,), (3, 2, 1)),  # 1 surplus
        ((7, 1, 1), (4, 2, 1)),  # 1 surplus
    ],
)
def test_a_1d_workgroups_launch_folds(low_limit, workgroups, grid):
    n = workgroups if isinstance(workgroups, int) else workgroups[0]
    rows = (grid[0] * grid[1] + 2) * 4  # room for the surplus workgroups, which write nothing
    out = np.zeros((rows, COLUMNS), np.uint32)
    launch_ids(out, workgroups=workgroups)
    np.testing.assert_array_equal(out, expected(n, n, rows))
    shape = compute_dispatch("launch_ids", SIZE + (1,), LIMIT, None, workgroups)
    assert shape[0] == grid
    assert shape[1] == (False if n <= LIMIT else True if n in (6, 16) else n)


def test_an_empty_launch_does_nothing(low_limit):
    out = np.full((8, COLUMNS), 7, np.uint32)
    launch_ids(out, workgroups=0)
    launch_ids(out, workgroups=(0, 1, 1))
    np.testing.assert_array_equal(out, np.full((8, COLUMNS), 7, np.uint32))


def test_a_threads_launch_folds_with_the_same_ids(low_limit):
    """threads=26 needs 13 workgroups of 2 in x: the folded grid (4, 4) runs all 16, and
    num_workgroups() reads 16; the ids are the unfolded launch's (gid.y the local y)."""
    rows = 18 * 4
    out = np.zeros((rows, COLUMNS), np.uint32)
    launch_ids(out, threads=26)
    np.testing.assert_array_equal(out, expected(16, 16, rows))


def test_launches_that_do_not_fold_are_errors(low_limit):
    out = np.zeros((4, COLUMNS), np.uint32)
    with pytest.raises(ValueError, match=r"workgroups=\(5, 2\) asks for 5 workgroups in x, more"):
        launch_ids(out, workgroups=(5, 2))
    with pytest.raises(ValueError, match="only 1-D launches are folded: workgroups=N"):
        launch_ids(out, workgroups=(1, 1, 5))
    with pytest.raises(
        ValueError, match=r"17 workgroups exceed what a folded 1-D launch can reach"
    ):
        launch_ids(out, workgroups=17)
    assert not out.any()


def test_exact_fold():
    assert exact_fold(6, 4) == (3, 2)
    assert exact_fold(16, 4) == (4, 4)
    assert exact_fold(13, 4) is None and exact_fold(17, 4) is None
    assert exact_fold(131072, 65535) == (32768, 4)
    assert exact_fold(65537 * 2, 65535) is None  # 65537 is prime
    assert exact_fold(65521 * 65519, 65535) == (65521, 65519)
    assert exact_fold(65535**2 - 1, 65535) is None  # 65534 * 65536 only
    for total in (65536, 70000, 10**6, 3**20, 65535**2):
        x, y = exact_fold(total, 65535)
        assert x * y == total and x <= 65535 and y <= 65535
    assert compute_dispatch("k", (64, 1, 1), 65535, None, 65537 * 2) == ((43692, 3, 1), 131074)
