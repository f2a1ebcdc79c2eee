"""What people see: reports, altair charts and Jupyter widgets, built on the analysis layer."""
