# Typed state for the compiled hot path (see hot_path.md in docs/reference). Cython
# reads this beside client.py: the Python source stays the one implementation, and
# these declarations turn its classes into extension types whose attributes are C
# fields, not dictionary or slot lookups. Keep it in step with client.py's classes.

cimport cython


cdef class Exchange:
    cdef public object body, callback, conn, error, headers, server_timing
    cdef public bint keep_headers, lean
    cdef public long nbytes
    cdef public int status
    cdef public double sent_at, timeout

cdef class Connection:
    cdef public Pool pool
    cdef public object full_parser, lean_parser, parser, transport
    cdef public list head_parts
    cdef public bint head_pending, reusable
    cdef public Exchange exchange
    cpdef send(self, bytes payload, Exchange exchange)
    @cython.locals(end=Py_ssize_t)
    cpdef data_received(self, bytes data)
    @cython.locals(exchange=Exchange)
    cpdef on_lean_message_complete(self)

cdef class Pool:
    cdef dict __dict__  # room for a test's stand-in `send`
    cdef public object loop, host, address, tls, _sweeper
    cdef public int port
    cdef public list idle
    cdef public set open
    cdef public long connections, bytes_in, bytes_out
    cdef public bint closed, refused
