// Device: where a tensor's storage physically lives (cpu, cuda, rocm/hip, vulkan; with an index).
#pragma once

#include <string>
#include <string_view>

namespace evoxc {

struct Device {
  enum class Kind : uint8_t { Cpu, Cuda, Rocm, Vulkan };
  Kind kind = Kind::Cpu;
  int index = 0;

  constexpr Device() = default;
  constexpr Device(Kind k, int i) : kind(k), index(i) {}
  static constexpr Device cpu(int index = 0) { return {Kind::Cpu, index}; }
  static constexpr Device cuda(int index = 0) { return {Kind::Cuda, index}; }
  static constexpr Device rocm(int index = 0) { return {Kind::Rocm, index}; }
  static constexpr Device vulkan(int index = 0) { return {Kind::Vulkan, index}; }
  // Parses "cpu", "cuda:1", "rocm", "hip:0" (hip is an alias of rocm), "vulkan".
  // ValidationError on anything else.
  static Device parse(std::string_view text);

  std::string_view kind_name() const;
  // "cpu:0"
  std::string to_string() const;
  // "Device(kind='cpu', index=0)", the form the seed prints.
  std::string repr() const;
  friend bool operator==(const Device& a, const Device& b) { return a.kind == b.kind && a.index == b.index; }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }
};

}  // namespace evoxc
