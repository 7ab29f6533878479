"""The planner's version, written into every plan."""

__version__ = "0.2.0"
