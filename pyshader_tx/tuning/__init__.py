"""Autotuning: `tx.autotune` measures a kernel's configs on the adapter and caches the
fastest per adapter on disk; the cost model predicts each config's time from the IR so
fewer configs are measured."""
