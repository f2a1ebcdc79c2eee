"""Analysis of run folders and foreign traces: tidy tables, metrics, statistics, diagnostics.

The analysis reads run folders through :mod:`evalnb._store` and never imports the
runtime.
"""
