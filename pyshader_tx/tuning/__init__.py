"""Autotuning: `tx.autotune` measures a kernel's configs on the adapter and caches the
fastest per adapter on disk; the cost model predicts each config's time from the IR so
fewer configs are measured.

* `cache.py`: the on-disk store of tuning results, keyed by adapter identity, pyshader_tx
  version, kind and key (`load`, `store`, `clear`, `entries`, `adapter_identity`);
* `search.py`: what both tuners share: configs prepared (skipped with a warning when they
  cannot run), pruned by the cost model, timed with `runtime/timing.py`; `Tuning`, the
  key's power-of-two buckets, when tuning is on;
* `autotune.py`: the `@tx.autotune` decorator (one kernel launch);
* `host.py`: `HostTuner`, the stdlib's tuning of a host call and all its launches
  (predicted from the launches `runtime/capture.py` captures);
* `cost_model.py`: a config's predicted time from the IR and the adapter's
  `calibration.py` (microbenchmarks measured once per adapter, cached, and derived with the
  model they feed), `predict`;
* `prediction.py` (counts from `ir_counts.py`): the model itself, given a calibration
  (`counts`, `combine`), used by both `cost_model.py` and `calibration.py`.
"""
