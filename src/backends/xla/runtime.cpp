// The PJRT plugin's buffers as evoxc tensors: the xla device runtime behind Tensor::to, and the wrapping of buffers.
#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "backends/xla/pjrt.h"
#include "evoxc/core/error.h"

namespace evoxc::xla_backend {
namespace {

// PJRT's element type of each DType, indexed by the DType's value.
constexpr std::array<PJRT_Buffer_Type, kNumDTypes> kElementTypes = {
    PJRT_Buffer_Type_PRED, PJRT_Buffer_Type_S8,  PJRT_Buffer_Type_S16, PJRT_Buffer_Type_S32, PJRT_Buffer_Type_S64,
    PJRT_Buffer_Type_U8,   PJRT_Buffer_Type_U16, PJRT_Buffer_Type_U32, PJRT_Buffer_Type_U64, PJRT_Buffer_Type_F16,
    PJRT_Buffer_Type_BF16, PJRT_Buffer_Type_F32, PJRT_Buffer_Type_F64};
static_assert(static_cast<int>(DType::F64) == kNumDTypes - 1, "kElementTypes follows DType's order");

size_t bytes_of(const std::vector<int64_t>& shape, DType dtype) {
  size_t n = size_of(dtype);
  for (int64_t e : shape) n *= static_cast<size_t>(e);
  return n;
}

// Host memory for a tensor labelled `device` (a cpu device): evoxc's own allocation on the host itself.
Tensor host_tensor(std::vector<int64_t> shape, DType dtype, Device device) {
  if (device == Device::cpu()) return Tensor::empty(std::move(shape), dtype);
  size_t bytes = (bytes_of(shape, dtype) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes ? bytes : 64);
  if (!p) throw ValidationError("xla: cannot allocate " + std::to_string(bytes) + " bytes on the host");
  return Tensor::adopt(
      p, std::move(shape), dtype, [](void* q) { std::free(q); }, device);
}

Device::Kind kind_of(const std::string& platform) {
  if (platform == "cuda") return Device::Kind::Cuda;
  if (platform == "rocm") return Device::Kind::Rocm;
  return Device::Kind::Cpu;
}

// The PJRT platform of a device kind: what a first use on such a device asks discovery for.
std::string_view platform_of(Device::Kind kind) {
  switch (kind) {
    case Device::Kind::Cuda: return "cuda";
    case Device::Kind::Rocm: return "rocm";
    default: return "cpu";
  }
}

class XlaRuntime final : public DeviceRuntime {
 public:
  std::string_view name() const override { return "xla"; }

  bool serves(Device device, std::string* why) const override {
    try {
      const Plugin& p = Plugin::get(platform_of(device.kind));
      if (kind_of(p.info().platform) != device.kind) {
        *why = "this process's PJRT plugin is for " + p.info().platform + " devices";
        return false;
      }
      if (device.index >= p.num_devices()) {
        *why = "the plugin's client has " + std::to_string(p.num_devices()) + " device(s)" +
               (device.kind == Device::Kind::Cpu ? " (the CPU plugin's client option cpu_device_count sets how many)"
                                                 : "");
        return false;
      }
      return true;
    } catch (const Error& e) {
      *why = e.what();
      return false;
    }
  }

  std::vector<Device> devices() const override {
    std::vector<Device> out;
    try {
      const Plugin& p = Plugin::get();
      for (int i = 0; i < p.num_devices(); ++i) out.push_back(device_of(p, i));
    } catch (const Error&) {  // no plugin: no devices (evoxc devices says why)
    }
    return out;
  }

  Tensor transfer(const Tensor& t, Device to) const override {
    const Plugin& p = Plugin::get();
    auto* source = static_cast<PJRT_Buffer*>(t.buffer()->handle(this));
    if (to == Device::cpu()) {
      if (!source) return t.clone();
      return copy_to_host(p, source, t.shape(), t.dtype(), to, "copy to the host", -1);
    }
    std::string why;
    if (!serves(to, &why)) throw DeviceError("xla: cannot place a tensor on " + to.to_string() + ": " + why);
    PJRT_Device* target = p.device(to.index);
    const PJRT_Api* api = p.api();
    if (source) {
      auto c = args<PJRT_Buffer_CopyToDevice_Args>(PJRT_Buffer_CopyToDevice_Args_STRUCT_SIZE);
      c.buffer = source;
      c.dst_device = target;
      p.check(api->PJRT_Buffer_CopyToDevice(&c), "copy to a device");
      return adopt(p, c.dst_buffer, t, to);
    }
    auto b = args<PJRT_Client_BufferFromHostBuffer_Args>(PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE);
    static const int64_t kEmpty = 0;  // a zero-size tensor may have no storage; PJRT wants a pointer
    b.client = p.client();
    b.data = t.numel() ? t.raw_data() : &kEmpty;
    b.type = element_type(t.dtype());
    b.dims = t.shape().data();
    b.num_dims = t.rank();
    b.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;  // a copy: `t` may change next
    b.device = target;
    p.check(api->PJRT_Client_BufferFromHostBuffer(&b), "copy to a device");
    try {
      p.await(b.done_with_host_buffer, "copy to a device", -1);
    } catch (...) {
      p.destroy(b.buffer);
      throw;
    }
    return adopt(p, b.buffer, t, to);
  }

 private:
  // The copy's buffer as a tensor, complete: on a CPU platform host_address waits for it; elsewhere its ready event.
  static Tensor adopt(const Plugin& p, PJRT_Buffer* buffer, const Tensor& like, Device to) {
    void* address = nullptr;
    try {
      if (p.host_memory()) {
        address = host_address(p, buffer, "copy to a device", -1);
      } else {
        auto ready = args<PJRT_Buffer_ReadyEvent_Args>(PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE);
        ready.buffer = buffer;
        p.check(p.api()->PJRT_Buffer_ReadyEvent(&ready), "copy to a device");
        p.await(ready.event, "copy to a device");
      }
    } catch (...) {
      p.destroy(buffer);
      throw;
    }
    return adopt_buffer(p, buffer, like.shape(), like.dtype(), to, address);
  }
};

const XlaRuntime kRuntime;
[[maybe_unused]] const bool registered = [] {
  for (Device::Kind k : {Device::Kind::Cpu, Device::Kind::Cuda, Device::Kind::Rocm})
    register_device_runtime(k, &kRuntime);
  return true;
}();

}  // namespace

const DeviceRuntime* runtime() { return &kRuntime; }

Device device_of(const Plugin& p, int index) { return {kind_of(p.info().platform), index}; }

PJRT_Buffer_Type element_type(DType dtype) { return kElementTypes[static_cast<size_t>(dtype)]; }

void* host_address(const Plugin& p, PJRT_Buffer* buffer, std::string_view what, int64_t index) {
  if (!p.host_memory()) return nullptr;
  const PJRT_Api* api = p.api();
  auto l = args<PJRT_Buffer_GetMemoryLayout_Args>(PJRT_Buffer_GetMemoryLayout_Args_STRUCT_SIZE);
  l.buffer = buffer;
  if (PJRT_Error* e = api->PJRT_Buffer_GetMemoryLayout(&l)) {
    p.discard(e);  // no layout to read: the buffer is copied instead
    return nullptr;
  }
  if (l.layout.type != PJRT_Buffer_MemoryLayout_Type_Tiled || l.layout.tiled.num_tiles != 0) return nullptr;
  size_t r = l.layout.tiled.minor_to_major_size;
  for (size_t k = 0; k < r; ++k)
    if (l.layout.tiled.minor_to_major[k] != static_cast<int64_t>(r - 1 - k)) return nullptr;
  auto ready = args<PJRT_Buffer_ReadyEvent_Args>(PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE);
  ready.buffer = buffer;
  p.check(api->PJRT_Buffer_ReadyEvent(&ready), what, index);
  p.await(ready.event, what, index);
  auto ptr =
      args<PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args>(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args_STRUCT_SIZE);
  ptr.buffer = buffer;
  p.check(api->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&ptr), what, index);
  return ptr.device_memory_ptr;
}

Tensor adopt_buffer(const Plugin& p, PJRT_Buffer* buffer, std::vector<int64_t> shape, DType dtype, Device device,
                    void* address) {
  size_t bytes = bytes_of(shape, dtype);
  if (!address && p.host_memory()) {
    Tensor t;
    try {
      t = copy_to_host(p, buffer, std::move(shape), dtype, device, "output", -1);
    } catch (...) {
      p.destroy(buffer);
      throw;
    }
    p.destroy(buffer);
    return t;
  }
  const Plugin* plugin = &p;
  return Tensor::from_buffer(Buffer::wrap_device(address, bytes, device, runtime(), buffer,
                                                 [plugin, buffer](void*) { plugin->destroy(buffer); }),
                             std::move(shape), dtype);
}

Tensor copy_to_host(const Plugin& p, PJRT_Buffer* buffer, std::vector<int64_t> shape, DType dtype, Device device,
                    std::string_view what, int64_t index) {
  Tensor out = host_tensor(std::move(shape), dtype, device);
  if (out.nbytes() == 0) return out;
  // evoxc's layout asked for explicitly: without it the copy keeps the device's.
  std::array<int64_t, 64> minor_to_major{};
  if (out.rank() > minor_to_major.size()) throw BackendError("xla: a tensor of rank above 64");
  for (size_t k = 0; k < out.rank(); ++k) minor_to_major[k] = static_cast<int64_t>(out.rank() - 1 - k);
  auto layout = args<PJRT_Buffer_MemoryLayout>(PJRT_Buffer_MemoryLayout_STRUCT_SIZE);
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled = args<PJRT_Buffer_MemoryLayout_Tiled>(PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE);
  layout.tiled.minor_to_major = minor_to_major.data();
  layout.tiled.minor_to_major_size = out.rank();
  auto copy = args<PJRT_Buffer_ToHostBuffer_Args>(PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE);
  copy.src = buffer;
  copy.host_layout = &layout;
  copy.dst = out.raw_data();
  copy.dst_size = out.nbytes();
  p.check(p.api()->PJRT_Buffer_ToHostBuffer(&copy), what, index);
  p.await(copy.event, what, index);
  return out;
}

}  // namespace evoxc::xla_backend
