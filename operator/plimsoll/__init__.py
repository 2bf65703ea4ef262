"""Plimsoll: finds the capacity ceiling of a service pinned to a pod shape."""

__version__ = "0.1.0"
# The distribution that installs this package (pyproject.toml's name): `plimsoll` on the
# public Python index is an unrelated project, so ours is named apart from the import.
DISTRIBUTION = "plimsoll-capacity"
