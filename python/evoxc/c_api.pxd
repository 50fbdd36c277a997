# Cython declarations of evoxc's C ABI (evoxc/c_api.h), for extension modules: `from evoxc.c_api cimport *` (the
# header comes from evoxc.get_include(); link evoxc.get_library()). Every function takes no GIL.
from libc.stdint cimport int32_t, int64_t

cdef extern from "evoxc/c_api.h" nogil:
    enum: EVOXC_ABI_VERSION

    ctypedef enum evoxc_status:
        EVOXC_OK
        EVOXC_ERROR_INVALID_ARGUMENT
        EVOXC_ERROR_VALIDATION
        EVOXC_ERROR_PERSISTENCE
        EVOXC_ERROR_BACKEND
        EVOXC_ERROR_DEVICE
        EVOXC_ERROR_RUN_LIMIT
        EVOXC_ERROR_ABI
        EVOXC_ERROR_OUT_OF_MEMORY
        EVOXC_ERROR_INTERNAL
        EVOXC_ERROR_OTHER

    ctypedef enum evoxc_dtype:
        EVOXC_BOOL
        EVOXC_INT8
        EVOXC_INT16
        EVOXC_INT32
        EVOXC_INT64
        EVOXC_UINT8
        EVOXC_UINT16
        EVOXC_UINT32
        EVOXC_UINT64
        EVOXC_FLOAT16
        EVOXC_BFLOAT16
        EVOXC_FLOAT32
        EVOXC_FLOAT64

    ctypedef struct evoxc_executable:
        pass

    ctypedef struct evoxc_tensor_spec:
        const char* name
        int32_t dtype
        int32_t rank
        const int64_t* dims
        size_t itemsize
        size_t nbytes

    ctypedef struct evoxc_buffer:
        void* data
        size_t nbytes
        int32_t dtype
        int32_t rank
        int64_t* dims

    int evoxc_abi_version()
    evoxc_status evoxc_check_abi(int header_abi_version)
    const char* evoxc_version()
    const char* evoxc_last_error()
    const char* evoxc_dtype_name(int32_t dtype)
    size_t evoxc_dtype_size(int32_t dtype)

    evoxc_status evoxc_executable_load(const char* path, const char* device, evoxc_executable** out)
    evoxc_status evoxc_executable_load_bytes(const void* data, size_t size, const char* device,
                                             evoxc_executable** out)
    evoxc_executable* evoxc_executable_retain(evoxc_executable* exe)
    void evoxc_executable_release(evoxc_executable* exe)

    const char* evoxc_executable_backend(const evoxc_executable* exe)
    const char* evoxc_executable_device(const evoxc_executable* exe)
    size_t evoxc_executable_num_inputs(const evoxc_executable* exe)
    size_t evoxc_executable_num_outputs(const evoxc_executable* exe)
    evoxc_status evoxc_executable_input_spec(const evoxc_executable* exe, size_t index, evoxc_tensor_spec* out)
    evoxc_status evoxc_executable_output_spec(const evoxc_executable* exe, size_t index, evoxc_tensor_spec* out)

    evoxc_status evoxc_executable_execute(const evoxc_executable* exe, const evoxc_buffer* inputs, size_t num_inputs,
                                          evoxc_buffer* outputs, size_t num_outputs)

    void* evoxc_aligned_alloc(size_t nbytes)
    void evoxc_aligned_free(void* ptr)
