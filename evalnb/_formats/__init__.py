"""Readers of file formats: datasets, scenarios, and every trace format users bring.

One module per format; each reads files into :mod:`evalnb.records` and raises
:class:`~evalnb.errors.InputError` naming the file, the line and the field.
"""
