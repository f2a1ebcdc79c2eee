"""Run folders: where the runtime writes and the analysis reads.

- :mod:`evalnb._store.folder`: ``run.json`` and the append-only ``events.jsonl``.
- :mod:`evalnb._store.tables`: task records as the tidy tables (and their parquet files).

The store sits between the runtime and the analysis, so neither imports the other.

Example:
    >>> from evalnb._store import is_run_folder
    >>> is_run_folder("/")
    False
"""

from evalnb._store.folder import RunStore, is_run_folder, utc_now

__all__ = ["RunStore", "is_run_folder", "utc_now"]
