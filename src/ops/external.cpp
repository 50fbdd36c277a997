// The registry of external kernels and the one place that walks an external_call's batch levels
// (include/evoxc/ops/external.h): every backend that calls host kernels goes through call_external_kernel.
#include "evoxc/ops/external.h"

#include <algorithm>
#include <exception>
#include <map>
#include <mutex>

#include "evoxc/core/error.h"
#include "evoxc/ops/op_def.h"
#include "ir/ir_text.h"

namespace evoxc {

int64_t ExternalBuffer::numel() const {
  int64_t n = 1;
  for (int64_t i = 0; i < rank; ++i) n *= shape[i];
  return n;
}

namespace {

struct Entry {
  std::shared_ptr<const ExternalKernel> kernel, batched;
};

struct Registry {
  std::mutex mu;
  std::map<std::pair<std::string, std::string>, Entry, std::less<>> kernels;  // (name, slot)
};

Registry& registry() {
  static Registry r;
  return r;
}

void check_name(const std::string& name, const char* fn) {
  if (name.empty()) throw ValidationError(std::string(fn) + ": the kernel's name must not be empty");
}

}  // namespace

void register_external_kernel(const std::string& name, ExternalKernel kernel, const std::string& slot) {
  check_name(name, "register_external_kernel");
  if (!kernel) throw ValidationError("register_external_kernel: no implementation given for kernel '" + name + "'");
  if (slot.empty()) throw ValidationError("register_external_kernel: kernel '" + name + "': the slot is empty");
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  r.kernels[{name, slot}] = Entry{std::make_shared<const ExternalKernel>(std::move(kernel)), nullptr};
}

void register_external_batch_variant(const std::string& name, ExternalKernel kernel, const std::string& slot) {
  check_name(name, "register_external_batch_variant");
  if (!kernel) throw ValidationError("register_external_batch_variant: no implementation given for '" + name + "'");
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = r.kernels.find(std::pair<std::string, std::string>(name, slot));
  if (it == r.kernels.end() || !it->second.kernel)
    throw ValidationError("register_external_batch_variant: kernel '" + name + "' has no implementation in slot '" +
                          slot + "' to be the batch variant of; register the kernel first");
  it->second.batched = std::make_shared<const ExternalKernel>(std::move(kernel));
}

bool unregister_external_kernel(const std::string& name, const std::string& slot) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  return r.kernels.erase({name, slot}) != 0;
}

ExternalKernel tensor_kernel(ExternalTensorKernel kernel) {
  if (!kernel) return {};
  return [k = std::move(kernel)](std::span<const ExternalBuffer> in, std::span<ExternalBuffer> out) {
    auto view = [](const ExternalBuffer& b) {
      return Tensor::borrow(b.data, std::vector<int64_t>(b.shape, b.shape + b.rank), b.dtype);
    };
    std::vector<Tensor> ins, outs;
    ins.reserve(in.size());
    outs.reserve(out.size());
    for (const ExternalBuffer& b : in) ins.push_back(view(b));
    for (const ExternalBuffer& b : out) outs.push_back(view(b));
    k(ins, outs);
  };
}

ExternalKernel c_kernel(ExternalCKernel fn, void* user) {
  if (!fn) return {};
  return [fn, user](std::span<const ExternalBuffer> in, std::span<ExternalBuffer> out) {
    fn(user, in.data(), static_cast<int64_t>(in.size()), out.data(), static_cast<int64_t>(out.size()));
  };
}

std::optional<ResolvedKernel> resolve_external_kernel(std::string_view name, std::string_view backend) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  for (std::string_view slot : {backend, kDefaultKernelSlot}) {
    auto it = r.kernels.find(std::pair<std::string, std::string>(name, slot));
    if (it != r.kernels.end() && it->second.kernel)
      return ResolvedKernel{it->second.kernel, it->second.batched, std::string(slot)};
  }
  return std::nullopt;
}

ResolvedKernel require_external_kernel(std::string_view name, std::string_view backend) {
  if (auto k = resolve_external_kernel(name, backend)) return *std::move(k);
  throw BackendError("external_call: no kernel '" + std::string(name) + "' is registered for backend '" +
                     std::string(backend) +
                     "' or in the default slot; a graph carries only the kernel's name, so register it "
                     "(evoxc.register_external_kernel / evoxc::register_external_kernel) before loading");
}

std::vector<std::pair<std::string, std::string>> registered_external_kernels() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, v] : r.kernels) out.push_back(k);
  return out;
}

namespace {

void invoke(const ExternalKernel& k, std::string_view name, std::span<const ExternalBuffer> in,
            std::span<ExternalBuffer> out) {
  try {
    k(in, out);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw BackendError("external_call: kernel '" + std::string(name) + "' failed: " + e.what());
  } catch (...) {
    throw BackendError("external_call: kernel '" + std::string(name) + "' threw a non-standard exception");
  }
}

// Row-major element count of the axes from `from` on.
int64_t tail_numel(const ExternalBuffer& b, int64_t from) {
  int64_t n = 1;
  for (int64_t a = from; a < b.rank; ++a) n *= b.shape[a];
  return n;
}

}  // namespace

void call_external_kernel(const ResolvedKernel& k, std::string_view name, std::span<const ExternalBuffer> inputs,
                          std::span<ExternalBuffer> outputs, int64_t batch_dims) {
  if (batch_dims == 0) return invoke(*k.kernel, name, inputs, outputs);
  if (outputs.empty()) throw InternalError("external_call: a batched call without results");
  // Looped levels: all of them, or all but the innermost when the batch variant takes that one.
  const int64_t looped = k.batched ? batch_dims - 1 : batch_dims;
  const ExternalKernel& fn = k.batched ? *k.batched : *k.kernel;
  if (looped == 0) return invoke(fn, name, inputs, outputs);
  std::vector<const ExternalBuffer*> all;
  for (const ExternalBuffer& b : inputs) all.push_back(&b);
  for (const ExternalBuffer& b : outputs) all.push_back(&b);
  // Per buffer and looped level: the byte stride of one step (0 where the buffer's extent there is 1).
  std::vector<int64_t> step(all.size() * static_cast<size_t>(looped));
  std::vector<int64_t> extent(static_cast<size_t>(looped));
  int64_t positions = 1;
  for (int64_t l = 0; l < looped; ++l) {
    extent[static_cast<size_t>(l)] = outputs[0].shape[l];
    positions *= outputs[0].shape[l];
  }
  for (size_t b = 0; b < all.size(); ++b)
    for (int64_t l = 0; l < looped; ++l)
      step[b * static_cast<size_t>(looped) + static_cast<size_t>(l)] =
          all[b]->shape[l] == 1 ? 0 : tail_numel(*all[b], l + 1) * static_cast<int64_t>(size_of(all[b]->dtype));
  std::vector<ExternalBuffer> in(inputs.begin(), inputs.end()), out(outputs.begin(), outputs.end());
  for (std::vector<ExternalBuffer>* v : {&in, &out})
    for (ExternalBuffer& b : *v) {
      b.shape += looped;
      b.rank -= looped;
    }
  std::vector<int64_t> idx(static_cast<size_t>(looped), 0);
  for (int64_t p = 0; p < positions; ++p) {
    for (size_t b = 0; b < all.size(); ++b) {
      int64_t off = 0;
      for (int64_t l = 0; l < looped; ++l)
        off += idx[static_cast<size_t>(l)] * step[b * static_cast<size_t>(looped) + static_cast<size_t>(l)];
      char* base = static_cast<char*>(all[b]->data) + off;
      (b < in.size() ? in[b] : out[b - in.size()]).data = base;
    }
    invoke(fn, name, in, out);
    for (int64_t l = looped - 1; l >= 0; --l) {
      if (++idx[static_cast<size_t>(l)] < extent[static_cast<size_t>(l)]) break;
      idx[static_cast<size_t>(l)] = 0;
    }
  }
}

namespace {

void collect_kernels(const Block& b, uint32_t id, std::vector<std::string>& out) {
  for (const auto& op : b.operations()) {
    if (op->op_id() == id) out.push_back(attr_string(op->attributes(), "kernel", "external_call"));
    for (const auto& r : op->regions()) collect_kernels(r->block(), id, out);
  }
}

}  // namespace

std::vector<std::string> external_kernels_of(const Graph& graph) {
  std::vector<std::string> out;
  const uint32_t id = get_op("external_call").id;
  for (const auto& f : graph.module().functions()) collect_kernels(f->entry(), id, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string external_results_text(std::span<const TensorType> results) {
  std::string s;
  for (const TensorType& t : results) {
    if (!s.empty()) s += ", ";
    s += t.to_string();
  }
  return s;
}

std::vector<TensorType> parse_external_results(std::string_view text, std::string_view what) {
  std::vector<TensorType> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i == text.size()) break;
    int depth = 0;
    size_t j = i;
    for (; j < text.size(); ++j) {
      if (text[j] == '<' || text[j] == '(') ++depth;
      if (text[j] == '>' || text[j] == ')') --depth;
      if (text[j] == ',' && depth == 0) break;
    }
    std::string err;
    std::string_view item = text.substr(i, j - i);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    auto t = irtext::parse_tensor_type(item, &err);
    if (!t)
      throw TypeError(std::string(what) + ": result type " + std::to_string(out.size()) + " '" + std::string(item) +
                      "' does not parse: " + err);
    out.push_back(*std::move(t));
    i = j;
  }
  if (out.empty()) throw TypeError(std::string(what) + ": an external call needs at least one result type");
  return out;
}

}  // namespace evoxc
