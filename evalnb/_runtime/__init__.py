"""Running evaluations: the agent loop, the runner, providers and sandboxes.

The runtime writes run folders through :mod:`evalnb._store` and never imports the
analysis or presentation layers.
"""
