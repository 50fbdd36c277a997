/* native_loop: a CPython extension module written against evoxc's C ABI (evoxc/c_api.h), the way a solver or a
 * simulation calls an evoxc program from native code. It takes an executable from Python (Executable.c_executable())
 * or loads a saved artifact itself, and calls it in a C loop with the GIL released.
 *
 *   run(exe, inputs, outputs, calls) -> gil_held: executes `calls` times; inputs/outputs are C-contiguous buffers
 *     (numpy arrays) read and written in place; returns whether the GIL was held inside the loop (it is not).
 *   load(path) -> exe: a capsule of the executable in a .evoxcartifact.
 *
 * Build: examples/external/python/build.py (cc with evoxc.get_include() and evoxc.get_library()). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <evoxc/c_api.h>
#include <string.h>

#define MAX_TENSORS 16

static const char kCapsule[] = "evoxc_executable";

static void release_capsule(PyObject* capsule) {
  evoxc_executable_release((evoxc_executable*)PyCapsule_GetPointer(capsule, kCapsule));
}

/* The evoxc_dtype of a buffer's struct format, or -1. */
static int dtype_of(const Py_buffer* view) {
  const char* f = view->format ? view->format : "B";
  if (*f == '<' || *f == '=' || *f == '@') ++f;
  char c = f[0];
  if (c == '\0' || f[1] != '\0') return -1;
  Py_ssize_t n = view->itemsize;
  switch (c) {
    case '?': return EVOXC_BOOL;
    case 'e': return EVOXC_FLOAT16;
    case 'f': return EVOXC_FLOAT32;
    case 'd': return EVOXC_FLOAT64;
    case 'b': case 'h': case 'i': case 'l': case 'q':
      return n == 1 ? EVOXC_INT8 : n == 2 ? EVOXC_INT16 : n == 4 ? EVOXC_INT32 : n == 8 ? EVOXC_INT64 : -1;
    case 'B': case 'H': case 'I': case 'L': case 'Q':
      return n == 1 ? EVOXC_UINT8 : n == 2 ? EVOXC_UINT16 : n == 4 ? EVOXC_UINT32 : n == 8 ? EVOXC_UINT64 : -1;
    default: return -1;
  }
}

/* Fills `bufs` from a list of buffer objects; 0 on success, -1 with an exception set. */
static int take_buffers(PyObject* list, int writable, Py_buffer* views, evoxc_buffer* bufs, int64_t dims[][8],
                        Py_ssize_t* count) {
  if (!PyList_Check(list) || PyList_GET_SIZE(list) > MAX_TENSORS) {
    PyErr_SetString(PyExc_TypeError, "inputs and outputs must be lists of at most 16 arrays");
    return -1;
  }
  *count = 0;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); ++i) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(PyList_GET_ITEM(list, i), &views[i], flags) != 0) return -1;
    *count = i + 1;
    if (views[i].ndim > 8) {
      PyErr_SetString(PyExc_ValueError, "at most 8 dimensions");
      return -1;
    }
    for (int k = 0; k < views[i].ndim; ++k) dims[i][k] = views[i].shape[k];
    bufs[i].data = views[i].buf;
    bufs[i].nbytes = (size_t)views[i].len;
    bufs[i].dtype = dtype_of(&views[i]);
    bufs[i].rank = views[i].ndim;
    bufs[i].dims = dims[i];
  }
  return 0;
}

static PyObject* run(PyObject* self, PyObject* args) {
  (void)self;
  PyObject *capsule, *in_list, *out_list;
  long calls;
  if (!PyArg_ParseTuple(args, "OO!O!l", &capsule, &PyList_Type, &in_list, &PyList_Type, &out_list, &calls)) return NULL;
  evoxc_executable* exe = (evoxc_executable*)PyCapsule_GetPointer(capsule, kCapsule);
  if (exe == NULL) return NULL;
  Py_buffer views[2 * MAX_TENSORS];
  evoxc_buffer bufs[2 * MAX_TENSORS];
  int64_t dims[2 * MAX_TENSORS][8];
  Py_ssize_t n_in = 0, n_out = 0;
  PyObject* result = NULL;
  if (take_buffers(in_list, 0, views, bufs, dims, &n_in) == 0 &&
      take_buffers(out_list, 1, views + MAX_TENSORS, bufs + MAX_TENSORS, dims + MAX_TENSORS, &n_out) == 0) {
    evoxc_status st = EVOXC_OK;
    int gil_held = 0;
    evoxc_executable_retain(exe); /* kept alive even if another thread drops the capsule meanwhile */
    Py_BEGIN_ALLOW_THREADS
    for (long c = 0; c < calls && st == EVOXC_OK; ++c)
      st = evoxc_executable_execute(exe, bufs, (size_t)n_in, bufs + MAX_TENSORS, (size_t)n_out);
    gil_held = PyGILState_Check();
    Py_END_ALLOW_THREADS
    evoxc_executable_release(exe);
    if (st != EVOXC_OK)
      PyErr_Format(PyExc_RuntimeError, "evoxc status %d: %s", (int)st, evoxc_last_error());
    else
      result = PyBool_FromLong(gil_held);
  }
  for (Py_ssize_t i = 0; i < n_in; ++i) PyBuffer_Release(&views[i]);
  for (Py_ssize_t i = 0; i < n_out; ++i) PyBuffer_Release(&views[MAX_TENSORS + i]);
  return result;
}

static PyObject* load(PyObject* self, PyObject* args) {
  (void)self;
  const char* path;
  if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
  evoxc_executable* exe = NULL;
  evoxc_status st;
  Py_BEGIN_ALLOW_THREADS
  st = evoxc_executable_load(path, NULL, &exe);
  Py_END_ALLOW_THREADS
  if (st != EVOXC_OK) return PyErr_Format(PyExc_RuntimeError, "evoxc status %d: %s", (int)st, evoxc_last_error());
  return PyCapsule_New(exe, kCapsule, release_capsule);
}

static PyMethodDef methods[] = {
    {"run", run, METH_VARARGS, "run(exe, inputs, outputs, calls) -> gil_held"},
    {"load", load, METH_VARARGS, "load(path) -> an evoxc_executable capsule"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "native_loop", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_native_loop(void) {
  /* The library this module was linked against must speak the ABI of the header it was compiled with. */
  if (evoxc_check_abi(EVOXC_ABI_VERSION) != EVOXC_OK) {
    PyErr_SetString(PyExc_ImportError, evoxc_last_error());
    return NULL;
  }
  PyObject* m = PyModule_Create(&module);
  if (m != NULL && PyModule_AddIntConstant(m, "ABI_VERSION", EVOXC_ABI_VERSION) != 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
