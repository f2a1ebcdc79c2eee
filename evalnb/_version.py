"""The evalnb version (the one place it is written; ``pyproject.toml`` reads it).

Example:
    >>> __version__.count(".") >= 2
    True
"""

__version__ = "0.1.0"
