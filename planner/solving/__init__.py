"""Solve stage: a built model to checked values. :mod:`~planner.solving.backends` runs HiGHS or
CBC on a PuLP problem; :mod:`~planner.solving.core` judges what they return (status, bound, gap).

May import: the base modules and :mod:`planner.model`.
"""
