// The row_switch kernel: each run of consecutive rows with one variant is one call of that variant's own
// elementwise kernel over its contiguous row range, so no row computes another variant's values.
#include "evoxc/ops/row_switch.h"

#include <algorithm>
#include <string>
#include <vector>

#include "elementwise.h"
#include "kernel_table.h"
#include "thread_pool.h"

namespace evoxc::interp {
namespace {

constexpr int kMaxOperands = 2;  // every variant is unary, binary or a comparison
constexpr int kMaxRank = 16;

// The collapsed iteration space of one run of rows: the result is contiguous over `ext`, operand k
// advances str[k][i] elements per step along axis i (0 where it broadcasts); the innermost stride
// is 0 or 1, which is what the kernels take.
struct Geometry {
  int rank = 1;
  int64_t total = 0;
  int64_t ext[kMaxRank] = {};
  int64_t str[kMaxOperands][kMaxRank] = {};
};

// Collapses the space `dims` (rank `rank`) in which operand k has extents odims[k] (same rank, 1
// where it broadcasts): unit axes drop out, neighbours whose strides chain merge.
void collapse(int n_ops, const int64_t* dims, int rank, const int64_t (*odims)[kMaxRank], Geometry& g) {
  int64_t tmp[kMaxOperands][kMaxRank];
  int64_t run[kMaxOperands] = {1, 1};
  g.total = 1;
  for (int i = 0; i < rank; ++i) g.total *= dims[i];
  for (int i = rank - 1; i >= 0; --i)
    for (int k = 0; k < n_ops; ++k) {
      tmp[k][i] = (odims[k][i] == 1 && dims[i] != 1) ? 0 : run[k];
      run[k] *= odims[k][i];
    }
  int r = 0;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] == 1) continue;
    if (r > 0) {
      bool merge = true;
      for (int k = 0; k < n_ops; ++k) merge = merge && g.str[k][r - 1] == tmp[k][i] * dims[i];
      if (merge) {
        g.ext[r - 1] *= dims[i];
        for (int k = 0; k < n_ops; ++k) g.str[k][r - 1] = tmp[k][i];
        continue;
      }
    }
    g.ext[r] = dims[i];
    for (int k = 0; k < n_ops; ++k) g.str[k][r] = tmp[k][i];
    ++r;
  }
  if (r == 0) {
    g.ext[0] = 1;
    for (int k = 0; k < n_ops; ++k) g.str[k][0] = 0;
    r = 1;
  }
  g.rank = r;
}

// A run of rows with one variant: where it starts in the result and in each operand, and its space.
struct Run {
  int variant = 0;
  int64_t out_off = 0;
  int64_t in_off[kMaxOperands] = {};
  Geometry geo;
};

// A slice of one run's space: outer indices [q0, q1) of the collapsed space, inner [c0, c1).
struct Piece {
  uint32_t run;
  int64_t q0, q1, c0, c1;
};

class RowSwitchKernel final : public Kernel {
 public:
  void run(const Frame& f) const override {
    if (tasks_.size() <= 2) {
      for (const Piece& p : pieces_) run_piece(f, p);
      return;
    }
    parallel_for(static_cast<int64_t>(tasks_.size() - 1), [&](int64_t t) {
      for (size_t i = tasks_[static_cast<size_t>(t)]; i < tasks_[static_cast<size_t>(t) + 1]; ++i)
        run_piece(f, pieces_[i]);
    });
  }

  int n_ops = 1;
  std::vector<UnaryFn> unary;
  std::vector<UnaryParams> params;
  std::vector<BinaryFn> binary;
  uint32_t in[kMaxOperands] = {}, out = 0;
  size_t esz[kMaxOperands] = {}, oesz = 0;
  std::vector<Run> runs;
  std::vector<Piece> pieces_;
  std::vector<size_t> tasks_;  // task t runs pieces [tasks_[t], tasks_[t + 1])

 private:
  void run_piece(const Frame& f, const Piece& p) const {
    const Run& r = runs[p.run];
    const Geometry& g = r.geo;
    char* o = static_cast<char*>(f.ptr[out]) + static_cast<size_t>(r.out_off) * oesz;
    const char* base[kMaxOperands];
    for (int k = 0; k < n_ops; ++k)
      base[k] = static_cast<const char*>(f.ptr[in[k]]) + static_cast<size_t>(r.in_off[k]) * esz[k];
    const int rank = g.rank;
    const int64_t inner = g.ext[rank - 1];
    if (n_ops == 1) {  // a unary variant: the operand has the result's shape, so the run is flat
      UnaryFn fn = unary[static_cast<size_t>(r.variant)];
      int64_t b = p.q0 * inner + p.c0, n = (p.q1 - p.q0 - 1) * inner + (p.c1 - p.c0);
      fn(base[0] + static_cast<size_t>(b) * esz[0], o + static_cast<size_t>(b) * oesz, n,
         params[static_cast<size_t>(r.variant)]);
      return;
    }
    BinaryFn fn = binary[static_cast<size_t>(r.variant)];
    int64_t idx[kMaxRank];
    int64_t off[kMaxOperands] = {0, 0};
    int64_t q = p.q0;
    for (int i = rank - 2; i >= 0; --i) {
      idx[i] = q % g.ext[i];
      q /= g.ext[i];
      for (int k = 0; k < 2; ++k) off[k] += idx[i] * g.str[k][i];
    }
    const int64_t s0 = g.str[0][rank - 1], s1 = g.str[1][rank - 1];
    for (q = p.q0; q < p.q1; ++q) {
      fn(base[0] + static_cast<size_t>(off[0] + p.c0 * s0) * esz[0], s0,
         base[1] + static_cast<size_t>(off[1] + p.c0 * s1) * esz[1], s1,
         o + static_cast<size_t>(q * inner + p.c0) * oesz, p.c1 - p.c0);
      for (int i = rank - 2; i >= 0; --i) {
        for (int k = 0; k < 2; ++k) off[k] += g.str[k][i];
        if (++idx[i] < g.ext[i]) break;
        for (int k = 0; k < 2; ++k) off[k] -= g.str[k][i] * g.ext[i];
        idx[i] = 0;
      }
    }
  }
};

// Cuts a run's space into pieces of about kParallelGrain elements (a unary run is flat, so its
// pieces may span outer rows).
void add_pieces(uint32_t run, const Geometry& g, bool flat, std::vector<Piece>& out) {
  if (g.total == 0) return;
  const int64_t inner = g.ext[g.rank - 1];
  const int64_t rows = g.total / inner;
  if (flat) {
    for (int64_t b = 0; b < g.total; b += kParallelGrain) {
      int64_t e = std::min(g.total, b + kParallelGrain);
      // [b, e) as outer rows [b / inner, (e - 1) / inner + 1) with the first and last partial.
      out.push_back({run, b / inner, (e - 1) / inner + 1, b % inner, (e - 1) % inner + 1});
    }
    return;
  }
  if (inner >= kParallelGrain) {
    for (int64_t q = 0; q < rows; ++q)
      for (int64_t c = 0; c < inner; c += kParallelGrain)
        out.push_back({run, q, q + 1, c, std::min(inner, c + kParallelGrain)});
    return;
  }
  int64_t per = std::max<int64_t>(1, kParallelGrain / inner);
  for (int64_t q = 0; q < rows; q += per) out.push_back({run, q, std::min(rows, q + per), 0, inner});
}

int64_t piece_size(const Piece& p, const Geometry& g) {
  const int64_t inner = g.ext[g.rank - 1];
  return (p.q1 - p.q0 - 1) * inner + (p.c1 - p.c0);
}

KernelPtr make_row_switch(PrepareCtx& ctx) {
  if (ctx.op.num_results() != 1) ctx.fail("expects one result");
  const size_t n = ctx.op.num_operands();
  if (n < 1 || n > static_cast<size_t>(kMaxOperands))
    ctx.fail("expects 1 or 2 operands (every variant is unary, binary or a comparison), got " + std::to_string(n));
  if (!ctx.all_static())
    ctx.fail(
        "has a symbolic extent; the interpreter's row_switch does not support symbolic non-leading extents "
        "(the leading one is static by construction): specialise the symbols first");
  const ValueDesc& res = ctx.result();
  const int rank = static_cast<int>(res.rank());
  if (rank < 1 || rank > kMaxRank) ctx.fail("supports results of rank 1 to " + std::to_string(kMaxRank));
  const int64_t* rdims = ctx.static_dims(ctx.out[0]);
  const std::vector<int64_t>& rows = ctx.attr_ints("rows");
  if (static_cast<int64_t>(rows.size()) != rdims[0])
    ctx.fail("'rows' has " + std::to_string(rows.size()) + " entries but the result has " + std::to_string(rdims[0]) +
             " rows");

  // The variants, resolved once here: each must give this op's result type on these operands,
  // so its kernel writes exactly the result's elements.
  std::vector<TensorType> operand_types;
  for (size_t k = 0; k < n; ++k) operand_types.push_back(ctx.operand(k).type());
  auto k = std::make_unique<RowSwitchKernel>();
  k->n_ops = static_cast<int>(n);
  const DType t = ctx.operand(0).dtype();
  std::vector<const OpDef*> variants;
  try {
    variants = row_switch_variants(ctx.attrs());
  } catch (const TypeError& e) {
    ctx.fail(e.what());
  }
  for (const OpDef* v : variants) {
    const std::string& name = v->name;
    try {
      std::vector<TensorType> r = infer_result_types(*v, operand_types, {});
      if (r.size() != 1 || r[0] != res.type())
        ctx.fail("variant '" + name + "' does not give the result type " + res.type().to_string());
    } catch (const BackendError&) {
      throw;
    } catch (const Error& e) {
      ctx.fail("variant '" + name + "': " + e.what());
    }
    if (n == 1) {
      UnaryParams p;
      UnaryFn fn = unary_kernel(*v, t, {}, &p);
      if (fn == nullptr) ctx.fail("variant '" + name + "' has no unary kernel for dtype " + std::string(dtype_name(t)));
      k->unary.push_back(fn);
      k->params.push_back(p);
    } else {
      BinaryFn fn = binary_kernel(*v, t);
      if (fn == nullptr)
        ctx.fail("variant '" + name + "' has no binary kernel for dtype " + std::string(dtype_name(t)));
      k->binary.push_back(fn);
    }
  }
  const size_t num_variants = n == 1 ? k->unary.size() : k->binary.size();
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i] < 0 || rows[i] >= static_cast<int64_t>(num_variants))
      ctx.fail("'rows' entry " + std::to_string(i) + " is " + std::to_string(rows[i]) + ", outside [0, " +
               std::to_string(num_variants) + ")");

  // Each operand's extents as a rank-`rank` space (a shared one padded with leading ones) and how
  // far its data advances per row (0 when shared).
  int64_t odims[kMaxOperands][kMaxRank];
  int64_t row_step[kMaxOperands] = {0, 0};
  int64_t row_numel = 1;
  for (int i = 1; i < rank; ++i) row_numel *= rdims[i];
  for (size_t j = 0; j < n; ++j) {
    const ValueDesc& a = ctx.operand(j);
    const int ar = static_cast<int>(a.rank());
    const int64_t* ad = ctx.static_dims(ctx.in[j]);
    if (ar > rank) ctx.fail("operand " + std::to_string(j) + " has a higher rank than the result");
    const bool per_row = ar == rank;
    if (per_row && ad[0] != rdims[0])
      ctx.fail("operand " + std::to_string(j) + " has the result's rank but not its leading extent " +
               std::to_string(rdims[0]));
    for (int i = 0; i < rank; ++i) {
      int oi = i - (rank - ar);
      odims[j][i] = oi >= 0 ? ad[oi] : 1;
      if (i > 0 && odims[j][i] != 1 && odims[j][i] != rdims[i])
        ctx.fail("operand " + std::to_string(j) + " does not broadcast to a row of the result");
    }
    if (per_row) {
      row_step[j] = 1;
      for (int i = 1; i < rank; ++i) row_step[j] *= odims[j][i];
    }
    k->in[j] = ctx.in[j];
    k->esz[j] = size_of(a.dtype());
    // The result may overwrite a per-row operand read at the very positions it writes.
    bool same_positions = per_row && size_of(a.dtype()) == size_of(res.dtype());
    for (int i = 1; i < rank; ++i) same_positions = same_positions && odims[j][i] == rdims[i];
    if (same_positions) ctx.in_place_operands |= 1u << j;
  }
  k->out = ctx.out[0];
  k->oesz = size_of(res.dtype());

  // One run per maximal range of consecutive rows with one variant.
  for (size_t r0 = 0; r0 < rows.size();) {
    size_t r1 = r0 + 1;
    while (r1 < rows.size() && rows[r1] == rows[r0]) ++r1;
    Run run;
    run.variant = static_cast<int>(rows[r0]);
    run.out_off = static_cast<int64_t>(r0) * row_numel;
    int64_t dims[kMaxRank];
    int64_t view[kMaxOperands][kMaxRank];
    dims[0] = static_cast<int64_t>(r1 - r0);
    for (int i = 1; i < rank; ++i) dims[i] = rdims[i];
    for (size_t j = 0; j < n; ++j) {
      run.in_off[j] = static_cast<int64_t>(r0) * row_step[j];
      for (int i = 0; i < rank; ++i) view[j][i] = odims[j][i];
      view[j][0] = row_step[j] != 0 ? dims[0] : 1;
    }
    collapse(static_cast<int>(n), dims, rank, view, run.geo);
    k->runs.push_back(run);
    add_pieces(static_cast<uint32_t>(k->runs.size() - 1), run.geo, n == 1, k->pieces_);
    r0 = r1;
  }
  // Tasks of about kParallelGrain elements each, so many short runs share a task.
  k->tasks_.push_back(0);
  int64_t acc = 0;
  for (size_t i = 0; i < k->pieces_.size(); ++i) {
    acc += piece_size(k->pieces_[i], k->runs[k->pieces_[i].run].geo);
    if (acc >= kParallelGrain) {
      k->tasks_.push_back(i + 1);
      acc = 0;
    }
  }
  if (k->tasks_.back() != k->pieces_.size()) k->tasks_.push_back(k->pieces_.size());
  return k;
}

}  // namespace

void install_row_switch_kernels(KernelTable& t) { t.set("row_switch", &make_row_switch); }

}  // namespace evoxc::interp
