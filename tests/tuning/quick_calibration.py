"""One quick calibration of the adapter (benchmarks grown to 0.2 ms, not 1 ms) shared by
the tuning tests of a session."""

import functools

from pyshader_tx.tuning import calibration


@functools.lru_cache(maxsize=1)
def quick_calibration() -> calibration.Calibration:
    return calibration.measure(target_seconds=2e-4)
