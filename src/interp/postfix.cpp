// The postfix_eval kernel: a population of postfix programs run as a stack machine over blocks of cases, each step
// one call of the interpreter's own elementwise kernel (so a program's values equal its graph's, bit for bit).
#include "postfix.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "evoxc/core/error.h"
#include "kernel_table.h"
#include "scalar_convert.h"
#include "thread_pool.h"

namespace evoxc::interp {
namespace {

constexpr const char* kOp = "postfix_eval";

// A value on the stack: `step` 1 walks a block of cases, 0 is one value for every case (a constant, or
// a primitive of constants). `buf` >= 0 when the value lives in scratch buffer `buf`.
struct Slot {
  const char* p;
  int64_t step;
  int32_t buf;
};

// One thread's scratch: block buffers and the stacks, grown to the largest call seen.
struct Scratch {
  std::vector<uint64_t> mem;  // 8-byte elements: any dtype fits
  std::vector<Slot> stack;
  std::vector<int32_t> free_ids;
  int32_t nfree = 0;
  int64_t nbuf = 0;

  void reserve(int64_t buffers, int64_t stack_size) {
    const auto need = static_cast<size_t>(buffers * PostfixEngine::kBlock);
    if (mem.size() < need) mem.resize(need);
    if (stack.size() < static_cast<size_t>(stack_size)) stack.resize(static_cast<size_t>(stack_size));
    if (free_ids.size() < static_cast<size_t>(buffers)) free_ids.resize(static_cast<size_t>(buffers));
    nbuf = buffers;
  }
  void reset() {
    nfree = static_cast<int32_t>(nbuf);
    for (int32_t i = 0; i < nfree; ++i) free_ids[static_cast<size_t>(i)] = nfree - 1 - i;
  }
  int32_t acquire() { return free_ids[static_cast<size_t>(--nfree)]; }
  void release(int32_t b) {
    if (b >= 0) free_ids[static_cast<size_t>(nfree++)] = b;
  }
  char* data(int32_t b) { return reinterpret_cast<char*>(mem.data() + b * PostfixEngine::kBlock); }
};

thread_local Scratch tls_scratch;

// Runs one primitive on `args` (its arity of stack values) over n cases; the result owns a fresh buffer,
// reuses one of its computed operands' buffers, or is one of the arguments. With `final_out`, the body's
// last op writes a result that covers every case there instead (the program's output row): no copy.
Slot apply(const PostfixEngine::Primitive& prim, const Slot* args, int64_t n, const uint64_t* literals, Scratch& s,
           char* final_out) {
  Slot ls[32];
  bool own[32];
  int j = 0;
  const PostfixEngine::Step* last = &prim.steps.back();
  // Where a computing step writes: the output row (last step, full block), an operand's buffer it
  // may overwrite (`reuse`, -1 for none), or a fresh buffer.
  auto dest = [&](const PostfixEngine::Step& st, int64_t step, int32_t reuse) -> Slot {
    if (final_out != nullptr && &st == last && step != 0) return {final_out, 1, -1};
    const int32_t b = reuse >= 0 ? reuse : s.acquire();
    return {s.data(b), step, b};
  };
  for (const PostfixEngine::Step& st : prim.steps) {
    switch (st.kind) {
      case PostfixEngine::Step::Kind::Arg:
        ls[j] = args[st.arg];
        own[j++] = false;
        break;
      case PostfixEngine::Step::Kind::Literal:
        ls[j] = {reinterpret_cast<const char*>(literals + st.arg), 0, -1};
        own[j++] = false;
        break;
      case PostfixEngine::Step::Kind::Unary: {
        Slot& a = ls[j - 1];
        const int64_t m = a.step != 0 ? n : 1;
        Slot r = dest(st, a.step, own[j - 1] && st.in_place ? a.buf : -1);
        st.unary(a.p, const_cast<char*>(r.p), m, st.params);
        if (own[j - 1] && r.buf != a.buf) s.release(a.buf);
        a = r;
        own[j - 1] = r.buf >= 0;
        break;
      }
      case PostfixEngine::Step::Kind::Binary: {
        Slot &a = ls[j - 2], &b = ls[j - 1];
        const int64_t step = (a.step | b.step) != 0 ? 1 : 0;
        const int64_t m = step != 0 ? n : 1;
        int32_t reuse = -1;
        if (st.in_place && own[j - 2] && a.step != 0) {
          reuse = a.buf;
        } else if (st.in_place && own[j - 1] && b.step != 0) {
          reuse = b.buf;
        }
        Slot r = dest(st, step, reuse);
        st.binary(a.p, a.step, b.p, b.step, const_cast<char*>(r.p), m);
        if (own[j - 2] && a.buf != r.buf) s.release(a.buf);
        if (own[j - 1] && b.buf != r.buf) s.release(b.buf);
        a = r;
        own[j - 2] = r.buf >= 0;
        --j;
        break;
      }
      case PostfixEngine::Step::Kind::Select: {
        Slot &c = ls[j - 3], &a = ls[j - 2], &b = ls[j - 1];
        const int64_t step = (c.step | a.step | b.step) != 0 ? 1 : 0;
        const int64_t m = step != 0 ? n : 1;
        Slot r = dest(st, step, -1);
        st.ternary(c.p, c.step, a.p, a.step, b.p, b.step, const_cast<char*>(r.p), m);
        for (int k = j - 3; k < j; ++k)
          if (own[k]) s.release(ls[k].buf);
        c = r;
        own[j - 3] = r.buf >= 0;
        j -= 2;
        break;
      }
    }
  }
  return ls[0];
}

}  // namespace

PostfixEngine::PostfixEngine(const std::string& primitives, DType t) : esz_(size_of(t)) {
  for (const PostfixPrimitive& p : parse_postfix_primitives(primitives, kOp)) {
    std::vector<DType> types = postfix_body_types(p, t, kOp);
    if (p.depth > 32)
      throw BackendError(std::string(kOp) + ": primitive '" + p.name + "' holds " + std::to_string(p.depth) +
                         " values at once; the interpreter's bodies hold at most 32");
    Primitive r;
    r.arity = p.arity;
    r.depth = p.depth;
    std::vector<DType> stack;  // operand dtypes, for the kernel lookups
    for (size_t i = 0; i < p.body.size(); ++i) {
      const PostfixToken& tok = p.body[i];
      Step st{};
      if (tok.kind == PostfixToken::Kind::Arg) {
        st.kind = Step::Kind::Arg;
        st.arg = tok.arg;
        stack.push_back(t);
      } else if (tok.kind == PostfixToken::Kind::Literal) {
        st.kind = Step::Kind::Literal;
        st.arg = static_cast<int>(literals_.size());
        uint64_t bits = 0;
        visit_dtype(t, [&](auto tag) {
          using T = decltype(tag);
          T v = from_double<T>(tok.literal);
          std::memcpy(&bits, &v, sizeof v);
        });
        literals_.push_back(bits);
        stack.push_back(t);
      } else {
        const OpDef& op = *tok.op;
        const auto n = static_cast<size_t>(op.min_operands);
        const DType operand = stack[stack.size() - n];
        std::string missing;
        if (n == 1) {
          st.kind = Step::Kind::Unary;
          st.unary = unary_kernel(op, operand, {}, &st.params);
          if (st.unary == nullptr) missing = "unary";
        } else if (n == 2) {
          st.kind = Step::Kind::Binary;
          st.binary = binary_kernel(op, operand);
          if (st.binary == nullptr) missing = "binary";
        } else {
          st.kind = Step::Kind::Select;
          st.ternary = select_kernel(stack[stack.size() - 1]);
          if (st.ternary == nullptr) missing = "select";
        }
        if (!missing.empty())
          throw BackendError(std::string(kOp) + ": primitive '" + p.name + "': evoxc." + op.name + " has no " +
                             missing + " kernel for " + std::string(dtype_name(operand)));
        st.in_place = types[i] == operand;
        stack.resize(stack.size() - n);
        stack.push_back(types[i]);
      }
      r.steps.push_back(st);
    }
    max_depth_ = std::max(max_depth_, r.depth);
    prims_.push_back(std::move(r));
  }
}

void PostfixEngine::validate(const int32_t* codes, const int32_t* args, const PostfixDims& d) const {
  const auto nprims = static_cast<int64_t>(prims_.size());
  for (int64_t p = 0; p < d.programs; ++p) {
    const int32_t* c = codes + p * d.length;
    const int32_t* a = args + p * d.length;
    int64_t depth = 0, i = 0;
    auto bad = [&](const std::string& why) {
      throw ValidationError(std::string(kOp) + ": program " + std::to_string(p) + ", position " + std::to_string(i) +
                            ": " + why);
    };
    for (; i < d.length && c[i] != kPostfixEnd; ++i) {
      const int32_t code = c[i];
      if (code == kPostfixVar) {
        if (a[i] < 0 || a[i] >= d.variables)
          bad("variable " + std::to_string(a[i]) + " is outside [0, " + std::to_string(d.variables) + ")");
        ++depth;
      } else if (code == kPostfixConst) {
        if (a[i] < 0 || a[i] >= d.constants)
          bad("constant " + std::to_string(a[i]) + " is outside [0, " + std::to_string(d.constants) + ")");
        ++depth;
      } else if (code >= kPostfixFirstPrimitive && code - kPostfixFirstPrimitive < nprims) {
        const int arity = prims_[static_cast<size_t>(code - kPostfixFirstPrimitive)].arity;
        if (depth < arity)
          bad("primitive " + std::to_string(code - kPostfixFirstPrimitive) + " takes " + std::to_string(arity) +
              " values but the stack holds " + std::to_string(depth));
        depth -= arity - 1;
      } else {
        bad("code " + std::to_string(code) + " is not 0 (end), 1 (variable), 2 (constant) or 3.." +
            std::to_string(kPostfixFirstPrimitive + nprims - 1) + " (a primitive)");
      }
    }
    if (depth != 1) bad("the program leaves " + std::to_string(depth) + " values; a program leaves exactly one");
  }
}

void PostfixEngine::run_block(const int32_t* codes, const int32_t* args, const char* consts, const char* x, char* out,
                              const PostfixDims& d, int64_t p0, int64_t p1, int64_t c0, int64_t n) const {
  Scratch& s = tls_scratch;
  s.reserve(d.length + max_depth_ + 1, d.length + 1);
  Slot* stack = s.stack.data();
  for (int64_t p = p0; p < p1; ++p) {
    s.reset();
    char* o = out + static_cast<size_t>(p * d.cases + c0) * esz_;
    const int32_t* c = codes + p * d.length;
    const int32_t* a = args + p * d.length;
    int64_t depth = 0;
    for (int64_t i = 0; i < d.length && c[i] != kPostfixEnd; ++i) {
      const int32_t code = c[i];
      if (code == kPostfixVar) {
        stack[depth++] = {x + static_cast<size_t>(a[i] * d.cases + c0) * esz_, 1, -1};
      } else if (code == kPostfixConst) {
        stack[depth++] = {consts + static_cast<size_t>(p * d.constants + a[i]) * esz_, 0, -1};
      } else {
        const Primitive& prim = prims_[static_cast<size_t>(code - kPostfixFirstPrimitive)];
        const int64_t base = depth - prim.arity;
        const bool final = i + 1 == d.length || c[i + 1] == kPostfixEnd;
        Slot r = apply(prim, stack + base, n, literals_.data(), s, final ? o : nullptr);
        for (int64_t k = base; k < depth; ++k)
          if (stack[k].buf != r.buf) s.release(stack[k].buf);
        stack[base] = r;
        depth = base + 1;
      }
    }
    const Slot& r = stack[0];
    if (r.p == o) continue;  // the last op wrote the row
    if (r.step != 0) {
      std::memcpy(o, r.p, static_cast<size_t>(n) * esz_);
    } else {
      for (int64_t k = 0; k < n; ++k) std::memcpy(o + static_cast<size_t>(k) * esz_, r.p, esz_);
    }
  }
}

void PostfixEngine::run(const int32_t* codes, const int32_t* args, const void* consts, const void* x, void* out,
                        const PostfixDims& d) const {
  validate(codes, args, d);
  if (d.programs == 0 || d.cases == 0) return;
  const int64_t blocks = (d.cases + kBlock - 1) / kBlock;
  // Programs per task: about kParallelGrain element steps each (a code is about one step per case).
  const int64_t per_program = std::max<int64_t>(1, std::min(d.cases, kBlock) * std::max<int64_t>(1, d.length));
  const int64_t group = std::max<int64_t>(1, kParallelGrain / per_program);
  const int64_t groups = (d.programs + group - 1) / group;
  const auto* cs = static_cast<const char*>(consts);
  const auto* xs = static_cast<const char*>(x);
  auto* os = static_cast<char*>(out);
  parallel_for(blocks * groups, [&](int64_t task) {
    const int64_t b = task % blocks, g = task / blocks;
    const int64_t c0 = b * kBlock;
    run_block(codes, args, cs, xs, os, d, g * group, std::min(d.programs, (g + 1) * group), c0,
              std::min(kBlock, d.cases - c0));
  });
}

namespace {

class PostfixKernel final : public Kernel {
 public:
  PostfixKernel(const std::string& prims, DType t) : engine(prims, t) {}
  void run(const Frame& f) const override {
    const int64_t* cd = f.dims + codes_dims;
    const int64_t* kd = f.dims + consts_dims;
    const int64_t* xd = f.dims + x_dims;
    PostfixDims d;
    d.programs = cd[0];
    d.length = cd[1];
    d.constants = kd[1];
    d.variables = xd[0];
    d.cases = 1;
    for (uint32_t i = 1; i < x_rank; ++i) d.cases *= xd[i];
    engine.run(static_cast<const int32_t*>(f.ptr[in[0]]), static_cast<const int32_t*>(f.ptr[in[1]]), f.ptr[in[2]],
               f.ptr[in[3]], f.ptr[out], d);
  }
  PostfixEngine engine;
  uint32_t in[4] = {}, out = 0;
  uint32_t codes_dims = 0, consts_dims = 0, x_dims = 0, x_rank = 0;
};

KernelPtr make_postfix(PrepareCtx& ctx) {
  if (ctx.op.num_operands() != 4 || ctx.op.num_results() != 1) ctx.fail("expects 4 operands and one result");
  std::unique_ptr<PostfixKernel> k;
  try {
    k = std::make_unique<PostfixKernel>(ctx.attr_string("primitives"), ctx.operand(3).dtype());
  } catch (const BackendError& e) {
    ctx.fail(e.what());
  }
  for (size_t i = 0; i < 4; ++i) k->in[i] = ctx.in[i];
  k->out = ctx.out[0];
  k->codes_dims = ctx.operand(0).dim_off;
  k->consts_dims = ctx.operand(2).dim_off;
  k->x_dims = ctx.operand(3).dim_off;
  k->x_rank = ctx.operand(3).rank();
  return k;
}

}  // namespace

void install_postfix_kernels(KernelTable& t) { t.set("postfix_eval", &make_postfix); }

}  // namespace evoxc::interp
