"""The benchmarks: scripts run by path (``python benchmarks/floor.py``), sharing ``_common``."""
