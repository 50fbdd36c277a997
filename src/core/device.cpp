// Device parsing and printing.
#include "evoxc/core/device.h"

#include <charconv>
#include <string>

#include "evoxc/core/error.h"

namespace evoxc {

Device Device::parse(std::string_view text) {
  std::string_view kind = text;
  int index = 0;
  if (auto colon = text.find(':'); colon != std::string_view::npos) {
    kind = text.substr(0, colon);
    std::string_view idx = text.substr(colon + 1);
    auto [p, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), index);
    if (ec != std::errc() || p != idx.data() + idx.size() || index < 0)
      throw ValidationError("Device: bad index in '" + std::string(text) + "' (expected e.g. cuda:0)");
  }
  if (kind == "cpu") return {Kind::Cpu, index};
  if (kind == "cuda") return {Kind::Cuda, index};
  if (kind == "rocm" || kind == "hip") return {Kind::Rocm, index};
  if (kind == "vulkan") return {Kind::Vulkan, index};
  throw ValidationError("Device: unknown kind '" + std::string(kind) + "' (expected cpu, cuda, rocm, hip or vulkan)");
}

std::string_view Device::kind_name() const {
  switch (kind) {
    case Kind::Cpu: return "cpu";
    case Kind::Cuda: return "cuda";
    case Kind::Rocm: return "rocm";
    case Kind::Vulkan: return "vulkan";
  }
  return "?";
}

std::string Device::to_string() const { return std::string(kind_name()) + ":" + std::to_string(index); }
std::string Device::repr() const {
  return "Device(kind='" + std::string(kind_name()) + "', index=" + std::to_string(index) + ")";
}

}  // namespace evoxc
