"""Autotuning: `tx.autotune` measures a kernel's configs on the adapter and caches the
fastest per adapter on disk; the cost model predicts each config's time from the IR so
fewer configs are measured.

* `cache.py`: the on-disk store of tuning results, keyed by adapter identity, pyshader_tx
  version, kind and key (`load`, `store`, `clear`, `entries`, `adapter_identity`);
* `autotune.py`: the `@tx.autotune` decorator (measures with `runtime/timing.py`);
* `cost_model.py` (counts from `ir_counts.py`): a config's predicted time from the IR and
  the adapter's `calibration.py` (microbenchmarks measured once per adapter, cached).
"""
