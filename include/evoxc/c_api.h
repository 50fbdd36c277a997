/* The C ABI of libevoxc: load a compiled executable, ask for its inputs' and outputs' specs, execute it into
 * the caller's buffers. For native code and extension modules (C, Cython, Rust, Fortran) on any backend.
 *
 * Stability: the functions, enums and struct layouts below change only together with EVOXC_ABI_VERSION. A
 * program compiled against this header calls evoxc_check_abi(EVOXC_ABI_VERSION) once before anything else.
 *
 * Errors: every function that can fail returns an evoxc_status; EVOXC_OK is 0. The message of the last failure
 * on the calling thread is evoxc_last_error(). No function of this header throws, aborts or prints.
 *
 * Threads: an executable may be executed from many threads at once; each call runs on the calling thread for the
 * CPU backends (interp, mlir, xla's CPU plugin). Loading and releasing are thread-safe too.
 *
 * Memory: an input buffer is read in place during the call (on the CPU backends, not copied), an output buffer is
 * written in place; neither is kept after the call returns. Buffers need only the alignment of their element
 * type; evoxc_aligned_alloc gives 64-byte aligned memory, which the compiled backends read fastest. */
#ifndef EVOXC_C_API_H_
#define EVOXC_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header's declarations. */
#define EVOXC_ABI_VERSION 1

typedef enum evoxc_status {
  EVOXC_OK = 0,
  EVOXC_ERROR_INVALID_ARGUMENT = 1, /* a NULL pointer, an index out of range, a malformed device name */
  EVOXC_ERROR_VALIDATION = 2,       /* buffers that do not match the executable: count, dtype, extents, bytes */
  EVOXC_ERROR_PERSISTENCE = 3,      /* an artifact missing, malformed, or built for another version or machine */
  EVOXC_ERROR_BACKEND = 4,          /* the backend cannot load or run the program */
  EVOXC_ERROR_DEVICE = 5,           /* a device the backend does not have */
  EVOXC_ERROR_RUN_LIMIT = 6,        /* the run hit a limit (loop iterations, deadline) */
  EVOXC_ERROR_ABI = 7,              /* compiled against another EVOXC_ABI_VERSION */
  EVOXC_ERROR_OUT_OF_MEMORY = 8,
  EVOXC_ERROR_INTERNAL = 9, /* a bug of evoxc: please report it with the message */
  EVOXC_ERROR_OTHER = 10    /* any other evoxc error (its message says which) */
} evoxc_status;

/* Element types; the values are part of the ABI. */
typedef enum evoxc_dtype {
  EVOXC_BOOL = 0, /* one byte, 0 or 1 */
  EVOXC_INT8 = 1,
  EVOXC_INT16 = 2,
  EVOXC_INT32 = 3,
  EVOXC_INT64 = 4,
  EVOXC_UINT8 = 5,
  EVOXC_UINT16 = 6,
  EVOXC_UINT32 = 7,
  EVOXC_UINT64 = 8,
  EVOXC_FLOAT16 = 9,
  EVOXC_BFLOAT16 = 10,
  EVOXC_FLOAT32 = 11,
  EVOXC_FLOAT64 = 12
} evoxc_dtype;

/* A loaded program on one device. Reference-counted: evoxc_executable_retain adds a reference,
 * evoxc_executable_release drops one; the last release frees it. */
typedef struct evoxc_executable evoxc_executable;

/* What one input or output is. The pointers stay valid while the executable lives. */
typedef struct evoxc_tensor_spec {
  const char* name;    /* its path in the program's input or output tree: "[0]", "[1]['w']" */
  int32_t dtype;       /* an evoxc_dtype */
  int32_t rank;        /* the number of extents */
  const int64_t* dims; /* rank extents; -1 where an extent is symbolic (fixed by the inputs of each call) */
  size_t itemsize;     /* bytes per element */
  size_t nbytes;       /* itemsize times the extents' product: the buffer size; 0 when an extent is symbolic */
} evoxc_tensor_spec;

/* A caller's buffer: dense, row-major (C order). */
typedef struct evoxc_buffer {
  void* data;    /* may be NULL only when nbytes is 0 */
  size_t nbytes; /* inputs: exactly the tensor's size; outputs: the capacity, at least the result's size */
  int32_t dtype; /* must be the spec's dtype: a second check that caller and program agree */
  int32_t rank;  /* must be the spec's rank */
  int64_t* dims; /* inputs: the extents (may be NULL when the spec has no symbolic extent);
                    outputs: NULL, or room for rank extents, which execute writes */
} evoxc_buffer;

/* The ABI version of the loaded library. */
int evoxc_abi_version(void);
/* EVOXC_OK when a program compiled against `header_abi_version` (pass EVOXC_ABI_VERSION) may use this library;
 * else EVOXC_ERROR_ABI with both versions in the message. */
evoxc_status evoxc_check_abi(int header_abi_version);
/* The library's release, "0.1.0". */
const char* evoxc_version(void);
/* The message of the last failed call on this thread ("" when none failed); valid until the thread's next
 * failing call. */
const char* evoxc_last_error(void);
/* "float32", ...; NULL for a value that is no evoxc_dtype. */
const char* evoxc_dtype_name(int32_t dtype);
/* Bytes per element of `dtype`; 0 for a value that is no evoxc_dtype. */
size_t evoxc_dtype_size(int32_t dtype);

/* Loads a .evoxcartifact (CompiledArtifact::save, evoxc.save in Python) onto `device` ("cpu", "cpu:1",
 * "cuda:0"; NULL for "cpu:0"). Nothing is recompiled: an artifact for another version, backend build, machine or
 * plugin is EVOXC_ERROR_PERSISTENCE. */
evoxc_status evoxc_executable_load(const char* path, const char* device, evoxc_executable** out);
/* The same from the bytes of such a file. */
evoxc_status evoxc_executable_load_bytes(const void* data, size_t size, const char* device, evoxc_executable** out);
/* Adds a reference and returns `exe`; NULL stays NULL. */
evoxc_executable* evoxc_executable_retain(evoxc_executable* exe);
/* Drops a reference; NULL is ignored. */
void evoxc_executable_release(evoxc_executable* exe);

/* The backend ("interp", "mlir", "xla") and the device ("cpu:0") it runs on; NULL for a NULL executable. */
const char* evoxc_executable_backend(const evoxc_executable* exe);
const char* evoxc_executable_device(const evoxc_executable* exe);
/* The number of tensor inputs and outputs, in the order execute takes them; 0 for a NULL executable. */
size_t evoxc_executable_num_inputs(const evoxc_executable* exe);
size_t evoxc_executable_num_outputs(const evoxc_executable* exe);
evoxc_status evoxc_executable_input_spec(const evoxc_executable* exe, size_t index, evoxc_tensor_spec* out);
evoxc_status evoxc_executable_output_spec(const evoxc_executable* exe, size_t index, evoxc_tensor_spec* out);

/* Runs the program: reads num_inputs buffers, writes num_outputs buffers. Every buffer is checked against its
 * spec before anything runs (EVOXC_ERROR_VALIDATION, naming the input or output). For an output with a
 * symbolic extent the result's extents go to its dims and its size must fit the capacity. After a failure the
 * outputs' contents are unspecified. Holds no lock of the caller's (Python extension modules call it with the
 * GIL released). */
evoxc_status evoxc_executable_execute(const evoxc_executable* exe, const evoxc_buffer* inputs, size_t num_inputs,
                                      evoxc_buffer* outputs, size_t num_outputs);

/* nbytes of memory aligned to 64 bytes (NULL when out of memory; nbytes 0 gives a freeable non-NULL pointer);
 * free it with evoxc_aligned_free. */
void* evoxc_aligned_alloc(size_t nbytes);
void evoxc_aligned_free(void* ptr);

#ifdef __cplusplus
}
#endif

#endif /* EVOXC_C_API_H_ */
