"""Analysis of run folders and foreign traces: tidy tables, metrics, statistics, diagnostics.

The analysis reads run folders through :mod:`evalnb.store` and never imports the
runtime.
"""
