"""Fitting a workload and a mock from access-log records (`plimsoll calibrate`).

Pure: `traffic.TrafficFit` is fed one `plimsoll.shared.accesslog.LogRecord` at a
time by the CLI (which reads the files) and returns a `fit.CalibrationFit`: the
request mix, the modeled users' bursts, bots and sessions, each route's latency,
errors and sizes, and the arrival rate's peak, each with the figure it came
from. Every fitter is a function of data, tested on draws with known parameters.
"""
