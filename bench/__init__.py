"""Benchmarks: `python -m bench` prints every figure (see bench/README.md)."""
