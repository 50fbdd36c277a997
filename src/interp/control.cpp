// Interpreter kernels of the control family: cond, while_loop and scan run their regions as prepared block plans.
//
// Unlike the other kernels these allocate (carry scratch) and may throw (a region's
// run-time shape checks) while running: a region is a whole program of its own.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "evoxc/core/error.h"
#include "program.h"

namespace evoxc::interp {

namespace {

// Where a kernel finds one value of the enclosing plan at run time.
struct ValRef {
  uint32_t id = 0;
  uint32_t dim_off = 0;
  uint32_t esize = 0;
  void* ptr(const Frame& f) const { return f.ptr[id]; }
  const int64_t* dims(const Frame& f) const { return f.dims + dim_off; }
  size_t bytes(const Frame& f) const { return static_cast<size_t>(f.numel[id]) * esize; }
};

ValRef ref(const PrepareCtx& ctx, uint32_t id) {
  const ValueDesc& d = ctx.val(id);
  return {id, d.dim_off, static_cast<uint32_t>(size_of(d.dtype()))};
}

// 64-byte aligned scratch, freed however the run leaves.
class Scratch {
 public:
  explicit Scratch(size_t bytes) {
    size_t n = std::max<size_t>(64, (bytes + 63) / 64 * 64);
    p_ = std::aligned_alloc(64, n);
    if (!p_) throw ValidationError("interp: cannot allocate " + std::to_string(bytes) + " bytes of loop carry");
  }
  ~Scratch() { std::free(p_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  char* data() const { return static_cast<char*>(p_); }

 private:
  void* p_;
};

// The argument list of one region call, rebuilt in place each step.
struct CallArgs {
  std::vector<const void*> in;
  std::vector<const int64_t*> in_dims;
  std::vector<void*> out;
  std::vector<const int64_t*> out_dims;
  void run(const Program& p, const Frame& f) const {
    execute_block(p, BlockCall{in.data(), in_dims.data(), out.data(), out_dims.data(), f.syms});
  }
};

std::string types_text(const std::vector<TensorType>& ts) {
  std::string s = "(";
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + ts[i].to_string();
  return s + ")";
}

// Checks that a region's arguments and returns have the types the kernel will hand it
// (the verifier does too; the kernel must never index past what it was given), then
// prepares its plan.
std::shared_ptr<const Program> prepare_region(PrepareCtx& ctx, size_t r, const std::vector<TensorType>& args,
                                              const std::vector<TensorType>& rets,
                                              const std::vector<const Value*>& captures) {
  const Block& b = ctx.op.region(r).block();
  std::string what = "region " + std::to_string(r) + " of " + ctx.where;
  std::vector<TensorType> have;
  for (const auto& a : b.arguments()) have.push_back(a->type());
  if (have != args)
    ctx.fail("region " + std::to_string(r) + " takes " + types_text(have) + ", expected " + types_text(args));
  const Operation* t = b.terminator();
  if (!t || t->name() != "return") ctx.fail("region " + std::to_string(r) + " does not end with evoxc.return");
  std::vector<TensorType> got;
  for (const Value* v : t->operands()) got.push_back(v->type());
  if (got != rets)
    ctx.fail("region " + std::to_string(r) + " returns " + types_text(got) + ", expected " + types_text(rets));
  return prepare_block(b, captures, ctx.sym_names ? *ctx.sym_names : std::vector<std::string>{}, what);
}

std::vector<TensorType> types_of(const PrepareCtx& ctx, const std::vector<uint32_t>& ids, size_t from, size_t to) {
  std::vector<TensorType> t;
  for (size_t i = from; i < to; ++i) t.push_back(ctx.val(ids[i]).type);
  return t;
}

TensorType drop_leading(const TensorType& t) {
  return TensorType(t.dtype, Shape(std::vector<DimExpr>(t.shape.begin() + 1, t.shape.end())));
}

// ---- cond ------------------------------------------------------------------------------

class CondKernel final : public Kernel {
 public:
  DType pred_dtype = DType::Bool;
  ValRef pred;
  std::vector<ValRef> args, outs;  // args: operands after the predicate, then captures
  std::vector<std::shared_ptr<const Program>> regions;

  void run(const Frame& f) const override {
    size_t k = 0;
    const void* p = pred.ptr(f);
    int64_t n = static_cast<int64_t>(regions.size());
    if (pred_dtype == DType::Bool) {
      uint8_t b = 0;
      std::memcpy(&b, p, 1);
      k = b != 0 ? 0 : 1;
    } else {
      int64_t i = 0;
      if (pred_dtype == DType::I32) {
        int32_t v = 0;
        std::memcpy(&v, p, 4);
        i = v;
      } else {
        std::memcpy(&i, p, 8);
      }
      k = static_cast<size_t>(std::clamp<int64_t>(i, 0, n - 1));  // XLA: out-of-range indices clamp
    }
    CallArgs c;
    for (const ValRef& a : args) {
      c.in.push_back(a.ptr(f));
      c.in_dims.push_back(a.dims(f));
    }
    for (const ValRef& o : outs) {
      c.out.push_back(o.ptr(f));
      c.out_dims.push_back(o.dims(f));
    }
    c.run(*regions[k], f);
  }
};

KernelPtr make_cond(PrepareCtx& ctx, const std::vector<const Value*>& captures) {
  const Operation& op = ctx.op;
  size_t nops = op.num_operands();
  if (nops < 1) ctx.fail("expects a predicate operand");
  auto k = std::make_unique<CondKernel>();
  const ValueDesc& p = ctx.operand(0);
  if (p.rank() != 0 || !(p.dtype() == DType::Bool || p.dtype() == DType::I32 || p.dtype() == DType::I64))
    ctx.fail("the predicate must be a rank-0 bool, int32 or int64, got " + p.type.to_string());
  if (op.regions().empty() || (p.dtype() == DType::Bool && op.regions().size() != 2))
    ctx.fail("a bool predicate needs 2 regions and an index at least 1, got " + std::to_string(op.regions().size()));
  k->pred_dtype = p.dtype();
  k->pred = ref(ctx, ctx.in[0]);
  for (size_t i = 1; i < ctx.in.size(); ++i) k->args.push_back(ref(ctx, ctx.in[i]));
  for (uint32_t o : ctx.out) k->outs.push_back(ref(ctx, o));
  std::vector<TensorType> args = types_of(ctx, ctx.in, 1, nops);
  std::vector<TensorType> rets = types_of(ctx, ctx.out, 0, ctx.out.size());
  for (size_t r = 0; r < op.regions().size(); ++r) k->regions.push_back(prepare_region(ctx, r, args, rets, captures));
  return k;
}

// ---- while_loop ------------------------------------------------------------------------

// The carry lives in two scratch sets used in turn, so a region never writes the buffers
// it reads; the initial carry is read in place.
struct CarrySets {
  std::vector<size_t> off;
  size_t total = 0;
  CarrySets(const std::vector<ValRef>& carry, const Frame& f) {
    for (const ValRef& c : carry) {
      off.push_back(total);
      total += (c.bytes(f) + 63) / 64 * 64;
    }
  }
};

void copy_carry(const std::vector<ValRef>& outs, const std::vector<const void*>& cur, const Frame& f) {
  for (size_t i = 0; i < outs.size(); ++i) {
    size_t n = outs[i].bytes(f);
    if (n != 0 && cur[i] != outs[i].ptr(f)) std::memmove(outs[i].ptr(f), cur[i], n);
  }
}

class WhileKernel final : public Kernel {
 public:
  std::vector<ValRef> init, caps, outs;
  std::shared_ptr<const Program> cond, body;

  void run(const Frame& f) const override {
    size_t n = init.size();
    CarrySets sets(outs, f);
    Scratch a(sets.total), b(sets.total);
    char* set[2] = {a.data(), b.data()};
    std::vector<const void*> cur(n);
    for (size_t i = 0; i < n; ++i) cur[i] = init[i].ptr(f);
    uint8_t pred = 0;
    const int64_t* scalar_dims = outs[0].dims(f);  // never read: the predicate has rank 0
    CallArgs c;
    c.in.resize(n + caps.size());
    for (size_t i = 0; i < n; ++i) c.in_dims.push_back(outs[i].dims(f));
    for (size_t j = 0; j < caps.size(); ++j) {
      c.in[n + j] = caps[j].ptr(f);
      c.in_dims.push_back(caps[j].dims(f));
    }
    CallArgs cc = c;
    cc.out = {&pred};
    cc.out_dims = {scalar_dims};
    c.out.resize(n);
    for (size_t i = 0; i < n; ++i) c.out_dims.push_back(outs[i].dims(f));
    // No iteration limit: a loop whose predicate never turns false runs forever.
    for (int s = 0;; s ^= 1) {
      for (size_t i = 0; i < n; ++i) cc.in[i] = cur[i];
      cc.run(*cond, f);
      if (pred == 0) break;
      for (size_t i = 0; i < n; ++i) {
        c.in[i] = cur[i];
        c.out[i] = set[s] + sets.off[i];
      }
      c.run(*body, f);
      for (size_t i = 0; i < n; ++i) cur[i] = c.out[i];
    }
    copy_carry(outs, cur, f);
  }
};

KernelPtr make_while(PrepareCtx& ctx, const std::vector<const Value*>& captures) {
  const Operation& op = ctx.op;
  size_t n = op.num_operands();
  if (op.regions().size() != 2) ctx.fail("expects 2 regions (cond, body)");
  if (n < 1 || ctx.out.size() != n) ctx.fail("expects a non-empty carry and one result per carry operand");
  auto k = std::make_unique<WhileKernel>();
  for (size_t i = 0; i < ctx.in.size(); ++i) (i < n ? k->init : k->caps).push_back(ref(ctx, ctx.in[i]));
  for (uint32_t o : ctx.out) k->outs.push_back(ref(ctx, o));
  std::vector<TensorType> carry = types_of(ctx, ctx.in, 0, n);
  if (carry != types_of(ctx, ctx.out, 0, n)) ctx.fail("the results must have the carry's types");
  k->cond = prepare_region(ctx, 0, carry, {TensorType(DType::Bool, Shape())}, captures);
  k->body = prepare_region(ctx, 1, carry, carry, captures);
  return k;
}

// ---- scan --------------------------------------------------------------------------------

class ScanKernel final : public Kernel {
 public:
  std::vector<ValRef> init, xs, caps, carry_out, ys;
  std::shared_ptr<const Program> body;
  int64_t static_length = -1;
  bool reverse = false;

  void run(const Frame& f) const override {
    size_t nc = init.size();
    int64_t len = xs.empty() ? static_length : xs[0].dims(f)[0];
    CarrySets sets(carry_out, f);
    Scratch a(sets.total), b(sets.total);
    char* set[2] = {a.data(), b.data()};
    std::vector<const void*> cur(nc);
    for (size_t i = 0; i < nc; ++i) cur[i] = init[i].ptr(f);
    std::vector<size_t> x_step, y_step;
    for (const ValRef& x : xs) x_step.push_back(len > 0 ? x.bytes(f) / static_cast<size_t>(len) : 0);
    for (const ValRef& y : ys) y_step.push_back(len > 0 ? y.bytes(f) / static_cast<size_t>(len) : 0);
    CallArgs c;
    c.in.resize(nc + xs.size() + caps.size());
    c.out.resize(nc + ys.size());
    for (size_t i = 0; i < nc; ++i) c.in_dims.push_back(carry_out[i].dims(f));
    for (const ValRef& x : xs) c.in_dims.push_back(x.dims(f) + 1);
    for (size_t j = 0; j < caps.size(); ++j) {
      c.in[nc + xs.size() + j] = caps[j].ptr(f);
      c.in_dims.push_back(caps[j].dims(f));
    }
    for (size_t i = 0; i < nc; ++i) c.out_dims.push_back(carry_out[i].dims(f));
    for (const ValRef& y : ys) c.out_dims.push_back(y.dims(f) + 1);
    int s = 0;
    for (int64_t t = 0; t < len; ++t, s ^= 1) {
      auto step = static_cast<size_t>(reverse ? len - 1 - t : t);
      for (size_t i = 0; i < nc; ++i) {
        c.in[i] = cur[i];
        c.out[i] = set[s] + sets.off[i];
      }
      for (size_t j = 0; j < xs.size(); ++j) c.in[nc + j] = static_cast<const char*>(xs[j].ptr(f)) + step * x_step[j];
      for (size_t j = 0; j < ys.size(); ++j) c.out[nc + j] = static_cast<char*>(ys[j].ptr(f)) + step * y_step[j];
      c.run(*body, f);
      for (size_t i = 0; i < nc; ++i) cur[i] = c.out[i];
    }
    copy_carry(carry_out, cur, f);
  }
};

KernelPtr make_scan(PrepareCtx& ctx, const std::vector<const Value*>& captures) {
  const Operation& op = ctx.op;
  const AttrMap& at = op.attributes();
  size_t nops = op.num_operands();
  if (op.regions().size() != 1) ctx.fail("expects 1 region (the body)");
  int64_t nc_attr = attr_int(at, "num_carry", ctx.where);
  if (nc_attr < 0 || static_cast<size_t>(nc_attr) > nops || static_cast<size_t>(nc_attr) > ctx.out.size())
    ctx.fail("num_carry = " + std::to_string(nc_attr) + " is out of range");
  auto nc = static_cast<size_t>(nc_attr);
  auto k = std::make_unique<ScanKernel>();
  k->reverse = at.count("reverse") ? attr_bool(at, "reverse", ctx.where) : false;
  if (at.count("length")) {
    k->static_length = attr_int(at, "length", ctx.where);
    if (k->static_length < 0) ctx.fail("length must be non-negative");
  } else if (nc == nops) {
    ctx.fail("without xs the 'length' attribute is required");
  }
  for (size_t i = 0; i < ctx.in.size(); ++i)
    (i < nc ? k->init : i < nops ? k->xs : k->caps).push_back(ref(ctx, ctx.in[i]));
  for (size_t i = 0; i < ctx.out.size(); ++i) (i < nc ? k->carry_out : k->ys).push_back(ref(ctx, ctx.out[i]));
  std::vector<TensorType> carry = types_of(ctx, ctx.in, 0, nc);
  if (carry != types_of(ctx, ctx.out, 0, nc)) ctx.fail("the carry results must have the carry's types");
  DimExpr len = k->static_length >= 0 ? DimExpr(k->static_length) : DimExpr();
  std::vector<TensorType> args = carry, rets = carry;
  for (size_t i = nc; i < nops; ++i) {
    const TensorType& t = ctx.operand(i).type;
    if (t.rank() == 0) ctx.fail("xs operand " + std::to_string(i) + " has rank 0");
    if (k->static_length < 0 && i == nc) len = t.shape[0];
    ctx.require_equal(t.shape[0], len, "leading extent of xs operand " + std::to_string(i) + " and the scan length");
    args.push_back(drop_leading(t));
  }
  for (const ValRef& y : k->ys) {
    const TensorType& t = ctx.val(y.id).type;
    if (t.rank() == 0) ctx.fail("a stacked result has rank 0");
    ctx.require_equal(t.shape[0], len, "leading extent of a stacked result and the scan length");
    rets.push_back(drop_leading(t));
  }
  k->body = prepare_region(ctx, 0, args, rets, captures);
  return k;
}

}  // namespace

bool is_control_op(std::string_view op) { return op == "cond" || op == "while_loop" || op == "scan"; }

KernelPtr make_control_kernel(PrepareCtx& ctx) {
  std::vector<const Value*> captures = captured_values(ctx.op);
  if (ctx.in.size() != ctx.op.num_operands() + captures.size())
    ctx.fail("the planner passed " + std::to_string(ctx.in.size()) + " inputs for " +
             std::to_string(ctx.op.num_operands()) + " operands and " + std::to_string(captures.size()) +
             " captured values");
  const std::string& n = ctx.op.name();
  if (n == "cond") return make_cond(ctx, captures);
  if (n == "while_loop") return make_while(ctx, captures);
  if (n == "scan") return make_scan(ctx, captures);
  ctx.fail("no control kernel");
}

}  // namespace evoxc::interp
