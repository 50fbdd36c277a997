// numpy-shaped composites: each expands into existing op functions, so the graph holds only catalogue ops.
#include "evoxc/trace/numpy.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>

#include "evoxc/core/error.h"

namespace evoxc {
namespace {

// " (at f.py:3:0)": the location an op would be recorded at (a LocationScope's, when one is active).
std::string at(const SrcLoc& loc) {
  TraceContext* ctx = TraceContext::current_or_null();
  return " (at " + (ctx ? ctx->location_of(loc) : make_location(loc)).to_string() + ")";
}

// astype that emits nothing when the dtype already matches.
SymbolicTensor cast(const SymbolicTensor& x, DType t, SrcLoc loc) {
  return x.dtype() == t ? x : evoxc::astype(x, t, loc);
}

SymbolicTensor to_float(const SymbolicTensor& x, SrcLoc loc) {
  return is_float(x.dtype()) ? x : evoxc::astype(x, kDefaultFloat, loc);
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

SymbolicTensor permute(const SymbolicTensor& x, const std::vector<int64_t>& perm, SrcLoc loc) {
  return is_identity(perm) ? x : evoxc::transpose(x, perm, loc);
}

// Product of extents (the constant 1 for none), symbolic where the extents are.
DimExpr extent_product(const Shape& s, size_t begin, size_t end) {
  DimExpr n(int64_t{1});
  for (size_t i = begin; i < end; ++i) n = n * s[i];
  return n;
}

SymbolicTensor reshape_if(const SymbolicTensor& x, const Shape& shape, SrcLoc loc) {
  return x.shape() == shape ? x : evoxc::reshape(x, shape, loc);
}

// Sums `axes` out of x keeping x's dtype (numpy einsum does not widen integers; bool
// reduces with `any`, numpy's logical einsum).
SymbolicTensor sum_keep_dtype(const SymbolicTensor& x, const std::vector<int64_t>& axes, SrcLoc loc) {
  if (axes.empty()) return x;
  if (x.dtype() == bool_) return evoxc::any(x, Axes(axes), false, loc);
  SymbolicTensor s = evoxc::sum(x, Axes(axes), false, loc);
  return cast(s, x.dtype(), loc);
}

// ---- einsum ----

// Labels are ints: letters are their char codes; ellipsis axes get 256 + k.
using Labels = std::vector<int>;
constexpr int kEllipsisBase = 256;

struct Term {
  SymbolicTensor x;
  Labels labels;  // one per axis of x
};

bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Parses one operand's subscripts; `ellipsis_rank` is filled in later.
struct ParsedTerm {
  std::string letters_before, letters_after;  // around "..."
  bool has_ellipsis = false;
};

ParsedTerm parse_term(std::string_view s, std::string_view whole, const SrcLoc& loc) {
  ParsedTerm t;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ') {
      ++i;
    } else if (c == '.') {
      if (s.substr(i, 3) != "..." || t.has_ellipsis)
        throw TraceError("einsum: malformed ellipsis in subscripts '" + std::string(whole) +
                         "'; write '...' at most once per operand" + at(loc));
      t.has_ellipsis = true;
      i += 3;
    } else if (is_label(c)) {
      (t.has_ellipsis ? t.letters_after : t.letters_before) += c;
      ++i;
    } else {
      throw TraceError("einsum: invalid character '" + std::string(1, c) + "' in subscripts '" + std::string(whole) +
                       "'; use letters a-z, A-Z, ',', '->' and '...'" + at(loc));
    }
  }
  return t;
}

Labels expand(const ParsedTerm& t, size_t ellipsis_rank, size_t max_ellipsis) {
  Labels out;
  for (char c : t.letters_before) out.push_back(static_cast<unsigned char>(c));
  // Right-aligned: an operand with fewer ellipsis axes takes the trailing ellipsis labels.
  for (size_t k = max_ellipsis - ellipsis_rank; k < max_ellipsis; ++k)
    out.push_back(kEllipsisBase + static_cast<int>(k));
  for (char c : t.letters_after) out.push_back(static_cast<unsigned char>(c));
  return out;
}

// Takes the diagonal of every label repeated inside one term, so each label names one axis.
Term take_diagonals(Term t, SrcLoc loc) {
  for (;;) {
    size_t p = 0, q = 0;
    bool found = false;
    for (size_t i = 0; i < t.labels.size() && !found; ++i)
      for (size_t j = i + 1; j < t.labels.size() && !found; ++j)
        if (t.labels[i] == t.labels[j]) p = i, q = j, found = true;
    if (!found) return t;
    const Shape& s = t.x.shape();
    if (s[p] != s[q])
      throw ShapeError("einsum: repeated label '" + std::string(1, static_cast<char>(t.labels[p])) + "' has extents " +
                       s[p].to_string() + " and " + s[q].to_string() + at(loc));
    // mask[.., i, .., j, ..] = (i == j), broadcast against x; the off-diagonal elements
    // are replaced (not multiplied) by zero so NaN and inf there do not leak in.
    std::vector<DimExpr> ms(s.rank(), DimExpr(int64_t{1}));
    ms[p] = s[p];
    ms[q] = s[q];
    Shape mshape(ms);
    SymbolicTensor mask = evoxc::equal(evoxc::iota(mshape, static_cast<int64_t>(p), kIndexType, loc),
                                       evoxc::iota(mshape, static_cast<int64_t>(q), kIndexType, loc), loc);
    SymbolicTensor zero = evoxc::zeros_like(t.x, loc);
    SymbolicTensor kept = evoxc::select(mask, t.x, zero, loc);
    t.x = sum_keep_dtype(kept, {static_cast<int64_t>(q)}, loc);
    t.labels.erase(t.labels.begin() + static_cast<std::ptrdiff_t>(q));
  }
}

// Sums out of t the labels that are not in `keep`.
Term sum_unneeded(Term t, const std::vector<int>& keep, SrcLoc loc) {
  std::vector<int64_t> axes;
  Labels rest;
  for (size_t i = 0; i < t.labels.size(); ++i) {
    if (std::find(keep.begin(), keep.end(), t.labels[i]) == keep.end())
      axes.push_back(static_cast<int64_t>(i));
    else
      rest.push_back(t.labels[i]);
  }
  t.x = sum_keep_dtype(t.x, axes, loc);
  t.labels = std::move(rest);
  return t;
}

int index_of(const Labels& l, int label) { return static_cast<int>(std::find(l.begin(), l.end(), label) - l.begin()); }

// Contracts two terms, keeping the labels in `keep` (output labels and labels still
// needed by later operands).
Term contract(Term a, Term b, const std::vector<int>& keep, SrcLoc loc) {
  // A label that only one side has and nobody needs is summed out first.
  std::vector<int> keep_a = keep, keep_b = keep;
  keep_a.insert(keep_a.end(), b.labels.begin(), b.labels.end());
  keep_b.insert(keep_b.end(), a.labels.begin(), a.labels.end());
  a = sum_unneeded(std::move(a), keep_a, loc);
  b = sum_unneeded(std::move(b), keep_b, loc);

  auto kept = [&](int l) { return std::find(keep.begin(), keep.end(), l) != keep.end(); };
  Labels batch, contracted, free_a, free_b;
  bool equal_extents = true;
  for (int l : a.labels) {
    int j = index_of(b.labels, l);
    if (j < static_cast<int>(b.labels.size())) {
      (kept(l) ? batch : contracted).push_back(l);
      if (a.x.shape()[static_cast<size_t>(index_of(a.labels, l))] != b.x.shape()[static_cast<size_t>(j)])
        equal_extents = false;
    } else {
      free_a.push_back(l);
    }
  }
  for (int l : b.labels)
    if (index_of(a.labels, l) == static_cast<int>(a.labels.size())) free_b.push_back(l);

  auto perm_of = [](const Labels& from, std::initializer_list<const Labels*> groups) {
    std::vector<int64_t> perm;
    for (const Labels* g : groups)
      for (int l : *g) perm.push_back(index_of(from, l));
    return perm;
  };
  auto extents = [](const Term& t, const Labels& ls) {
    std::vector<DimExpr> d;
    for (int l : ls) d.push_back(t.x.shape()[static_cast<size_t>(index_of(t.labels, l))]);
    return d;
  };

  DType result = promote_types(a.x.dtype(), b.x.dtype());
  Labels out_labels = batch;
  out_labels.insert(out_labels.end(), free_a.begin(), free_a.end());
  out_labels.insert(out_labels.end(), free_b.begin(), free_b.end());

  if (equal_extents && result != bool_) {
    // (batch, free_a, contracted) @ (batch, contracted, free_b) as one batched matmul.
    std::vector<DimExpr> db = extents(a, batch), dfa = extents(a, free_a), dc = extents(a, contracted),
                         dfb = extents(b, free_b);
    SymbolicTensor ta = permute(a.x, perm_of(a.labels, {&batch, &free_a, &contracted}), loc);
    SymbolicTensor tb = permute(b.x, perm_of(b.labels, {&batch, &contracted, &free_b}), loc);
    auto prod = [](const std::vector<DimExpr>& d) { return extent_product(Shape(d), 0, d.size()); };
    ta = reshape_if(ta, Shape({prod(db), prod(dfa), prod(dc)}), loc);
    tb = reshape_if(tb, Shape({prod(db), prod(dc), prod(dfb)}), loc);
    SymbolicTensor m = evoxc::matmul(ta, tb, loc);
    std::vector<DimExpr> final_shape = db;
    final_shape.insert(final_shape.end(), dfa.begin(), dfa.end());
    final_shape.insert(final_shape.end(), dfb.begin(), dfb.end());
    return Term{reshape_if(m, Shape(final_shape), loc), out_labels};
  }

  // Broadcast path: lay both out over (batch, free_a, free_b, contracted) with unit axes
  // where a side lacks a label, multiply, and sum the contracted axes.
  Labels all = out_labels;
  all.insert(all.end(), contracted.begin(), contracted.end());
  auto align = [&](const Term& t) {
    Labels present;
    for (int l : all)
      if (index_of(t.labels, l) < static_cast<int>(t.labels.size())) present.push_back(l);
    SymbolicTensor x = permute(t.x, perm_of(t.labels, {&present}), loc);
    std::vector<DimExpr> d;
    for (int l : all) {
      int i = index_of(t.labels, l);
      d.push_back(i < static_cast<int>(t.labels.size()) ? t.x.shape()[static_cast<size_t>(i)] : DimExpr(int64_t{1}));
    }
    return reshape_if(x, Shape(d), loc);
  };
  SymbolicTensor p = evoxc::multiply(align(a), align(b), loc);
  std::vector<int64_t> axes;
  for (size_t i = out_labels.size(); i < all.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  return Term{sum_keep_dtype(p, axes, loc), out_labels};
}

}  // namespace

SymbolicTensor einsum(std::string_view subscripts, const std::vector<SymbolicTensor>& operands, SrcLoc loc) {
  if (operands.empty()) throw TraceError("einsum: no operands; pass at least one tensor" + at(loc));
  std::string_view inputs = subscripts, output;
  size_t arrow = subscripts.find("->");
  bool explicit_output = arrow != std::string_view::npos;
  if (explicit_output) {
    inputs = subscripts.substr(0, arrow);
    output = subscripts.substr(arrow + 2);
  }
  std::vector<ParsedTerm> parsed;
  size_t start = 0;
  for (;;) {
    size_t comma = inputs.find(',', start);
    parsed.push_back(parse_term(inputs.substr(start, comma - start), subscripts, loc));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (parsed.size() != operands.size())
    throw TraceError("einsum: subscripts '" + std::string(subscripts) + "' name " + std::to_string(parsed.size()) +
                     " operands but " + std::to_string(operands.size()) + " were given" + at(loc));

  // Ellipsis ranks, then labels per operand.
  size_t max_ellipsis = 0;
  std::vector<size_t> ell(parsed.size(), 0);
  for (size_t i = 0; i < parsed.size(); ++i) {
    size_t named = parsed[i].letters_before.size() + parsed[i].letters_after.size();
    size_t rank = operands[i].rank();
    if (parsed[i].has_ellipsis ? named > rank : named != rank)
      throw TraceError("einsum: operand " + std::to_string(i) + " has rank " + std::to_string(rank) +
                       " but its subscripts name " + std::to_string(named) + " axes in '" + std::string(subscripts) +
                       "'" + at(loc));
    ell[i] = rank - named;
    max_ellipsis = std::max(max_ellipsis, ell[i]);
  }
  std::vector<Term> terms;
  std::map<int, int> count;
  for (size_t i = 0; i < parsed.size(); ++i) {
    Term t{operands[i], expand(parsed[i], ell[i], max_ellipsis)};
    for (int l : t.labels) ++count[l];
    terms.push_back(take_diagonals(std::move(t), loc));
  }

  Labels out;
  if (explicit_output) {
    ParsedTerm o = parse_term(output, subscripts, loc);
    if (o.has_ellipsis || max_ellipsis == 0) {
      out = expand(o, max_ellipsis, max_ellipsis);
    } else {
      throw TraceError("einsum: the operands use '...' but the output of '" + std::string(subscripts) +
                       "' does not; add '...' to the output" + at(loc));
    }
    for (size_t i = 0; i < out.size(); ++i) {
      if (!count.contains(out[i]))
        throw TraceError("einsum: output label '" + std::string(1, static_cast<char>(out[i])) +
                         "' does not appear in any operand of '" + std::string(subscripts) + "'" + at(loc));
      if (std::find(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(i), out[i]) !=
          out.begin() + static_cast<std::ptrdiff_t>(i))
        throw TraceError("einsum: output label '" + std::string(1, static_cast<char>(out[i])) + "' appears twice in '" +
                         std::string(subscripts) + "'" + at(loc));
    }
  } else {
    for (size_t k = 0; k < max_ellipsis; ++k) out.push_back(kEllipsisBase + static_cast<int>(k));
    for (const auto& [l, n] : count)  // std::map: ascending char codes, numpy's order
      if (l < kEllipsisBase && n == 1) out.push_back(l);
  }

  // Check that every label has one extent (or 1, which broadcasts).
  std::map<int, DimExpr> extent;
  for (const Term& t : terms) {
    for (size_t i = 0; i < t.labels.size(); ++i) {
      const DimExpr& d = t.x.shape()[i];
      auto it = extent.find(t.labels[i]);
      if (it == extent.end() || it->second == DimExpr(int64_t{1})) {
        extent[t.labels[i]] = d;
      } else if (d != it->second && d != DimExpr(int64_t{1})) {
        std::string name =
            t.labels[i] >= kEllipsisBase ? std::string("...") : std::string(1, static_cast<char>(t.labels[i]));
        throw ShapeError("einsum: label '" + name + "' has extents " + it->second.to_string() + " and " +
                         d.to_string() + " in '" + std::string(subscripts) + "'" + at(loc));
      }
    }
  }

  Term acc = std::move(terms[0]);
  for (size_t i = 1; i < terms.size(); ++i) {
    std::vector<int> keep = out;
    for (size_t j = i + 1; j < terms.size(); ++j)
      keep.insert(keep.end(), terms[j].labels.begin(), terms[j].labels.end());
    acc = contract(std::move(acc), std::move(terms[i]), keep, loc);
  }
  acc = sum_unneeded(std::move(acc), out, loc);
  std::vector<int64_t> perm;
  for (int l : out) perm.push_back(index_of(acc.labels, l));
  SymbolicTensor r = permute(acc.x, perm, loc);
  // A label of extent 1 on one side and n on another broadcasts; an output label that
  // only ever had extent 1 next to a larger one is widened here.
  std::vector<DimExpr> want;
  for (int l : out) want.push_back(extent.at(l));
  return r.shape() == Shape(want) ? r : evoxc::broadcast_to(r, Shape(want), loc);
}

SymbolicTensor einsum(std::string_view subscripts, const SymbolicTensor& a, SrcLoc loc) {
  return einsum(subscripts, std::vector<SymbolicTensor>{a}, loc);
}
SymbolicTensor einsum(std::string_view subscripts, const SymbolicTensor& a, const SymbolicTensor& b, SrcLoc loc) {
  return einsum(subscripts, std::vector<SymbolicTensor>{a, b}, loc);
}

SymbolicTensor outer(const SymbolicTensor& a, const SymbolicTensor& b, SrcLoc loc) {
  DimExpr na = extent_product(a.shape(), 0, a.rank()), nb = extent_product(b.shape(), 0, b.rank());
  return evoxc::multiply(reshape_if(a, Shape({na, DimExpr(int64_t{1})}), loc),
                         reshape_if(b, Shape({DimExpr(int64_t{1}), nb}), loc), loc);
}

SymbolicTensor inner(const SymbolicTensor& a, const SymbolicTensor& b, SrcLoc loc) {
  if (a.rank() == 0 || b.rank() == 0) return evoxc::multiply(a, b, loc);
  if (a.shape()[a.rank() - 1] != b.shape()[b.rank() - 1])
    throw ShapeError("inner: the last axes differ: " + a.shape()[a.rank() - 1].to_string() + " and " +
                     b.shape()[b.rank() - 1].to_string() + at(loc));
  std::string la, lb;
  for (size_t i = 0; i + 1 < a.rank(); ++i) la += static_cast<char>('a' + i);
  for (size_t i = 0; i + 1 < b.rank(); ++i) lb += static_cast<char>('A' + i);
  if (a.rank() > 26 || b.rank() > 26) throw ShapeError("inner: operands of rank above 26 are not supported" + at(loc));
  return einsum(la + "z," + lb + "z->" + la + lb, a, b, loc);
}

SymbolicTensor softmax(const SymbolicTensor& x, Axes axes, SrcLoc loc) {
  SymbolicTensor xf = to_float(x, loc);
  SymbolicTensor e = evoxc::exp(evoxc::subtract(xf, evoxc::max(xf, axes, true, loc), loc), loc);
  return evoxc::divide(e, evoxc::sum(e, axes, true, loc), loc);
}

SymbolicTensor log_softmax(const SymbolicTensor& x, Axes axes, SrcLoc loc) {
  SymbolicTensor xf = to_float(x, loc);
  SymbolicTensor s = evoxc::subtract(xf, evoxc::max(xf, axes, true, loc), loc);
  return evoxc::subtract(s, evoxc::log(evoxc::sum(evoxc::exp(s, loc), axes, true, loc), loc), loc);
}

SymbolicTensor var(const SymbolicTensor& x, Axes axes, int64_t ddof, bool keepdims, SrcLoc loc) {
  SymbolicTensor xf = to_float(x, loc);
  SymbolicTensor d = evoxc::subtract(xf, evoxc::mean(xf, axes, true, loc), loc);
  SymbolicTensor d2 = evoxc::multiply(d, d, loc);
  if (ddof == 0) return evoxc::mean(d2, axes, keepdims, loc);
  std::vector<int64_t> ax = axes.normalize(x.rank(), "var");
  DimExpr n(int64_t{1});
  for (int64_t a : ax) n = n * x.shape()[static_cast<size_t>(a)];
  SymbolicTensor s = evoxc::sum(d2, axes, keepdims, loc);
  if (n.is_const()) {
    // N - ddof <= 0 divides by zero (inf or NaN), as numpy does.
    double div = static_cast<double>(std::max<int64_t>(n.value() - ddof, 0));
    return evoxc::divide(s, div, loc);
  }
  // A symbolic N is counted at run time.
  SymbolicTensor count = evoxc::sum(evoxc::ones_like(xf, loc), axes, keepdims, loc);
  return evoxc::divide(s, evoxc::maximum(evoxc::subtract(count, static_cast<double>(ddof), loc), 0.0, loc), loc);
}

SymbolicTensor std(const SymbolicTensor& x, Axes axes, int64_t ddof, bool keepdims, SrcLoc loc) {
  return evoxc::sqrt(evoxc::var(x, axes, ddof, keepdims, loc), loc);
}

SymbolicTensor average(const SymbolicTensor& x, Axes axes, const std::optional<SymbolicTensor>& weights, bool keepdims,
                       SrcLoc loc) {
  if (!weights) return evoxc::mean(x, axes, keepdims, loc);
  SymbolicTensor w = *weights;
  if (w.shape() != x.shape()) {
    std::vector<int64_t> ax = axes.normalize(x.rank(), "average");
    if (axes.is_all() || ax.size() != 1 || w.rank() != 1)
      throw ShapeError("average: weights of shape (" + w.shape().to_string() + ") differ from x's shape (" +
                       x.shape().to_string() + "); pass weights of x's shape, or 1-D weights with one axis" + at(loc));
    size_t a = static_cast<size_t>(ax[0]);
    if (w.shape()[0] != x.shape()[a])
      throw ShapeError("average: 1-D weights have length " + w.shape()[0].to_string() + " but axis " +
                       std::to_string(a) + " has extent " + x.shape()[a].to_string() + at(loc));
    std::vector<DimExpr> ws(x.rank(), DimExpr(int64_t{1}));
    ws[a] = w.shape()[0];
    w = evoxc::reshape(w, Shape(ws), loc);
  }
  DType t = promote_types(x.dtype(), w.dtype());
  if (!is_float(t)) t = kDefaultFloat;
  SymbolicTensor xf = cast(x, t, loc), wf = cast(w, t, loc);
  if (wf.shape() != xf.shape()) wf = evoxc::broadcast_to(wf, xf.shape(), loc);
  return evoxc::divide(evoxc::sum(evoxc::multiply(xf, wf, loc), axes, keepdims, loc),
                       evoxc::sum(wf, axes, keepdims, loc), loc);
}

SymbolicTensor stack(const std::vector<SymbolicTensor>& xs, int64_t axis, SrcLoc loc) {
  if (xs.empty()) throw ShapeError("stack: no operands; pass at least one tensor" + at(loc));
  int64_t a = normalize_axis(axis, xs[0].rank() + 1, "stack");
  std::vector<SymbolicTensor> parts;
  for (const auto& x : xs) {
    if (x.shape() != xs[0].shape())
      throw ShapeError("stack: operands have shapes (" + xs[0].shape().to_string() + ") and (" + x.shape().to_string() +
                       "); all must have the same shape" + at(loc));
    parts.push_back(evoxc::expand_dims(x, Axes(a), loc));
  }
  return parts.size() == 1 ? parts[0] : evoxc::concatenate(parts, a, loc);
}

SymbolicTensor hstack(const std::vector<SymbolicTensor>& xs, SrcLoc loc) {
  if (xs.empty()) throw ShapeError("hstack: no operands; pass at least one tensor" + at(loc));
  std::vector<SymbolicTensor> parts;
  for (const auto& x : xs) parts.push_back(x.rank() == 0 ? evoxc::reshape(x, Shape({DimExpr(int64_t{1})}), loc) : x);
  return evoxc::concatenate(parts, parts[0].rank() == 1 ? 0 : 1, loc);
}

SymbolicTensor vstack(const std::vector<SymbolicTensor>& xs, SrcLoc loc) {
  if (xs.empty()) throw ShapeError("vstack: no operands; pass at least one tensor" + at(loc));
  std::vector<SymbolicTensor> parts;
  for (const auto& x : xs) {
    if (x.rank() >= 2) {
      parts.push_back(x);
    } else {
      DimExpr n = x.rank() == 1 ? x.shape()[0] : DimExpr(int64_t{1});
      parts.push_back(evoxc::reshape(x, Shape({DimExpr(int64_t{1}), n}), loc));
    }
  }
  return evoxc::concatenate(parts, 0, loc);
}

SymbolicTensor isclose(const Operand& a, const Operand& b, double rtol, double atol, bool equal_nan, SrcLoc loc) {
  if (!a.is_tensor() && !b.is_tensor())
    throw TraceError("isclose: both operands are host scalars; pass at least one SymbolicTensor" + at(loc));
  // The promoted dtype of the pair (weak scalars as in every binary op), compared in a float type.
  auto kind = [](const Operand& o) {
    return o.kind() == Operand::Kind::Bool  ? ScalarKind::Bool
           : o.kind() == Operand::Kind::Int ? ScalarKind::Int
                                            : ScalarKind::Float;
  };
  DType t = a.is_tensor() && b.is_tensor() ? promote_types(a.tensor().dtype(), b.tensor().dtype())
            : a.is_tensor()                ? weak_scalar_result(a.tensor().dtype(), kind(b))
                                           : weak_scalar_result(b.tensor().dtype(), kind(a));
  if (!is_float(t)) t = kDefaultFloat;
  auto as_t = [&](const Operand& o) {
    return o.is_tensor() ? cast(o.tensor(), t, loc) : evoxc::fill(Shape{}, o.float_value(), t, loc);
  };
  SymbolicTensor ax = as_t(a), ay = as_t(b);
  SymbolicTensor within =
      evoxc::less_equal(evoxc::abs(evoxc::subtract(ax, ay, loc), loc),
                        evoxc::add(evoxc::multiply(evoxc::abs(ay, loc), rtol, loc), atol, loc), loc);
  SymbolicTensor finite = evoxc::logical_and(evoxc::isfinite(ax, loc), evoxc::isfinite(ay, loc), loc);
  SymbolicTensor r = evoxc::select(finite, within, evoxc::equal(ax, ay, loc), loc);
  if (equal_nan) r = evoxc::logical_or(r, evoxc::logical_and(evoxc::isnan(ax, loc), evoxc::isnan(ay, loc), loc), loc);
  return r;
}

SymbolicTensor allclose(const Operand& a, const Operand& b, double rtol, double atol, bool equal_nan, SrcLoc loc) {
  return evoxc::all(isclose(a, b, rtol, atol, equal_nan, loc), Axes::all(), false, loc);
}

}  // namespace evoxc
