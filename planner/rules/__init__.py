"""The optimiser's rules of the world: cost formulas, fabric sizing, interruption rates and the
backup power. The model and the plan's figures both use
them; the verifier has its own (``planner.verifier``).

May import: the base modules, :mod:`planner.schema` and :mod:`planner.input`.
"""
