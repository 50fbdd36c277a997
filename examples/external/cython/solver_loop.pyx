# cython: language_level=3
# solver_loop: a Cython extension module on evoxc's C ABI (evoxc/c_api.pxd), the shape of cyxla's downstream example:
# a fixed-point iteration x <- f(x) that calls an evoxc executable from a `nogil` loop, in place on numpy memory.
# Build: examples/external/cython/build.py (cythonize, then cc against evoxc.get_include()/get_library()).
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport int64_t
from libc.string cimport memcpy

from evoxc.c_api cimport *

import evoxc

evoxc.check_abi(EVOXC_ABI_VERSION)


def iterate(exe_capsule, float[::1] x, long steps):
    """Runs x <- f(x) `steps` times (f: float32[n] -> float32[n]) without the GIL; returns x."""
    cdef evoxc_executable* exe = <evoxc_executable*>PyCapsule_GetPointer(exe_capsule, "evoxc_executable")
    cdef Py_ssize_t n = x.shape[0]
    cdef float* nxt = <float*>evoxc_aligned_alloc(n * sizeof(float))
    cdef int64_t dims[1]
    dims[0] = n
    cdef evoxc_buffer inp
    cdef evoxc_buffer out
    inp.data = &x[0]
    inp.nbytes = n * sizeof(float)
    inp.dtype = EVOXC_FLOAT32
    inp.rank = 1
    inp.dims = dims
    out.data = nxt
    out.nbytes = n * sizeof(float)
    out.dtype = EVOXC_FLOAT32
    out.rank = 1
    out.dims = NULL
    cdef evoxc_status st = EVOXC_OK
    cdef long k
    with nogil:
        for k in range(steps):
            st = evoxc_executable_execute(exe, &inp, 1, &out, 1)
            if st != EVOXC_OK:
                break
            memcpy(&x[0], nxt, n * sizeof(float))
    evoxc_aligned_free(nxt)
    if st != EVOXC_OK:
        raise RuntimeError(f"evoxc status {<int>st}: {evoxc_last_error().decode()}")
    return x
