"""Scale-out: a region or fleet planned building by building (the shares a master hands out, the
proposals it weighs, the bounds a joined plan is measured against).

May import: every stage up to :mod:`planner.plan` and :mod:`planner.batch` (its executors).
"""
