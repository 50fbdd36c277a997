// In-graph control flow for traced functions: cond, switch_, while_loop, scan, fori_loop (numpy-style names, JAX
// semantics).
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <source_location>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "evoxc/trace/ops.h"
#include "evoxc/trace/trace.h"

namespace evoxc {

struct OpDef;

namespace control_detail {

// Rebuilds a value of the C++ pytree type of `proto` with leaves taken in flattening order
// (the order of trace_detail::to_tree(...).flatten()).
inline SymbolicTensor rebuild(const SymbolicTensor&, const std::vector<SymbolicTensor>& l, size_t& pos) {
  return l.at(pos++);
}
inline Tree<SymbolicTensor> rebuild(const Tree<SymbolicTensor>& proto, const std::vector<SymbolicTensor>& l,
                                    size_t& pos) {
  return proto.unflatten_from(l, pos);
}
template <typename T>
std::vector<T> rebuild(const std::vector<T>& proto, const std::vector<SymbolicTensor>& l, size_t& pos);
template <typename T>
std::map<std::string, T> rebuild(const std::map<std::string, T>& proto, const std::vector<SymbolicTensor>& l,
                                 size_t& pos);
template <typename A, typename B>
std::pair<A, B> rebuild(const std::pair<A, B>& proto, const std::vector<SymbolicTensor>& l, size_t& pos);
template <typename... Ts>
std::tuple<Ts...> rebuild(const std::tuple<Ts...>& proto, const std::vector<SymbolicTensor>& l, size_t& pos);

template <typename T>
std::vector<T> rebuild(const std::vector<T>& proto, const std::vector<SymbolicTensor>& l, size_t& pos) {
  std::vector<T> out;
  for (const auto& x : proto) out.push_back(rebuild(x, l, pos));
  return out;
}
template <typename T>
std::map<std::string, T> rebuild(const std::map<std::string, T>& proto, const std::vector<SymbolicTensor>& l,
                                 size_t& pos) {
  std::map<std::string, T> out;
  for (const auto& [k, x] : proto) out.emplace(k, rebuild(x, l, pos));
  return out;
}
template <typename A, typename B>
std::pair<A, B> rebuild(const std::pair<A, B>& proto, const std::vector<SymbolicTensor>& l, size_t& pos) {
  A a = rebuild(proto.first, l, pos);
  B b = rebuild(proto.second, l, pos);
  return {std::move(a), std::move(b)};
}
template <typename... Ts>
std::tuple<Ts...> rebuild(const std::tuple<Ts...>& proto, const std::vector<SymbolicTensor>& l, size_t& pos) {
  // Braced initialisation evaluates left to right, the flattening order.
  return std::apply([&](const auto&... x) { return std::tuple<Ts...>{rebuild(x, l, pos)...}; }, proto);
}

template <typename T>
T rebuild_all(const T& proto, const std::vector<SymbolicTensor>& leaves) {
  size_t pos = 0;
  return rebuild(proto, leaves, pos);
}

template <typename T>
std::vector<SymbolicTensor> leaves_of(const T& x) {
  return trace_detail::to_tree(x).flatten();
}

// One region to trace: its block argument types and a function from the block
// arguments to what the region returns.
struct RegionSpec {
  std::vector<TensorType> arg_types;
  std::function<Tree<SymbolicTensor>(const std::vector<SymbolicTensor>& args)> fn;
};

// Called with the traced output trees of every region before the op is built: raises a
// TraceError naming the first mismatch.
using OutputCheck = std::function<void(const std::vector<Tree<SymbolicTensor>>& outputs)>;

// The control-flow ops, resolved once.
const OpDef& cond_op();
const OpDef& while_loop_op();
const OpDef& scan_op();

// Emits a control op whose regions are traced from `regions`: the op is created detached,
// each region is traced into it exactly once (a region function runs once per trace, side
// effects included), `check` sees the region outputs, and the op is inserted with result
// types inferred from its regions.
std::vector<SymbolicTensor> emit_control(const OpDef& op, const std::vector<SymbolicTensor>& operands, AttrMap attrs,
                                         const std::vector<RegionSpec>& regions, const OutputCheck& check,
                                         const std::source_location& loc);

// TraceError unless `got` has the structure and leaf types of `want`: "<what> returns
// tensor<3xf32> at [1] where <other> returns tensor<3xf64>".
void require_same_tree(const std::string& op, const Tree<SymbolicTensor>& want, const std::string& want_what,
                       const Tree<SymbolicTensor>& got, const std::string& got_what);

std::vector<TensorType> types_of(const std::vector<SymbolicTensor>& v);
// The types of x with the leading axis removed (TraceError naming `op` for rank 0).
std::vector<TensorType> slice_types(const std::string& op, const std::vector<SymbolicTensor>& xs);

}  // namespace control_detail

// lax.cond: runs true_fn(operands...) when `pred` (rank-0 bool) is true, else
// false_fn(operands...). Both branches are traced into regions of one evoxc.cond op and
// must return the same pytree structure and leaf types; the result has that structure.
// Branches may also use any value of the enclosing trace directly.
template <typename TF, typename FF, typename... Ops>
auto cond(LocatedTensor pred, TF&& true_fn, FF&& false_fn, const Ops&... operands) {
  using R = std::decay_t<std::invoke_result_t<TF&, const Ops&...>>;
  std::tuple<Ops...> protos{operands...};
  std::vector<SymbolicTensor> flat{pred.t};
  std::vector<TensorType> arg_types;
  (
      [&](const auto& o) {
        for (const auto& l : control_detail::leaves_of(o)) {
          flat.push_back(l);
          arg_types.push_back(l.type());
        }
      }(operands),
      ...);
  std::optional<R> proto;
  auto call = [&](auto& fn, bool keep) {
    return [&, keep](const std::vector<SymbolicTensor>& args) {
      size_t pos = 0;
      auto rebuilt = std::apply(
          [&](const auto&... p) { return std::tuple<Ops...>{control_detail::rebuild(p, args, pos)...}; }, protos);
      auto r = std::apply(fn, rebuilt);
      if (keep) proto.emplace(r);
      return trace_detail::to_tree(r);
    };
  };
  std::vector<control_detail::RegionSpec> regions{{arg_types, call(true_fn, true)}, {arg_types, call(false_fn, false)}};
  auto check = [](const std::vector<Tree<SymbolicTensor>>& outs) {
    control_detail::require_same_tree("cond", outs[0], "branch 0 (true_fn)", outs[1], "branch 1 (false_fn)");
  };
  auto results = control_detail::emit_control(control_detail::cond_op(), flat, {}, regions, check, pred.loc);
  return control_detail::rebuild_all(*proto, results);
}

// lax.switch: runs branches[clamp(index, 0, n - 1)](operands...) for a rank-0 int32/int64
// index (out-of-range indices clamp, as XLA). The branches' common return type is R
// (default Tree<SymbolicTensor>; a branch returning a SymbolicTensor converts to it).
template <typename R = Tree<SymbolicTensor>, typename... Ops>
R switch_(LocatedTensor index, std::initializer_list<std::type_identity_t<std::function<R(const Ops&...)>>> branches,
          const Ops&... operands) {
  std::tuple<Ops...> protos{operands...};
  std::vector<SymbolicTensor> flat{index.t};
  std::vector<TensorType> arg_types;
  (
      [&](const auto& o) {
        for (const auto& l : control_detail::leaves_of(o)) {
          flat.push_back(l);
          arg_types.push_back(l.type());
        }
      }(operands),
      ...);
  if (branches.size() == 0) throw TraceError("switch_: needs at least one branch");
  std::optional<R> proto;
  std::vector<control_detail::RegionSpec> regions;
  size_t k = 0;
  for (const auto& fn : branches) {
    bool keep = k++ == 0;
    regions.push_back(
        {arg_types, [&, fn, keep](const std::vector<SymbolicTensor>& args) {
           size_t pos = 0;
           auto rebuilt = std::apply(
               [&](const auto&... p) { return std::tuple<Ops...>{control_detail::rebuild(p, args, pos)...}; }, protos);
           R r = std::apply(fn, rebuilt);
           if (keep) proto.emplace(r);
           return trace_detail::to_tree(r);
         }});
  }
  auto check = [](const std::vector<Tree<SymbolicTensor>>& outs) {
    for (size_t i = 1; i < outs.size(); ++i)
      control_detail::require_same_tree("switch_", outs[0], "branch 0", outs[i], "branch " + std::to_string(i));
  };
  auto results = control_detail::emit_control(control_detail::cond_op(), flat, {}, regions, check, index.loc);
  return control_detail::rebuild_all(*proto, results);
}

// lax.while_loop: carry = init; while cond_fn(carry): carry = body_fn(carry). cond_fn
// returns a rank-0 bool; body_fn returns the carry's structure and types. There is no
// iteration limit by default: a loop whose predicate stays true runs forever, unless the run
// is given RunOptions (deadline, max_loop_iterations, CancellationToken), which stop it with RunLimitError.
template <typename CF, typename BF, typename T>
T while_loop(CF&& cond_fn, BF&& body_fn, const T& init, std::source_location loc = std::source_location::current()) {
  std::vector<SymbolicTensor> flat = control_detail::leaves_of(init);
  Tree<SymbolicTensor> init_tree = trace_detail::to_tree(init);
  std::vector<TensorType> types = control_detail::types_of(flat);
  control_detail::RegionSpec c{types, [&](const std::vector<SymbolicTensor>& args) {
                                 return trace_detail::to_tree(cond_fn(control_detail::rebuild_all(init, args)));
                               }};
  control_detail::RegionSpec b{types, [&](const std::vector<SymbolicTensor>& args) {
                                 return trace_detail::to_tree(body_fn(control_detail::rebuild_all(init, args)));
                               }};
  auto check = [&](const std::vector<Tree<SymbolicTensor>>& outs) {
    const auto& p = outs[0];
    if (!p.is_leaf() || p.leaf().type() != TensorType(DType::Bool, Shape()))
      throw TraceError("while_loop: cond_fn must return one rank-0 bool SymbolicTensor, got " +
                       (p.is_leaf() ? p.leaf().type().to_string() : "the structure " + p.structure_string()));
    control_detail::require_same_tree("while_loop", init_tree, "the initial carry", outs[1], "body_fn");
  };
  auto results = control_detail::emit_control(control_detail::while_loop_op(), flat, {}, {c, b}, check, loc);
  return control_detail::rebuild_all(init, results);
}

// lax.scan: for each slice x of xs along axis 0 (last first when `reverse`), (carry, y) =
// body_fn(carry, x); returns (final carry, ys stacked on a new leading axis). xs is a
// pytree of tensors sharing their leading extent (static or symbolic); pass an empty
// std::vector<SymbolicTensor> and `length` for a scan without xs. body_fn returns a
// std::pair or 2-tuple (carry, y).
template <typename BF, typename C, typename X>
auto scan(BF&& body_fn, const C& init, const X& xs, std::optional<int64_t> length = std::nullopt, bool reverse = false,
          std::source_location loc = std::source_location::current()) {
  using R = std::decay_t<std::invoke_result_t<BF&, const C&, const X&>>;
  using Y = std::decay_t<std::tuple_element_t<1, R>>;
  std::vector<SymbolicTensor> carry = control_detail::leaves_of(init);
  std::vector<SymbolicTensor> xl = control_detail::leaves_of(xs);
  Tree<SymbolicTensor> init_tree = trace_detail::to_tree(init);
  std::vector<TensorType> args = control_detail::types_of(carry);
  for (const auto& t : control_detail::slice_types("scan", xl)) args.push_back(t);
  std::optional<Y> proto;
  size_t nc = carry.size();
  control_detail::RegionSpec b{args, [&](const std::vector<SymbolicTensor>& a) {
                                 std::vector<SymbolicTensor> ca(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(nc));
                                 std::vector<SymbolicTensor> xa(a.begin() + static_cast<std::ptrdiff_t>(nc), a.end());
                                 R r = body_fn(control_detail::rebuild_all(init, ca),
                                               control_detail::rebuild_all(xs, xa));
                                 proto.emplace(std::get<1>(r));
                                 return Tree<SymbolicTensor>::tuple(
                                     {trace_detail::to_tree(std::get<0>(r)), trace_detail::to_tree(std::get<1>(r))});
                               }};
  auto check = [&](const std::vector<Tree<SymbolicTensor>>& outs) {
    control_detail::require_same_tree("scan", init_tree, "the initial carry", outs[0][0], "body_fn's carry");
  };
  AttrMap attrs{{"num_carry", static_cast<int64_t>(nc)}};
  if (length) attrs["length"] = *length;
  if (reverse) attrs["reverse"] = true;
  std::vector<SymbolicTensor> flat = carry;
  flat.insert(flat.end(), xl.begin(), xl.end());
  auto results = control_detail::emit_control(control_detail::scan_op(), flat, std::move(attrs), {b}, check, loc);
  std::vector<SymbolicTensor> rc(results.begin(), results.begin() + static_cast<std::ptrdiff_t>(nc));
  std::vector<SymbolicTensor> ry(results.begin() + static_cast<std::ptrdiff_t>(nc), results.end());
  return std::pair<C, Y>{control_detail::rebuild_all(init, rc), control_detail::rebuild_all(*proto, ry)};
}

// lax.fori_loop: carry = init; for i in [lower, upper): carry = body_fn(i, carry). With
// host-integer bounds it is a scan of static length upper - lower (i is int32); with a
// SymbolicTensor bound it is a while_loop (i takes the bound's dtype).
SymbolicTensor fori_index(const Operand& v, DType dtype, const std::source_location& loc);
DType fori_index_dtype(const Operand& lower, const Operand& upper);

template <typename BF, typename T>
T fori_loop(const Operand& lower, const Operand& upper, BF&& body_fn, const T& init,
            std::source_location loc = std::source_location::current()) {
  DType dt = fori_index_dtype(lower, upper);
  SymbolicTensor lo = fori_index(lower, dt, loc);
  if (!lower.is_tensor() && !upper.is_tensor()) {
    int64_t n = std::max<int64_t>(0, upper.int_value() - lower.int_value());
    auto step = [&](const std::pair<SymbolicTensor, T>& c, const std::vector<SymbolicTensor>&) {
      T next = body_fn(c.first, c.second);
      return std::pair<std::pair<SymbolicTensor, T>, std::vector<SymbolicTensor>>{
          {add(c.first, 1, loc), std::move(next)}, {}};
    };
    auto out = scan(step, std::pair<SymbolicTensor, T>{lo, init}, std::vector<SymbolicTensor>{}, n, false, loc);
    return out.first.second;
  }
  SymbolicTensor hi = fori_index(upper, dt, loc);
  auto c = [&](const std::pair<SymbolicTensor, T>& s) { return less(s.first, hi, loc); };
  auto b = [&](const std::pair<SymbolicTensor, T>& s) {
    T next = body_fn(s.first, s.second);
    return std::pair<SymbolicTensor, T>{add(s.first, 1, loc), std::move(next)};
  };
  return while_loop(c, b, std::pair<SymbolicTensor, T>{lo, init}, loc).second;
}

}  // namespace evoxc
