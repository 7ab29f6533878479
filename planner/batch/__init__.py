"""Batches: sweeps over scenario variants, the executors that run them (serial, processes, Dask)
and the Pareto frontier of their results.

May import: every stage up to :mod:`planner.plan` (not :mod:`planner.scale`, which uses the
executors, nor the CLI).
"""
