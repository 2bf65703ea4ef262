# Typed state for the compiled hot path: where each answer's latency and outcome go.
# Keep in step with recorder.py's Series and OperationStats.

cdef class Series:
    cdef public object also, histogram, part
    cdef public list buffer

cdef class OperationStats:
    cdef public Series added, latency, ttft
    cdef public long application, good, ok, shed, transport, unexpected
    cdef public double added_within, ttft_within, within
    cpdef judge(self, double elapsed, double ttft, double added)
