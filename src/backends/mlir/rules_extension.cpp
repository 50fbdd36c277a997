// mlir lowering of the extension ops: external_call as a call into the host kernel registered for "mlir" (or the
// default slot), through external_runtime.cpp. stablehlo_call is StableHLO, which this backend does not run.
//
// Each (kernel, operand and result types) gets a small memref-level wrapper function: the call site passes its
// operand buffers and freshly allocated result buffers to it, and it packs every buffer's address, offset, dtype,
// extents and strides into one i64 array for the runtime. The buffers are the wrapper's arguments, so the caller's
// deallocation (after the call) cannot free one while the kernel runs. A per-wrapper i64 global caches the
// kernel the executable resolved at load (found by name on the first call only).
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/mlir/emitter.h"
#include "evoxc/ops/external.h"

namespace evoxc::mlir_backend {
namespace {

std::string dyn_extents(size_t rank) {
  std::string s;
  for (size_t i = 0; i < rank; ++i) s += "?x";
  return s;
}

// The wrapper's parameter type of an operand (any strides) or a result (a fresh identity-layout buffer).
std::string operand_buffer(const TensorType& t) {
  std::string strides;
  for (size_t i = 0; i < t.rank(); ++i) strides += i ? ", ?" : "?";
  return "memref<" + dyn_extents(t.rank()) + element_type(t.dtype) + ", strided<[" + strides + "], offset: ?>>";
}
std::string result_buffer(const TensorType& t) {
  return "memref<" + dyn_extents(t.rank()) + element_type(t.dtype) + ">";
}

std::string hex64(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// The wrapper @evoxc_ext_<id>(buffers..., sink): the i64 array [address, offset, dtype, rank, extents..., strides...]
// of each buffer, then the runtime call.
std::string wrapper(const std::string& id, const std::vector<std::string>& types, const std::vector<TensorType>& tts,
                    size_t num_inputs, int64_t levels, size_t name_bytes) {
  size_t len = 0;
  for (const TensorType& t : tts) len += 4 + 2 * t.rank();
  std::string params, body;
  int next = 0;
  auto v = [&] { return "%w" + std::to_string(next++); };
  auto idx = [&](size_t pos) {
    std::string c = v();
    body += "    " + c + " = arith.constant " + std::to_string(pos) + " : index\n";
    return c;
  };
  auto store_i64 = [&](const std::string& value, size_t pos) {
    body += "    memref.store " + value + ", %meta[" + idx(pos) + "] : memref<" + std::to_string(len) + "xi64>\n";
  };
  auto store_index = [&](const std::string& value, size_t pos) {
    std::string c = v();
    body += "    " + c + " = arith.index_cast " + value + " : index to i64\n";
    store_i64(c, pos);
  };
  auto store_const = [&](int64_t value, size_t pos) {
    std::string c = v();
    body += "    " + c + " = arith.constant " + std::to_string(value) + " : i64\n";
    store_i64(c, pos);
  };
  body += "    %meta = memref.alloca() : memref<" + std::to_string(len) + "xi64>\n";
  size_t pos = 0;
  for (size_t b = 0; b < tts.size(); ++b) {
    const std::string arg = "%b" + std::to_string(b);
    params += arg + ": " + types[b] + ", ";
    const size_t r = tts[b].rank();
    std::string addr = v();
    body += "    " + addr + " = memref.extract_aligned_pointer_as_index " + arg + " : " + types[b] + " -> index\n";
    store_index(addr, pos);
    std::string base = v(), off = v(), sizes = v(), strides = v();
    std::string results = base + ", " + off;
    std::string result_types = "memref<" + element_type(tts[b].dtype) + ">, index";
    if (r > 0) {
      results += ", " + sizes + ":" + std::to_string(r) + ", " + strides + ":" + std::to_string(r);
      for (size_t i = 0; i < 2 * r; ++i) result_types += ", index";
    }
    // The extents and strides come as two result groups: %sizes#i, %strides#i.
    body += "    " + results + " = memref.extract_strided_metadata " + arg + " : " + types[b] + " -> " + result_types +
            "\n";
    store_index(off, pos + 1);
    store_const(static_cast<int64_t>(tts[b].dtype), pos + 2);
    store_const(static_cast<int64_t>(r), pos + 3);
    for (size_t i = 0; i < r; ++i) {
      store_index(sizes + "#" + std::to_string(i), pos + 4 + i);
      store_index(strides + "#" + std::to_string(i), pos + 4 + r + i);
    }
    pos += 4 + 2 * r;
  }
  const std::string n = std::to_string(name_bytes);
  body += "    %meta_d = memref.cast %meta : memref<" + std::to_string(len) + "xi64> to memref<?xi64>\n";
  body += "    %name = memref.get_global @evoxc_ext_name_" + id + " : memref<" + n + "xi8>\n";
  body += "    %name_d = memref.cast %name : memref<" + n + "xi8> to memref<?xi8>\n";
  body += "    %slot = memref.get_global @evoxc_ext_slot_" + id + " : memref<1xi64>\n";
  body += "    %nin = arith.constant " + std::to_string(num_inputs) + " : i64\n";
  body += "    %nout = arith.constant " + std::to_string(tts.size() - num_inputs) + " : i64\n";
  body += "    %levels = arith.constant " + std::to_string(levels) + " : i64\n";
  body +=
      "    func.call @evoxc_external_call(%meta_d, %name_d, %slot, %nin, %nout, %levels, %sink) : "
      "(memref<?xi64>, memref<?xi8>, memref<1xi64>, i64, i64, i64, !llvm.ptr) -> ()\n";
  return "func.func private @evoxc_ext_" + id + "(" + params + "%sink: !llvm.ptr) {\n" + body + "    return\n  }";
}

std::vector<Val> external_rule(Emitter& e, const Operation& op, std::span<const Val> in) {
  const std::string& kernel = attr_string(op.attributes(), "kernel", "external_call");
  const int64_t levels =
      op.attributes().count("batch_dims") ? attr_int(op.attributes(), "batch_dims", "external_call") : 0;
  std::vector<TensorType> tts;
  std::vector<std::string> types;
  for (const Val& v : in) {
    tts.push_back(v.type);
    types.push_back(operand_buffer(v.type));
  }
  for (size_t i = 0; i < op.num_results(); ++i) {
    tts.push_back(op.result(i)->type());
    types.push_back(result_buffer(op.result(i)->type()));
  }
  // The wrapper and its globals are shared by every call of the same kernel on the same buffer types.
  std::string key = kernel + "|" + std::to_string(levels);
  for (const std::string& t : types) key += "|" + t;
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ULL;
  const std::string id = hex64(h);
  std::string bytes;
  for (char c : kernel) bytes += std::to_string(static_cast<int>(static_cast<signed char>(c))) + ", ";
  e.declare("memref.global \"private\" constant @evoxc_ext_name_" + id + " : memref<" +
            std::to_string(kernel.size() + 1) + "xi8> = dense<[" + bytes + "0]>");
  e.declare("memref.global \"private\" @evoxc_ext_slot_" + id + " : memref<1xi64> = dense<0>");
  e.declare(
      "func.func private @evoxc_external_call(memref<?xi64>, memref<?xi8>, memref<1xi64>, i64, i64, i64, !llvm.ptr) "
      "attributes {llvm.emit_c_interface}");
  e.declare(wrapper(id, types, tts, in.size(), levels, kernel.size() + 1));
  std::vector<std::string> args;
  for (const Val& v : in) {
    std::string dyn = "tensor<" + dyn_extents(v.type.rank()) + element_type(v.type.dtype) + ">";
    args.push_back(e.read_buffer(v, dyn, operand_buffer(v.type)));
  }
  std::vector<std::string> outs;
  for (size_t i = 0; i < op.num_results(); ++i) {
    const TensorType& t = op.result(i)->type();
    std::string extents;
    for (const DimExpr& d : t.shape) extents += (extents.empty() ? "" : ", ") + e.extent(d);
    outs.push_back(e.assign("memref.alloc(" + extents + ") : " + result_buffer(t)));
  }
  std::string call_args, sig;
  for (size_t b = 0; b < types.size(); ++b) {
    call_args += (b < args.size() ? args[b] : outs[b - args.size()]) + ", ";
    sig += types[b] + ", ";
  }
  e.line("func.call @evoxc_ext_" + id + "(" + call_args + e.error_sink() + ") : (" + sig + "!llvm.ptr) -> ()");
  std::vector<Val> results;
  for (size_t i = 0; i < op.num_results(); ++i) {
    const TensorType& t = op.result(i)->type();
    std::string dyn = "tensor<" + dyn_extents(t.rank()) + element_type(t.dtype) + ">";
    std::string r =
        e.assign("bufferization.to_tensor " + outs[i] + " restrict writable : " + result_buffer(t) + " to " + dyn);
    results.push_back({e.assign("tensor.cast " + r + " : " + dyn + " to " + tensor_type(t)), t});
  }
  return results;
}

}  // namespace

void add_extension_rules(Table& t) {
  t.set("external_call", external_rule);
  t.defer("stablehlo_call",
          "the mlir backend compiles upstream dialects only and has no StableHLO; build the graph with "
          "backend=\"xla\"");
}

}  // namespace evoxc::mlir_backend
