// execute(): binds symbolic dims, validates inputs and outputs, then walks the prepared instructions.
#include <cstring>

#include "evoxc/core/error.h"
#include "program.h"

namespace evoxc::interp {

namespace {

// Returns the frame to the pool however execute() leaves.
class FrameLease {
 public:
  explicit FrameLease(const Program& p) : p_(p), f_(p.acquire_frame()) {}
  ~FrameLease() { p_.release_frame(std::move(f_)); }
  FrameLease(const FrameLease&) = delete;
  FrameLease& operator=(const FrameLease&) = delete;
  Program::FrameData& operator*() { return *f_; }
  Program::FrameData* operator->() { return f_.get(); }

 private:
  const Program& p_;
  std::unique_ptr<Program::FrameData> f_;
};

[[noreturn]] void input_mismatch(const Program& p, size_t i, DType dt, const int64_t* shape, size_t rank,
                                 const std::string& extra = "") {
  throw ValidationError("input " + p.input_paths[i] + ": expected " + p.values[i].type().to_string() + ", got " +
                        (dt == p.values[i].dtype()
                             ? "shape " + shape_text(shape, rank)
                             : "dtype " + std::string(dtype_name(dt)) + " with shape " + shape_text(shape, rank)) +
                        extra);
}
[[noreturn]] void input_mismatch(const Program& p, size_t i, const Tensor& t, const std::string& extra = "") {
  input_mismatch(p, i, t.dtype(), t.shape().data(), t.rank(), extra);
}

// Block plans: inputs are raw buffers of the plan's dtypes and ranks (the enclosing
// plan checked both at prepare), so only extents are checked.
struct RawInputs {
  const Program& p;
  const int64_t* const* dims;
  size_t rank(size_t i) const { return p.values[i].rank(); }
  const int64_t* shape(size_t i) const { return dims[i]; }
  [[noreturn]] void mismatch(size_t i, const std::string& extra) const {
    input_mismatch(p, i, p.values[i].dtype(), dims[i], rank(i), extra);
  }
};
struct TensorInputs {
  const Program& p;
  std::span<const Tensor> t;
  size_t rank(size_t i) const { return t[i].rank(); }
  const int64_t* shape(size_t i) const { return t[i].shape().data(); }
  [[noreturn]] void mismatch(size_t i, const std::string& extra) const { input_mismatch(p, i, t[i], extra); }
};

template <typename In>
void check_input_rules(const Program& p, const In& in, Program::FrameData& f) {
  using K = Program::InputRule::Kind;
  for (const auto& r : p.input_rules) {
    int64_t got = in.shape(r.input)[r.axis];
    switch (r.kind) {
      case K::Const:
        if (got != r.value) in.mismatch(r.input, "");
        break;
      case K::Bind: f.syms[static_cast<size_t>(r.slot)] = got; break;
      case K::SameSym: {
        int64_t want = f.syms[static_cast<size_t>(r.slot)];
        if (got != want) {
          const std::string& sym = p.sym_names[static_cast<size_t>(r.slot)];
          in.mismatch(r.input, ": dim " + std::to_string(r.axis) + " gives " + sym + " = " + std::to_string(got) +
                                   ", but input " + p.input_paths[r.first_input] + " (" +
                                   p.values[r.first_input].type().to_string() + ", shape " +
                                   shape_text(in.shape(r.first_input), in.rank(r.first_input)) + ") bound " + sym +
                                   " = " + std::to_string(want) + " at dim " + std::to_string(r.first_axis) +
                                   "; pass inputs whose " + sym + " extents agree");
        }
        break;
      }
      case K::Expr: {
        int64_t want = p.code.eval(r.slot, f.syms.data());
        if (got != want)
          in.mismatch(r.input, ": dim " + std::to_string(r.axis) + " must be " + p.code.expr(r.slot).to_string() +
                                   " = " + std::to_string(want));
        break;
      }
    }
  }
}

void check_inputs(const Program& p, std::span<const Tensor> inputs, Program::FrameData& f) {
  for (size_t i = 0; i < p.num_inputs; ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined())
      throw ValidationError("input " + p.input_paths[i] + ": the tensor is undefined; pass a tensor of type " +
                            p.values[i].type().to_string());
    if (t.dtype() != p.values[i].dtype() || t.rank() != p.values[i].rank()) input_mismatch(p, i, t);
  }
  check_input_rules(p, TensorInputs{p, inputs}, f);
}

std::string bindings_text(const Program& p, const Program::FrameData& f) {
  std::string s;
  for (size_t i = 0; i < p.sym_names.size(); ++i)
    s += (i ? ", " : "") + p.sym_names[i] + " = " + std::to_string(f.syms[i]);
  return s;
}

// Symbolic programs: evaluate every extent, run the checks in op order, count elements, size buffers.
void resolve_shapes(const Program& p, Program::FrameData& f) {
  for (size_t e = 0; e < p.code.size(); ++e) f.expr_vals[e] = p.code.eval(static_cast<int32_t>(e), f.syms.data());
  for (const Check& c : p.checks) {
    int64_t a = f.expr_vals[static_cast<size_t>(c.a)], b = f.expr_vals[static_cast<size_t>(c.b)];
    bool ok = true;
    std::string rel;
    switch (c.kind) {
      case Check::Kind::Equal: ok = a == b, rel = " must equal "; break;
      case Check::Kind::BroadcastTo: ok = a == b || a == 1, rel = " must be 1 or equal "; break;
      case Check::Kind::LessEqual: ok = a <= b, rel = " must be at most "; break;
      case Check::Kind::NonNegative: ok = a >= 0, rel = " must be at least "; break;
    }
    auto text = [&](int32_t id, int64_t v) {
      const DimExpr& e = p.code.expr(id);
      return e.is_const() ? std::to_string(v) : e.to_string() + " = " + std::to_string(v);
    };
    if (!ok)
      throw ValidationError(c.what + ": " + text(c.a, a) + rel + text(c.b, b) + " (with " + bindings_text(p, f) + ")");
  }
  for (size_t k = 0; k < p.dim_expr.size(); ++k)
    if (p.dim_expr[k] >= 0) f.dims[k] = f.expr_vals[static_cast<size_t>(p.dim_expr[k])];
  for (size_t v = 0; v < p.values.size(); ++v) {
    const ValueDesc& d = p.values[v];
    int64_t n = 1;
    for (uint32_t i = 0; i < d.rank(); ++i) {
      int64_t x = f.dims[d.dim_off + i];
      if (x < 0 || __builtin_mul_overflow(n, x, &n) || n > (int64_t{1} << 48))
        throw ValidationError(p.producer(static_cast<uint32_t>(v)) + ": " + p.value_name(static_cast<uint32_t>(v)) +
                              " of type " + d.type().to_string() + " gets shape " +
                              shape_text(f.dims.data() + d.dim_off, d.rank()) + " with " + bindings_text(p, f) +
                              ", which is too large or negative");
    }
    f.numel[v] = n;
  }
  size_t off = 0;
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    size_t bytes = 0;
    for (uint32_t v : p.buffers[b].values)
      bytes = std::max(bytes, static_cast<size_t>(f.numel[v]) * size_of(p.values[v].dtype()));
    f.offsets[b] = off;
    off += (bytes + 63) / 64 * 64;
  }
  f.reserve_arena(off);
  for (size_t v = 0; v < p.values.size(); ++v) {
    const Program::Storage& s = p.storage[v];
    if (s.kind == Program::StorageKind::Temp) f.ptr[v] = static_cast<char*>(f.arena) + f.offsets[s.index];
    if (s.kind == Program::StorageKind::Constant) f.ptr[v] = p.constants[s.index].raw_data();
  }
}

bool overlaps(const Tensor& a, const Tensor& b) {
  if (a.nbytes() == 0 || b.nbytes() == 0) return false;
  auto* pa = static_cast<const char*>(a.raw_data());
  auto* pb = static_cast<const char*>(b.raw_data());
  return pa < pb + b.nbytes() && pb < pa + a.nbytes();
}

}  // namespace

void execute(const Program& p, std::span<const Tensor> inputs, std::span<Tensor> outputs) {
  if (inputs.size() != p.num_inputs)
    throw ValidationError("execute: the program takes " + std::to_string(p.num_inputs) + " input tensors, got " +
                          std::to_string(inputs.size()));
  if (outputs.size() != p.output_value.size())
    throw ValidationError("execute: the program has " + std::to_string(p.output_value.size()) + " outputs, got " +
                          std::to_string(outputs.size()) + " output slots");
  FrameLease f(p);
  check_inputs(p, inputs, *f);
  const int64_t* dims = p.all_static ? p.dims_template.data() : nullptr;
  const int64_t* numel = p.all_static ? p.static_numel.data() : nullptr;
  if (!p.all_static) {
    resolve_shapes(p, *f);
    dims = f->dims.data();
    numel = f->numel.data();
  }

  // Outputs: validate caller buffers, allocate missing ones, stage any that overlap an input.
  for (size_t j = 0; j < outputs.size(); ++j) {
    uint32_t v = p.output_value[j];
    const ValueDesc& d = p.values[v];
    const int64_t* want = dims + d.dim_off;
    Tensor& o = outputs[j];
    if (o.defined()) {
      bool same = o.dtype() == d.dtype() && o.rank() == d.rank();
      for (size_t i = 0; same && i < d.rank(); ++i) same = o.shape()[i] == want[i];
      if (!same)
        throw ValidationError("output [" + std::to_string(j) + "]: the caller's tensor has dtype " +
                              std::string(dtype_name(o.dtype())) + " and shape " +
                              shape_text(o.shape().data(), o.rank()) + ", but the program writes " +
                              std::string(dtype_name(d.dtype())) + " of shape " + shape_text(want, d.rank()) +
                              "; pass an undefined Tensor to have it allocated");
      o.raw_data();  // DeviceError for a non-host buffer, before anything runs
      bool clash = false;
      for (const Tensor& in : inputs) clash = clash || overlaps(o, in);
      if (clash) f->staged[j] = Tensor::empty(std::vector<int64_t>(want, want + d.rank()), d.dtype());
    } else {
      o = Tensor::empty(std::vector<int64_t>(want, want + d.rank()), d.dtype());
    }
  }

  // Pointers that change per call: inputs and direct outputs (and their aliases).
  for (uint32_t v : p.patch_values) {
    const Program::Storage& s = p.storage[v];
    if (s.kind == Program::StorageKind::Input) {
      f->ptr[v] = inputs[s.index].raw_data();
    } else if (s.kind == Program::StorageKind::Output) {
      const Tensor& t = f->staged[s.index].defined() ? f->staged[s.index] : outputs[s.index];
      f->ptr[v] = t.raw_data();
    }
  }

  Frame frame{f->ptr.data(), dims, numel, f->syms.data()};
  for (const KernelPtr& k : p.kernels)
    if (k) k->run(frame);

  // Copies after the run: outputs that are inputs, constants, views or repeats first, then
  // the staged ones (their sources never overlap a caller buffer).
  for (size_t j = 0; j < outputs.size(); ++j) {
    uint32_t v = p.output_value[j];
    size_t bytes = static_cast<size_t>(numel[v]) * size_of(p.values[v].dtype());
    if (bytes != 0 && !p.output_direct[j]) std::memmove(outputs[j].raw_data(), f->ptr[v], bytes);
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    uint32_t v = p.output_value[j];
    size_t bytes = static_cast<size_t>(numel[v]) * size_of(p.values[v].dtype());
    if (bytes != 0 && p.output_direct[j] && f->staged[j].defined())
      std::memcpy(outputs[j].raw_data(), f->staged[j].raw_data(), bytes);
  }
}

void execute_block(const Program& p, const BlockCall& c) {
  FrameLease f(p);
  execute_block(p, c, *f);
}

void execute_block(const Program& p, const BlockCall& c, Program::FrameData& fd) {
  Program::FrameData* f = &fd;
  for (size_t i = 0; i < p.num_outer_syms; ++i) f->syms[i] = c.outer_syms[i];
  check_input_rules(p, RawInputs{p, c.in_dims}, *f);
  const int64_t* dims = p.all_static ? p.dims_template.data() : nullptr;
  const int64_t* numel = p.all_static ? p.static_numel.data() : nullptr;
  if (!p.all_static) {
    resolve_shapes(p, *f);
    dims = f->dims.data();
    numel = f->numel.data();
  }
  for (size_t j = 0; j < p.output_value.size(); ++j) {
    const ValueDesc& d = p.values[p.output_value[j]];
    const int64_t* want = dims + d.dim_off;
    for (size_t i = 0; i < d.rank(); ++i)
      if (c.out_dims[j][i] != want[i])
        throw ValidationError("result " + std::to_string(j) + " of " + p.producer(p.output_value[j]) +
                              ": the region computes shape " + shape_text(want, d.rank()) + " where the op's type " +
                              "gives " + shape_text(c.out_dims[j], d.rank()) + "; the graph's types are inconsistent");
  }
  for (uint32_t v : p.patch_values) {
    const Program::Storage& s = p.storage[v];
    if (s.kind == Program::StorageKind::Input)
      f->ptr[v] = const_cast<void*>(c.in[s.index]);  // kernels never write an input's storage
    else if (s.kind == Program::StorageKind::Output)
      f->ptr[v] = c.out[s.index];
  }
  Frame frame{f->ptr.data(), dims, numel, f->syms.data()};
  for (const KernelPtr& k : p.kernels)
    if (k) k->run(frame);
  for (size_t j = 0; j < p.output_value.size(); ++j) {
    uint32_t v = p.output_value[j];
    size_t bytes = static_cast<size_t>(numel[v]) * size_of(p.values[v].dtype());
    if (bytes != 0 && !p.output_direct[j]) std::memmove(c.out[j], f->ptr[v], bytes);
  }
}

}  // namespace evoxc::interp
