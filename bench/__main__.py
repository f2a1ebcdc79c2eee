"""``python -m bench``: run the whole benchmark suite (see bench/suite.py)."""

from bench.suite import main

main()
