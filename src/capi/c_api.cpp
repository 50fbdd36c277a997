// The C ABI (include/evoxc/c_api.h) over the pipeline's Executable: every entry catches what the C++ library
// throws and turns it into a status code plus a per-thread message.
#include "evoxc/c_api.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "evoxc/capi/handle.h"
#include "evoxc/core/error.h"
#include "evoxc/core/small_vector.h"
#include "evoxc/core/tensor.h"
#include "evoxc/ir/graph.h"
#include "evoxc/pipeline/pipeline.h"

namespace {

using evoxc::DType;

// The ABI's dtype values are DType's, in the same order: checked here so that neither can move alone.
static_assert(static_cast<int>(DType::Bool) == EVOXC_BOOL && static_cast<int>(DType::I8) == EVOXC_INT8 &&
                  static_cast<int>(DType::I16) == EVOXC_INT16 && static_cast<int>(DType::I32) == EVOXC_INT32 &&
                  static_cast<int>(DType::I64) == EVOXC_INT64 && static_cast<int>(DType::U8) == EVOXC_UINT8 &&
                  static_cast<int>(DType::U16) == EVOXC_UINT16 && static_cast<int>(DType::U32) == EVOXC_UINT32 &&
                  static_cast<int>(DType::U64) == EVOXC_UINT64 && static_cast<int>(DType::F16) == EVOXC_FLOAT16 &&
                  static_cast<int>(DType::BF16) == EVOXC_BFLOAT16 && static_cast<int>(DType::F32) == EVOXC_FLOAT32 &&
                  static_cast<int>(DType::F64) == EVOXC_FLOAT64 && evoxc::kNumDTypes == EVOXC_FLOAT64 + 1,
              "evoxc_dtype must list DType's values in order");

bool valid_dtype(int32_t code) { return code >= 0 && code < evoxc::kNumDTypes; }

thread_local std::string last_error;

// One input's or output's spec, decided when the handle is made.
struct Spec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> dims;  // -1 where symbolic
  bool is_static = true;
  size_t nbytes = 0;  // when static
};

}  // namespace

struct evoxc_executable {
  std::atomic<int> refs{1};
  evoxc::Executable exe;
  evoxc::Device host;  // where the caller's buffers are said to live: the executable's cpu device
  std::string backend;
  std::string device;
  std::vector<Spec> inputs;
  std::vector<Spec> outputs;
};

namespace {

Spec spec_of(std::string name, const evoxc::TensorType& type) {
  Spec s;
  s.name = std::move(name);
  s.dtype = type.dtype;
  size_t elements = 1;
  for (const auto& d : type.shape.dims()) {
    if (d.is_const()) {
      s.dims.push_back(d.value());
      elements *= static_cast<size_t>(d.value());
    } else {
      s.dims.push_back(-1);
      s.is_static = false;
    }
  }
  s.nbytes = s.is_static ? elements * evoxc::size_of(s.dtype) : 0;
  return s;
}

void fill(const Spec& s, evoxc_tensor_spec* out) {
  out->name = s.name.c_str();
  out->dtype = static_cast<int32_t>(s.dtype);
  out->rank = static_cast<int32_t>(s.dims.size());
  out->dims = s.dims.data();
  out->itemsize = evoxc::size_of(s.dtype);
  out->nbytes = s.nbytes;
}

// Runs `body`, mapping what it throws to a status and the thread's message.
template <typename F>
evoxc_status guarded(F&& body) noexcept {
  try {
    body();
    return EVOXC_OK;
  } catch (const evoxc::ValidationError& e) {
    last_error = e.what();
    return EVOXC_ERROR_VALIDATION;
  } catch (const evoxc::PersistenceError& e) {
    last_error = e.what();
    return EVOXC_ERROR_PERSISTENCE;
  } catch (const evoxc::BackendError& e) {
    last_error = e.what();
    return EVOXC_ERROR_BACKEND;
  } catch (const evoxc::DeviceError& e) {
    last_error = e.what();
    return EVOXC_ERROR_DEVICE;
  } catch (const evoxc::RunLimitError& e) {
    last_error = e.what();
    return EVOXC_ERROR_RUN_LIMIT;
  } catch (const evoxc::InternalError& e) {
    last_error = e.what();
    return EVOXC_ERROR_INTERNAL;
  } catch (const evoxc::Error& e) {
    last_error = e.what();
    return EVOXC_ERROR_OTHER;
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
    return EVOXC_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    last_error = std::string("internal error (please report it): ") + e.what();
    return EVOXC_ERROR_INTERNAL;
  } catch (...) {
    last_error = "internal error (please report it): an unknown exception";
    return EVOXC_ERROR_INTERNAL;
  }
}

evoxc_status invalid(std::string message) {
  last_error = std::move(message);
  return EVOXC_ERROR_INVALID_ARGUMENT;
}

std::string dims_string(const int64_t* dims, size_t rank) {
  std::string s = "(";
  for (size_t i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (rank == 1 ? ",)" : ")");
}

// The extents of caller buffer `b` for `s`, checked against the spec; the size they need in bytes.
std::vector<int64_t> checked_extents(const Spec& s, const evoxc_buffer& b, const char* what, size_t index) {
  auto where = [&] { return std::string(what) + " " + std::to_string(index) + " (" + s.name + ")"; };
  if (b.dtype != static_cast<int32_t>(s.dtype))
    throw evoxc::ValidationError(
        where() + ": the buffer says dtype " +
        (valid_dtype(b.dtype) ? std::string(evoxc_dtype_name(b.dtype)) : "code " + std::to_string(b.dtype)) +
        ", the program takes " + std::string(evoxc::dtype_name(s.dtype)));
  if (b.rank != static_cast<int32_t>(s.dims.size()))
    throw evoxc::ValidationError(where() + ": the buffer has rank " + std::to_string(b.rank) + ", the program's is " +
                                 std::to_string(s.dims.size()));
  if (s.is_static && b.dims == nullptr) return s.dims;
  if (b.dims == nullptr)
    throw evoxc::ValidationError(where() + ": its extents " + dims_string(s.dims.data(), s.dims.size()) +
                                 " are symbolic (-1), so the buffer must give dims");
  for (size_t k = 0; k < s.dims.size(); ++k)
    if (b.dims[k] < 0 || (s.dims[k] >= 0 && b.dims[k] != s.dims[k]))
      throw evoxc::ValidationError(where() + ": the buffer's extents " + dims_string(b.dims, s.dims.size()) +
                                   " do not fit the program's " + dims_string(s.dims.data(), s.dims.size()) +
                                   " (-1: any extent)");
  return {b.dims, b.dims + s.dims.size()};
}

size_t bytes_of(const std::vector<int64_t>& dims, DType dtype) {
  return static_cast<size_t>(evoxc::shape_numel(dims)) * evoxc::size_of(dtype);
}

}  // namespace

namespace evoxc::capi {

evoxc_executable* make_handle(Executable exe) {
  const Graph& graph = exe.graph();  // ValidationError for an empty executable
  auto h = std::make_unique<evoxc_executable>();
  h->backend = exe.backend();
  h->device = exe.device().to_string();
  h->host = exe.device().kind == Device::Kind::Cpu ? exe.device() : Device::cpu();
  const auto in_paths = graph.input_paths();
  const auto& args = graph.main().entry().arguments();
  for (size_t i = 0; i < args.size(); ++i) h->inputs.push_back(spec_of(in_paths.at(i), args[i]->type()));
  const auto out_paths = graph.output_paths();
  const auto& results = graph.main().result_types();
  for (size_t i = 0; i < results.size(); ++i) h->outputs.push_back(spec_of(out_paths.at(i), results[i]));
  if (h->inputs.size() != exe.num_inputs() || h->outputs.size() != exe.num_outputs())
    throw InternalError("C ABI: the graph's signature and the executable disagree on the number of inputs/outputs");
  h->exe = std::move(exe);
  return h.release();
}

const Executable& executable(const evoxc_executable* handle) {
  if (handle == nullptr) throw ValidationError("the evoxc_executable is NULL");
  return handle->exe;
}

}  // namespace evoxc::capi

extern "C" {

int evoxc_abi_version(void) { return EVOXC_ABI_VERSION; }

evoxc_status evoxc_check_abi(int header_abi_version) {
  if (header_abi_version == EVOXC_ABI_VERSION) return EVOXC_OK;
  last_error = "this program was compiled against evoxc/c_api.h of ABI version " + std::to_string(header_abi_version) +
               ", but the loaded libevoxc has ABI version " + std::to_string(EVOXC_ABI_VERSION) +
               "; rebuild it against this library's headers";
  return EVOXC_ERROR_ABI;
}

const char* evoxc_version(void) { return EVOXC_VERSION; }

const char* evoxc_last_error(void) { return last_error.c_str(); }

const char* evoxc_dtype_name(int32_t dtype) {
  // dtype_name returns a view of a static string, so its data outlives the call.
  return valid_dtype(dtype) ? evoxc::dtype_name(static_cast<DType>(dtype)).data() : nullptr;
}

size_t evoxc_dtype_size(int32_t dtype) { return valid_dtype(dtype) ? evoxc::size_of(static_cast<DType>(dtype)) : 0; }

static evoxc_status load_with(const char* device, evoxc_executable** out,
                              evoxc::CompiledArtifact (*read)(const void*, size_t), const void* a, size_t b) {
  if (out == nullptr) return invalid("evoxc_executable_load: out is NULL");
  *out = nullptr;
  evoxc::Device dev = evoxc::Device::cpu();
  if (device != nullptr) {
    try {
      dev = evoxc::Device::parse(device);
    } catch (const evoxc::Error& e) {
      return invalid(e.what());
    }
  }
  return guarded([&] { *out = evoxc::capi::make_handle(evoxc::load(read(a, b), dev)); });
}

evoxc_status evoxc_executable_load(const char* path, const char* device, evoxc_executable** out) {
  if (path == nullptr) return invalid("evoxc_executable_load: path is NULL");
  return load_with(
      device, out, [](const void* p, size_t) { return evoxc::CompiledArtifact::load(static_cast<const char*>(p)); },
      path, 0);
}

evoxc_status evoxc_executable_load_bytes(const void* data, size_t size, const char* device, evoxc_executable** out) {
  if (data == nullptr && size > 0) return invalid("evoxc_executable_load_bytes: data is NULL");
  return load_with(
      device, out,
      [](const void* p, size_t n) {
        return evoxc::CompiledArtifact::from_bytes(std::string_view(static_cast<const char*>(p), n));
      },
      data == nullptr ? "" : data, size);
}

evoxc_executable* evoxc_executable_retain(evoxc_executable* exe) {
  if (exe != nullptr) exe->refs.fetch_add(1, std::memory_order_relaxed);
  return exe;
}

void evoxc_executable_release(evoxc_executable* exe) {
  if (exe != nullptr && exe->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete exe;
}

const char* evoxc_executable_backend(const evoxc_executable* exe) {
  return exe == nullptr ? nullptr : exe->backend.c_str();
}
const char* evoxc_executable_device(const evoxc_executable* exe) {
  return exe == nullptr ? nullptr : exe->device.c_str();
}
size_t evoxc_executable_num_inputs(const evoxc_executable* exe) { return exe == nullptr ? 0 : exe->inputs.size(); }
size_t evoxc_executable_num_outputs(const evoxc_executable* exe) { return exe == nullptr ? 0 : exe->outputs.size(); }

static evoxc_status spec_at(const evoxc_executable* exe, const std::vector<Spec> evoxc_executable::*specs,
                            const char* what, size_t index, evoxc_tensor_spec* out) {
  if (exe == nullptr) return invalid(std::string("evoxc_executable_") + what + "_spec: the executable is NULL");
  if (out == nullptr) return invalid(std::string("evoxc_executable_") + what + "_spec: out is NULL");
  const auto& list = exe->*specs;
  if (index >= list.size())
    return invalid(std::string("evoxc_executable_") + what + "_spec: index " + std::to_string(index) +
                   " is out of range for " + std::to_string(list.size()) + " " + what + "s");
  fill(list[index], out);
  return EVOXC_OK;
}

evoxc_status evoxc_executable_input_spec(const evoxc_executable* exe, size_t index, evoxc_tensor_spec* out) {
  return spec_at(exe, &evoxc_executable::inputs, "input", index, out);
}
evoxc_status evoxc_executable_output_spec(const evoxc_executable* exe, size_t index, evoxc_tensor_spec* out) {
  return spec_at(exe, &evoxc_executable::outputs, "output", index, out);
}

evoxc_status evoxc_executable_execute(const evoxc_executable* exe, const evoxc_buffer* inputs, size_t num_inputs,
                                      evoxc_buffer* outputs, size_t num_outputs) {
  if (exe == nullptr) return invalid("evoxc_executable_execute: the executable is NULL");
  if (num_inputs > 0 && inputs == nullptr) return invalid("evoxc_executable_execute: inputs is NULL");
  if (num_outputs > 0 && outputs == nullptr) return invalid("evoxc_executable_execute: outputs is NULL");
  return guarded([&] {
    if (num_inputs != exe->inputs.size() || num_outputs != exe->outputs.size())
      throw evoxc::ValidationError("execute: the program takes " + std::to_string(exe->inputs.size()) +
                                   " inputs and gives " + std::to_string(exe->outputs.size()) + " outputs; got " +
                                   std::to_string(num_inputs) + " input and " + std::to_string(num_outputs) +
                                   " output buffers");
    evoxc::SmallVector<evoxc::Tensor, 8> in;
    evoxc::SmallVector<evoxc::Tensor, 8> out;
    in.resize(num_inputs);
    out.resize(num_outputs);
    for (size_t i = 0; i < num_inputs; ++i) {
      const Spec& s = exe->inputs[i];
      const evoxc_buffer& b = inputs[i];
      std::vector<int64_t> dims = checked_extents(s, b, "input", i);
      const size_t need = s.is_static ? s.nbytes : bytes_of(dims, s.dtype);
      if (b.nbytes != need)
        throw evoxc::ValidationError("input " + std::to_string(i) + " (" + s.name + "): the buffer has " +
                                     std::to_string(b.nbytes) + " bytes, the tensor " + std::to_string(need));
      if (b.data == nullptr && need > 0)
        throw evoxc::ValidationError("input " + std::to_string(i) + " (" + s.name + "): data is NULL");
      in[i] = evoxc::Tensor::borrow(b.data, std::move(dims), s.dtype, exe->host);
    }
    for (size_t i = 0; i < num_outputs; ++i) {
      const Spec& s = exe->outputs[i];
      evoxc_buffer& b = outputs[i];
      if (b.dtype != static_cast<int32_t>(s.dtype) || b.rank != static_cast<int32_t>(s.dims.size()))
        checked_extents(s, b, "output", i);  // says which
      if (!s.is_static) continue;            // allocated by the run, copied below
      if (b.nbytes < s.nbytes)
        throw evoxc::ValidationError("output " + std::to_string(i) + " (" + s.name + "): the buffer holds " +
                                     std::to_string(b.nbytes) + " bytes, the result needs " + std::to_string(s.nbytes));
      if (b.data == nullptr && s.nbytes > 0)
        throw evoxc::ValidationError("output " + std::to_string(i) + " (" + s.name + "): data is NULL");
      out[i] = evoxc::Tensor::borrow(b.data, s.dims, s.dtype, exe->host);
    }
    exe->exe.execute(std::span<const evoxc::Tensor>(in.data(), in.size()),
                     std::span<evoxc::Tensor>(out.data(), out.size()));
    for (size_t i = 0; i < num_outputs; ++i) {
      const Spec& s = exe->outputs[i];
      evoxc_buffer& b = outputs[i];
      const evoxc::Tensor& t = out[i];
      if (t.nbytes() > b.nbytes)
        throw evoxc::ValidationError("output " + std::to_string(i) + " (" + s.name + "): the result " +
                                     dims_string(t.shape().data(), t.rank()) + " needs " + std::to_string(t.nbytes()) +
                                     " bytes, the buffer holds " + std::to_string(b.nbytes));
      if (b.data == nullptr && t.nbytes() > 0)
        throw evoxc::ValidationError("output " + std::to_string(i) + " (" + s.name + "): data is NULL");
      // A backend may hand back its own buffer instead of writing the caller's (an output aliasing an input, a
      // symbolic extent): then the values are copied into the caller's buffer.
      if (t.nbytes() > 0 && t.raw_data() != b.data) std::memcpy(b.data, t.raw_data(), t.nbytes());
      if (b.dims != nullptr)
        for (size_t k = 0; k < t.rank(); ++k) b.dims[k] = t.shape()[k];
    }
  });
}

void* evoxc_aligned_alloc(size_t nbytes) {
  const size_t rounded = (nbytes + 63) / 64 * 64;
  return std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
}

void evoxc_aligned_free(void* ptr) { std::free(ptr); }

}  // extern "C"
