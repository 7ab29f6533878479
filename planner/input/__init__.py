"""Load and validate: scenario files in, a checked :class:`~planner.schema.Scenario` out, and the
views of it every later stage reads (the site index, the power tree, the phase timeline).

May import: the base modules (``planner.enums``, ``errors``, ``clock``, ``fileio``, ``yamlio``,
``version``) and :mod:`planner.schema`.
"""
