"""The Plimsoll load generator: drives a trial's workload and reports a TrialResult.

The runner starts it as `python -m plimsoll_generator --host H --port P` and talks
to it over the control API (`control.py`). It imports only `plimsoll.api` and
`plimsoll.shared` from the core, so the image stays small.
"""
