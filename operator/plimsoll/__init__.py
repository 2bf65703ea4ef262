"""Plimsoll: finds the capacity ceiling of a service pinned to a pod shape."""

__version__ = "0.1.0"
