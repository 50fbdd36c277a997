// Interpreter kernels of the control family: cond, while_loop and scan run their regions as prepared block plans.
//
// Unlike the other kernels these may throw while running: a region is a whole program of
// its own, with run-time shape checks, and loops check the call's run limits before every
// iteration (a loop's trip count is data: the one place a program can run away). They
// allocate nothing per call or per iteration once warm: argument arrays, carry buffers and
// the regions' frames live in a per-call state that each kernel pools, as Program pools its
// frames.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "evoxc/core/error.h"
#include "evoxc/ops/block.h"
#include "kernel_table.h"
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

// 64-byte aligned scratch that grows on demand and is kept for the next call.
class AlignedScratch {
 public:
  AlignedScratch() = default;
  ~AlignedScratch() { std::free(p_); }
  AlignedScratch(const AlignedScratch&) = delete;
  AlignedScratch& operator=(const AlignedScratch&) = delete;
  char* reserve(size_t bytes) {
    if (p_ == nullptr || bytes > cap_) {
      size_t n = std::max<size_t>(64, (bytes + 63) / 64 * 64);
      check_host_memory(n, "interp: loop carry");
      void* q = std::aligned_alloc(64, n);
      if (!q) throw ValidationError("interp: cannot allocate " + std::to_string(bytes) + " bytes of loop carry");
      std::free(p_);
      p_ = q;
      cap_ = n;
    }
    return static_cast<char*>(p_);
  }

 private:
  void* p_ = nullptr;
  size_t cap_ = 0;
};

// One region plan's argument arrays (sized at prepare) and its frame, held across calls
// and iterations instead of leased from the plan's pool each time.
struct RegionCall {
  std::vector<const void*> in;
  std::vector<const int64_t*> in_dims;
  std::vector<void*> out;
  std::vector<const int64_t*> out_dims;
  std::unique_ptr<Program::FrameData> frame;
  RegionCall(const Program& p, size_t nin, size_t nout)
      : in(nin), in_dims(nin), out(nout), out_dims(nout), frame(p.acquire_frame()) {}
  void run(const Program& p, const Frame& f) {
    execute_block(p, BlockCall{in.data(), in_dims.data(), out.data(), out_dims.data(), f.syms, f.budget}, *frame);
  }
  // Points the call at the frame's values: `args` as the region's arguments, `outs` as its results.
  void bind(const std::vector<ValRef>& args, const std::vector<ValRef>& outs, const Frame& f) {
    for (size_t i = 0; i < args.size(); ++i) {
      in[i] = args[i].ptr(f);
      in_dims[i] = args[i].dims(f);
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      out[i] = outs[i].ptr(f);
      out_dims[i] = outs[i].dims(f);
    }
  }
};

// Per-call states of one kernel. Concurrent calls of a Program take different states;
// a state returns to the pool however its call ends.
template <typename State>
class StatePool {
 public:
  class Lease {
   public:
    Lease(const StatePool& pool, std::unique_ptr<State> s) : pool_(pool), s_(std::move(s)) {}
    ~Lease() { pool_.give(std::move(s_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    State& operator*() const { return *s_; }

   private:
    const StatePool& pool_;
    std::unique_ptr<State> s_;
  };
  // A pooled state, or make() when none is free.
  template <typename Make>
  Lease take(Make&& make) const {
    std::unique_ptr<State> s;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (!pool_.empty()) {
        s = std::move(pool_.back());
        pool_.pop_back();
      }
    }
    if (!s) s = make();
    return Lease(*this, std::move(s));
  }

 private:
  void give(std::unique_ptr<State> s) const {
    std::lock_guard<std::mutex> lk(mu_);
    pool_.push_back(std::move(s));
  }
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<State>> pool_;
};

// The carry of a loop lives in two scratch sets used in turn, so a region never writes the
// buffers it reads; the initial carry is read in place. Sets `off` (one entry per carry
// value) and returns both sets' bases.
void carry_sets(const std::vector<ValRef>& carry, const Frame& f, std::vector<size_t>& off, AlignedScratch* sets,
                char** base) {
  size_t total = 0;
  for (size_t i = 0; i < carry.size(); ++i) {
    off[i] = total;
    total += (carry[i].bytes(f) + 63) / 64 * 64;
  }
  base[0] = sets[0].reserve(total);
  base[1] = sets[1].reserve(total);
}

std::string types_text(const std::vector<TensorType>& ts) {
  std::string s = "(";
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + ts[i].to_string();
  return s + ")";
}

// Checks that a region's arguments and returns have the types the kernel will hand it
// (the verifier does too; the kernel must never index past what it was given), then
// prepares its plan.
std::shared_ptr<const Program> prepare_region(PrepareCtx& ctx, size_t r, const std::vector<TensorType>& args,
                                              const std::vector<TensorType>& rets) {
  const Block& b = ctx.op.region(r).block();
  std::string what = "region " + std::to_string(r) + " of " + ctx.where();
  std::vector<TensorType> have;
  for (const auto& a : b.arguments()) have.push_back(a->type());
  if (have != args)
    ctx.fail("region " + std::to_string(r) + " takes " + types_text(have) + ", expected " + types_text(args));
  const Operation* t = b.terminator();
  if (!t || !t->is_terminator()) ctx.fail("region " + std::to_string(r) + " does not end with evoxc.return");
  std::vector<TensorType> got;
  for (const Value* v : t->operands()) got.push_back(v->type());
  if (got != rets)
    ctx.fail("region " + std::to_string(r) + " returns " + types_text(got) + ", expected " + types_text(rets));
  return prepare_block(b, ctx.captures, ctx.sym_names(), what);
}

std::vector<TensorType> types_of(const PrepareCtx& ctx, std::span<const uint32_t> ids, size_t from, size_t to) {
  std::vector<TensorType> t;
  for (size_t i = from; i < to; ++i) t.push_back(ctx.val(ids[i]).type());
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
    auto lease = pool_.take([this] {
      auto s = std::make_unique<State>();
      for (const auto& r : regions) s->calls.emplace_back(*r, args.size(), outs.size());
      return s;
    });
    RegionCall& c = (*lease).calls[k];
    c.bind(args, outs, f);
    c.run(*regions[k], f);
  }

 private:
  struct State {
    std::vector<RegionCall> calls;  // one per region
  };
  StatePool<State> pool_;
};

KernelPtr make_cond(PrepareCtx& ctx) {
  const Operation& op = ctx.op;
  size_t nops = op.num_operands();
  if (nops < 1) ctx.fail("expects a predicate operand");
  auto k = std::make_unique<CondKernel>();
  const ValueDesc& p = ctx.operand(0);
  if (p.rank() != 0 || !(p.dtype() == DType::Bool || p.dtype() == DType::I32 || p.dtype() == DType::I64))
    ctx.fail("the predicate must be a rank-0 bool, int32 or int64, got " + p.type().to_string());
  if (op.regions().empty() || (p.dtype() == DType::Bool && op.regions().size() != 2))
    ctx.fail("a bool predicate needs 2 regions and an index at least 1, got " + std::to_string(op.regions().size()));
  k->pred_dtype = p.dtype();
  k->pred = ref(ctx, ctx.in[0]);
  for (size_t i = 1; i < ctx.in.size(); ++i) k->args.push_back(ref(ctx, ctx.in[i]));
  for (uint32_t o : ctx.out) k->outs.push_back(ref(ctx, o));
  std::vector<TensorType> args = types_of(ctx, ctx.in, 1, nops);
  std::vector<TensorType> rets = types_of(ctx, ctx.out, 0, ctx.out.size());
  for (size_t r = 0; r < op.regions().size(); ++r) k->regions.push_back(prepare_region(ctx, r, args, rets));
  return k;
}

// ---- while_loop ------------------------------------------------------------------------

void copy_carry(const std::vector<ValRef>& outs, const std::vector<const void*>& cur, const Frame& f) {
  for (size_t i = 0; i < outs.size(); ++i) {
    size_t n = outs[i].bytes(f);
    if (n != 0 && cur[i] != outs[i].ptr(f)) std::memmove(outs[i].ptr(f), cur[i], n);
  }
}

class WhileKernel final : public Kernel {
 public:
  const Operation* op = nullptr;  // for run-limit messages
  std::vector<ValRef> init, caps, outs;
  std::shared_ptr<const Program> cond, body;

  void run(const Frame& f) const override {
    size_t n = init.size();
    auto lease = pool_.take([this, n] {
      auto s = std::make_unique<State>(*cond, *body, n, caps.size());
      s->cond.out[0] = &s->pred;
      return s;
    });
    State& s = *lease;
    char* set[2];
    carry_sets(outs, f, s.off, s.sets, set);
    for (size_t i = 0; i < n; ++i) {
      s.cur[i] = init[i].ptr(f);
      s.cond.in_dims[i] = s.body.in_dims[i] = s.body.out_dims[i] = outs[i].dims(f);
    }
    for (size_t j = 0; j < caps.size(); ++j) {
      s.cond.in[n + j] = s.body.in[n + j] = caps[j].ptr(f);
      s.cond.in_dims[n + j] = s.body.in_dims[n + j] = caps[j].dims(f);
    }
    s.cond.out_dims[0] = outs[0].dims(f);  // never read: the predicate has rank 0
    // A loop whose predicate never turns false runs until the call's run limits stop it
    // (RunBudget::tick, before each body iteration); with none it runs forever.
    int64_t it = 0;
    try {
      for (int k = 0;; k ^= 1, ++it) {
        for (size_t i = 0; i < n; ++i) s.cond.in[i] = s.cur[i];
        s.cond.run(*cond, f);
        if (s.pred == 0) break;
        f.budget->tick(*op, it);
        for (size_t i = 0; i < n; ++i) {
          s.body.in[i] = s.cur[i];
          s.body.out[i] = set[k] + s.off[i];
        }
        s.body.run(*body, f);
        for (size_t i = 0; i < n; ++i) s.cur[i] = s.body.out[i];
      }
    } catch (const RunLimitError& e) {
      if (f.budget->stopped_here(*op)) throw;
      rethrow_in_loop(e, *op, it);
    }
    copy_carry(outs, s.cur, f);
  }

 private:
  struct State {
    RegionCall cond, body;
    std::vector<const void*> cur;
    std::vector<size_t> off;
    AlignedScratch sets[2];
    uint8_t pred = 0;
    State(const Program& c, const Program& b, size_t n, size_t ncaps)
        : cond(c, n + ncaps, 1), body(b, n + ncaps, n), cur(n), off(n) {}
  };
  StatePool<State> pool_;
};

KernelPtr make_while(PrepareCtx& ctx) {
  const Operation& op = ctx.op;
  size_t n = op.num_operands();
  if (op.regions().size() != 2) ctx.fail("expects 2 regions (cond, body)");
  if (n < 1 || ctx.out.size() != n) ctx.fail("expects a non-empty carry and one result per carry operand");
  auto k = std::make_unique<WhileKernel>();
  k->op = &op;
  for (size_t i = 0; i < ctx.in.size(); ++i) (i < n ? k->init : k->caps).push_back(ref(ctx, ctx.in[i]));
  for (uint32_t o : ctx.out) k->outs.push_back(ref(ctx, o));
  std::vector<TensorType> carry = types_of(ctx, ctx.in, 0, n);
  if (carry != types_of(ctx, ctx.out, 0, n)) ctx.fail("the results must have the carry's types");
  k->cond = prepare_region(ctx, 0, carry, {TensorType(DType::Bool, Shape())});
  k->body = prepare_region(ctx, 1, carry, carry);
  return k;
}

// ---- scan --------------------------------------------------------------------------------

class ScanKernel final : public Kernel {
 public:
  const Operation* op = nullptr;  // for run-limit messages
  std::vector<ValRef> init, xs, caps, carry_out, ys;
  std::shared_ptr<const Program> body;
  int64_t static_length = -1;
  bool reverse = false;

  void run(const Frame& f) const override {
    size_t nc = init.size(), nx = xs.size(), ny = ys.size();
    int64_t len = xs.empty() ? static_length : xs[0].dims(f)[0];
    auto lease = pool_.take([&] { return std::make_unique<State>(*body, nc, nx, ny, caps.size()); });
    State& s = *lease;
    RegionCall& c = s.body;
    char* set[2];
    carry_sets(carry_out, f, s.off, s.sets, set);
    for (size_t i = 0; i < nc; ++i) s.cur[i] = init[i].ptr(f);
    for (size_t j = 0; j < nx; ++j) s.x_step[j] = len > 0 ? xs[j].bytes(f) / static_cast<size_t>(len) : 0;
    for (size_t j = 0; j < ny; ++j) s.y_step[j] = len > 0 ? ys[j].bytes(f) / static_cast<size_t>(len) : 0;
    for (size_t i = 0; i < nc; ++i) c.in_dims[i] = c.out_dims[i] = carry_out[i].dims(f);
    for (size_t j = 0; j < nx; ++j) c.in_dims[nc + j] = xs[j].dims(f) + 1;
    for (size_t j = 0; j < caps.size(); ++j) {
      c.in[nc + nx + j] = caps[j].ptr(f);
      c.in_dims[nc + nx + j] = caps[j].dims(f);
    }
    for (size_t j = 0; j < ny; ++j) c.out_dims[nc + j] = ys[j].dims(f) + 1;
    int k = 0;
    int64_t t = 0;
    try {
      for (; t < len; ++t, k ^= 1) {
        f.budget->tick(*op, t);
        auto step = static_cast<size_t>(reverse ? len - 1 - t : t);
        for (size_t i = 0; i < nc; ++i) {
          c.in[i] = s.cur[i];
          c.out[i] = set[k] + s.off[i];
        }
        for (size_t j = 0; j < nx; ++j) c.in[nc + j] = static_cast<const char*>(xs[j].ptr(f)) + step * s.x_step[j];
        for (size_t j = 0; j < ny; ++j) c.out[nc + j] = static_cast<char*>(ys[j].ptr(f)) + step * s.y_step[j];
        c.run(*body, f);
        for (size_t i = 0; i < nc; ++i) s.cur[i] = c.out[i];
      }
    } catch (const RunLimitError& e) {
      if (f.budget->stopped_here(*op)) throw;
      rethrow_in_loop(e, *op, t);
    }
    copy_carry(carry_out, s.cur, f);
  }

 private:
  struct State {
    RegionCall body;
    std::vector<const void*> cur;
    std::vector<size_t> off, x_step, y_step;
    AlignedScratch sets[2];
    State(const Program& b, size_t nc, size_t nx, size_t ny, size_t ncaps)
        : body(b, nc + nx + ncaps, nc + ny), cur(nc), off(nc), x_step(nx), y_step(ny) {}
  };
  StatePool<State> pool_;
};

KernelPtr make_scan(PrepareCtx& ctx) {
  const Operation& op = ctx.op;
  const AttrMap& at = op.attributes();
  size_t nops = op.num_operands();
  if (op.regions().size() != 1) ctx.fail("expects 1 region (the body)");
  int64_t nc_attr = ctx.attr_int("num_carry");
  if (nc_attr < 0 || static_cast<size_t>(nc_attr) > nops || static_cast<size_t>(nc_attr) > ctx.out.size())
    ctx.fail("num_carry = " + std::to_string(nc_attr) + " is out of range");
  auto nc = static_cast<size_t>(nc_attr);
  auto k = std::make_unique<ScanKernel>();
  k->op = &op;
  k->reverse = at.count("reverse") ? ctx.attr_bool("reverse") : false;
  if (at.count("length")) {
    k->static_length = ctx.attr_int("length");
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
    const TensorType& t = ctx.operand(i).type();
    if (t.rank() == 0) ctx.fail("xs operand " + std::to_string(i) + " has rank 0");
    if (k->static_length < 0 && i == nc) len = t.shape[0];
    ctx.require_equal(t.shape[0], len, "leading extent of xs operand " + std::to_string(i) + " and the scan length");
    args.push_back(drop_leading(t));
  }
  for (const ValRef& y : k->ys) {
    const TensorType& t = ctx.val(y.id).type();
    if (t.rank() == 0) ctx.fail("a stacked result has rank 0");
    ctx.require_equal(t.shape[0], len, "leading extent of a stacked result and the scan length");
    rets.push_back(drop_leading(t));
  }
  k->body = prepare_region(ctx, 0, args, rets);
  return k;
}

// ---- block_call ------------------------------------------------------------------------

// A custom op with an implementation registered for the interpreter: the operands and results handed to it as host
// tensors viewing the frame's buffers (no copy).
class BlockImplKernel final : public Kernel {
 public:
  std::shared_ptr<const BlockImpl> impl;
  std::vector<ValRef> args, outs;
  std::vector<DType> arg_types, out_types;
  std::vector<uint32_t> arg_ranks, out_ranks;

  void run(const Frame& f) const override {
    auto view = [&](const ValRef& r, DType t, uint32_t rank) {
      const int64_t* d = r.dims(f);
      return Tensor::borrow(r.ptr(f), std::vector<int64_t>(d, d + rank), t);
    };
    std::vector<Tensor> in, out;
    in.reserve(args.size());
    out.reserve(outs.size());
    for (size_t i = 0; i < args.size(); ++i) in.push_back(view(args[i], arg_types[i], arg_ranks[i]));
    for (size_t i = 0; i < outs.size(); ++i) out.push_back(view(outs[i], out_types[i], out_ranks[i]));
    (*impl)(in, out);
  }
};

// Without one: its portable body, run as a region.
class BlockBodyKernel final : public Kernel {
 public:
  std::vector<ValRef> args, outs;  // args: the operands, then the body's captures
  std::shared_ptr<const Program> body;

  void run(const Frame& f) const override {
    auto lease = pool_.take([this] { return std::make_unique<RegionCall>(*body, args.size(), outs.size()); });
    RegionCall& c = *lease;
    c.bind(args, outs, f);
    c.run(*body, f);
  }

 private:
  StatePool<RegionCall> pool_;
};

KernelPtr make_block(PrepareCtx& ctx) {
  const Operation& op = ctx.op;
  std::shared_ptr<const BlockImpl> impl = find_block_impl(ctx.attr_string("block"), "interp");
  if (impl && ctx.captures.empty()) {
    auto k = std::make_unique<BlockImplKernel>();
    k->impl = std::move(impl);
    for (size_t i = 0; i < op.num_operands(); ++i) {
      k->args.push_back(ref(ctx, ctx.in[i]));
      k->arg_types.push_back(ctx.operand(i).dtype());
      k->arg_ranks.push_back(ctx.operand(i).rank());
    }
    for (size_t i = 0; i < ctx.out.size(); ++i) {
      k->outs.push_back(ref(ctx, ctx.out[i]));
      k->out_types.push_back(ctx.result(i).dtype());
      k->out_ranks.push_back(ctx.result(i).rank());
    }
    return k;
  }
  auto k = std::make_unique<BlockBodyKernel>();
  for (uint32_t i : ctx.in) k->args.push_back(ref(ctx, i));
  for (uint32_t o : ctx.out) k->outs.push_back(ref(ctx, o));
  std::vector<TensorType> args = types_of(ctx, ctx.in, 0, op.num_operands());
  std::vector<TensorType> rets = types_of(ctx, ctx.out, 0, ctx.out.size());
  k->body = prepare_region(ctx, 0, args, rets);
  return k;
}

// Control ops receive their regions' captured values after their operands (PrepareCtx::captures).
template <KernelPtr (*Make)(PrepareCtx&)>
KernelPtr control(PrepareCtx& ctx) {
  if (ctx.in.size() != ctx.op.num_operands() + ctx.captures.size())
    ctx.fail("the planner passed " + std::to_string(ctx.in.size()) + " inputs for " +
             std::to_string(ctx.op.num_operands()) + " operands and " + std::to_string(ctx.captures.size()) +
             " captured values");
  return Make(ctx);
}

}  // namespace

void install_control_kernels(KernelTable& t) {
  t.set("cond", &control<make_cond>);
  t.set("while_loop", &control<make_while>);
  t.set("scan", &control<make_scan>);
  t.set("block_call", &control<make_block>);
  t.defer("return",
          "evoxc.return ends a block, where prepare reads its operands as the block's results; it cannot stand "
          "before the end of a block");
}

}  // namespace evoxc::interp
