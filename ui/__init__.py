"""Dashboard pages and figures; thin layers over the planner engine (never pulp)."""
