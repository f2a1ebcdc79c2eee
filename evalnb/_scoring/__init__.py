"""Scoring a finished attempt: spec 000 expectations, spec 002 gates, judge and outcome.

Plain functions over records and a :class:`~evalnb.records.interfaces.Sandbox`;
:mod:`evalnb._scoring.commands` finds target commands in scripts and transcripts.
"""
