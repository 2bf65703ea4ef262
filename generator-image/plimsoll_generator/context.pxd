# Typed state for the compiled hot path: the trial's counters and times, read and
# bumped once per answer by the closed loop (open_model.pxd). The fields are in the
# dataclass's order (Cython builds its __init__ from them). Keep in step with context.py.

cdef class TrialContext:
    cdef public object request, pool, recorder, rng
    cdef public str host_header, base_path
    cdef public double t0, measure_from, end
    cdef public object ips, target_address, extra_pools, stopped, streams
    cdef public long intended, sent, on_time, dropped_starts
    cdef public object start_lag
    cdef public long in_flight, page_views, bot_requests
