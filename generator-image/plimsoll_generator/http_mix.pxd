# Typed state for the compiled hot path: the operation each request is sent for.
# Keep in step with http_mix.py's MixEntry.

cdef class MixEntry:
    cdef public object by_size, operation, sizes, static, name, expected
    cdef public long counter
