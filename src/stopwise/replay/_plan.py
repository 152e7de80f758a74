"""The live task order, kept importable from the replay package; it lives in :mod:`stopwise.compare._plan`."""

from stopwise.compare._plan import task_order

__all__ = ["task_order"]
