# Typed state for the compiled hot path: the drivers' per-answer step. `cpdef` and the
# typed locals make `tally` and the closed loop's `on_done` C calls with C attribute
# access; a Python subclass may still override them. Keep in step with open_model.py.

cimport cython

from plimsoll_generator.client cimport Connection, Exchange
from plimsoll_generator.context cimport TrialContext
from plimsoll_generator.http_mix cimport MixEntry
from plimsoll_generator.recorder cimport OperationStats


cdef class TimedExchange(Exchange):
    cdef public MixEntry entry
    cdef public bint record
    cdef public long rpc, user
    cdef public double start

cdef class HttpDriver:
    cdef dict __dict__  # the MCP and replay drivers add their own attributes
    cdef public TrialContext ctx
    cdef public object mix, handle
    cdef public MixEntry only
    cdef public double timeout
    cdef public dict stats
    cdef public long counter
    cdef public bint keep_body, plain_payload, plain_judge, running
    cdef public list spare
    cpdef on_done(self, Exchange exchange)
    @cython.locals(
        stats=OperationStats, buffer=list, elapsed=double, added=double, entry=MixEntry,
        ok=bint, good=bint,
    )
    cpdef tally(self, TimedExchange timed, double now)

cdef class PacedDriver(HttpDriver):
    cdef public object pacer, loop

cdef class OpenModel(PacedDriver):
    pass

cdef class ClosedLoop(HttpDriver):
    cdef public long users
    @cython.locals(
        timed=TimedExchange, now=double, conn=Connection, record=bint, ctx=TrialContext,
        entry=MixEntry,
    )
    cpdef on_done(self, Exchange exchange)
