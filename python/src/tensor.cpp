// Bindings of Tensor: host tensors, zero-copy numpy views both ways, DLPack, and the host creation functions.
#include <nanobind/ndarray.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bind.h"

namespace evoxc::py {

namespace {

nb::dlpack::dtype dl_dtype(DType t) {
  using nb::dlpack::dtype_code;
  auto code = is_bool(t)         ? dtype_code::Bool
              : is_float(t)      ? (t == DType::BF16 ? dtype_code::Bfloat : dtype_code::Float)
              : is_signed_int(t) ? dtype_code::Int
                                 : dtype_code::UInt;
  return nb::dlpack::dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(is_bool(t) ? 8 : bit_width(t)), 1};
}

DType from_dl_dtype(const nb::dlpack::dtype& d) {
  using nb::dlpack::dtype_code;
  auto code = static_cast<dtype_code>(d.code);
  if (d.lanes != 1) throw evoxc::TypeError("vector (lanes > 1) DLPack dtypes are not supported");
  switch (code) {
    case dtype_code::Bool: return DType::Bool;
    case dtype_code::Bfloat:
      if (d.bits == 16) return DType::BF16;
      break;
    case dtype_code::Float:
      if (d.bits == 16) return DType::F16;
      if (d.bits == 32) return DType::F32;
      if (d.bits == 64) return DType::F64;
      break;
    case dtype_code::Int:
      if (d.bits == 8) return DType::I8;
      if (d.bits == 16) return DType::I16;
      if (d.bits == 32) return DType::I32;
      if (d.bits == 64) return DType::I64;
      break;
    case dtype_code::UInt:
      if (d.bits == 8) return DType::U8;
      if (d.bits == 16) return DType::U16;
      if (d.bits == 32) return DType::U32;
      if (d.bits == 64) return DType::U64;
      break;
    default: break;
  }
  throw evoxc::TypeError("evoxc has no dtype for DLPack type code " + std::to_string(d.code) + " with " +
                         std::to_string(d.bits) + " bits");
}

// The tensor's storage as a numpy array viewing it (no copy; the array also exports DLPack);
// the buffer stays alive while the array does.
nb::ndarray<nb::numpy> as_ndarray(const Tensor& t) {
  if (!t.defined()) throw ValidationError("an undefined Tensor has no data");
  if (t.device().kind != Device::Kind::Cpu)
    throw DeviceError("Tensor on " + t.device().to_string() +
                      " has no host data: use .to(evoxc.Device('cpu', 0)) first");
  auto* keep = new std::shared_ptr<Buffer>(t.buffer());
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<Buffer>*>(p); });
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  return nb::ndarray<nb::numpy>(t.raw_data(), shape.size(), shape.data(), owner, nullptr, dl_dtype(t.dtype()),
                                nb::device::cpu::value, 0);
}

// A Tensor viewing the memory of an ndarray imported from numpy or DLPack (no copy). The
// array is kept alive until the last Tensor using the memory dies. Non-contiguous or
// misaligned arrays are a ValidationError here: the Python layer copies those first.
Tensor from_ndarray(const nb::ndarray<nb::ro>& a) {
  if (a.device_type() != nb::device::cpu::value)
    throw DeviceError("evoxc.from_dlpack: only cpu tensors can be imported in this build (got device type " +
                      std::to_string(a.device_type()) + ")");
  DType dt = from_dl_dtype(a.dtype());
  std::vector<int64_t> shape(a.ndim());
  int64_t expect = 1;
  bool contiguous = true;
  for (size_t i = a.ndim(); i-- > 0;) {
    shape[i] = static_cast<int64_t>(a.shape(i));
    if (a.shape(i) != 1 && a.stride(i) != expect) contiguous = false;
    expect *= static_cast<int64_t>(a.shape(i));
  }
  auto addr = reinterpret_cast<uintptr_t>(a.data());
  if (expect == 0) return Tensor::empty(std::move(shape), dt);  // no data to share (and any strides)
  if (!contiguous) throw ValidationError("array is not C-contiguous");
  if (addr % size_of(dt) != 0) throw ValidationError("array data is not aligned to its element size");
  auto* keep = new nb::ndarray<nb::ro>(a);
  return Tensor::adopt(const_cast<void*>(a.data()), std::move(shape), dt, [keep](void*) {
    // The last Tensor may die on a thread without the GIL (an executable's worker).
    if (!Py_IsInitialized()) return;  // interpreter gone: leak rather than crash
    nb::gil_scoped_acquire gil;
    delete keep;
  });
}

std::vector<int64_t> int_shape(nb::handle shape) {
  std::vector<int64_t> out;
  if (PyLong_Check(shape.ptr())) {
    out.push_back(nb::cast<int64_t>(shape));
    return out;
  }
  for (nb::handle h : nb::borrow<nb::sequence>(shape)) out.push_back(nb::cast<int64_t>(h));
  return out;
}

}  // namespace

void bind_tensor(nb::module_& m) {
  nb::class_<Tensor>(m, "Tensor",
                     "A materialised runtime tensor: concrete shape, dtype and physical device. It has storage and "
                     "no math: arithmetic exists only on SymbolicTensors inside a trace.")
      .def_prop_ro("shape",
                   [](const Tensor& t) {
                     nb::tuple s = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(t.rank())));
                     for (size_t i = 0; i < t.rank(); ++i)
                       PyTuple_SET_ITEM(s.ptr(), static_cast<Py_ssize_t>(i), PyLong_FromLongLong(t.shape()[i]));
                     return s;
                   })
      .def_prop_ro("dtype", &Tensor::dtype)
      .def_prop_ro("device", &Tensor::device)
      .def_prop_ro("ndim", &Tensor::rank)
      .def_prop_ro("size", &Tensor::numel)
      .def_prop_ro("nbytes", &Tensor::nbytes)
      .def("to", &Tensor::to, nb::arg("device"), nb::call_guard<nb::gil_scoped_release>(),
           "The only transfer primitive: a copy of this tensor on `device`, complete when it returns. cpu:0 is the "
           "host (cpu -> cpu copies); other devices are the xla backend's PJRT plugin's (its CPU devices 1.. and its "
           "GPUs); DeviceError when nothing serves `device`, saying why. evoxc.io.prefetch/sink run it in the "
           "background.")
      .def("clone", &Tensor::clone)
      .def(
          "reshape", [](const Tensor& t, nb::handle shape) { return t.reshaped(int_shape(shape)); }, nb::arg("shape"),
          "The same storage with a new shape of the same size.")
      .def("_ndarray", &as_ndarray, "The storage as a DLPack/buffer-protocol array (no copy).")
      .def("__repr__", &Tensor::repr)
      .def("__str__", &Tensor::to_string)
      .def("__len__",
           [](const Tensor& t) {
             if (t.rank() == 0) throw evoxc::TypeError("len() of a rank-0 Tensor");
             return t.shape()[0];
           })
      .def("__bool__", [](const Tensor&) -> bool {
        throw evoxc::TypeError(
            "the truth value of an evoxc.Tensor is not defined: a Tensor has no math; use .numpy() to inspect it on "
            "the host");
      });
  m.def("_tensor_from_array", &from_ndarray, nb::arg("array"),
        "A Tensor viewing a C-contiguous, aligned numpy/DLPack cpu array without copying.");
  m.def(
      "zeros", [](nb::handle shape, DType dtype) { return Tensor::zeros(int_shape(shape), dtype); }, nb::arg("shape"),
      nb::arg("dtype") = kDefaultFloat, "A host Tensor of zeros (float32 unless a dtype is given).");
  m.def(
      "ones", [](nb::handle shape, DType dtype) { return Tensor::full(int_shape(shape), 1.0, dtype); },
      nb::arg("shape"), nb::arg("dtype") = kDefaultFloat, "A host Tensor of ones (float32 unless a dtype is given).");
  m.def(
      "full", [](nb::handle shape, double value, DType dtype) { return Tensor::full(int_shape(shape), value, dtype); },
      nb::arg("shape"), nb::arg("fill_value"), nb::arg("dtype") = kDefaultFloat, "A host Tensor filled with a value.");
  m.def(
      "empty", [](nb::handle shape, DType dtype) { return Tensor::empty(int_shape(shape), dtype); }, nb::arg("shape"),
      nb::arg("dtype") = kDefaultFloat, "A host Tensor with unspecified contents.");
}

}  // namespace evoxc::py
