// Bindings of in-graph control flow (cond, switch, while_loop, scan, fori_loop) over flat lists;
// python/evoxc/_control.py adds pytrees.
#include "evoxc/trace/control.h"

#include <string>
#include <utility>
#include <vector>

#include "bind.h"

namespace evoxc::py {

namespace {

using STree = Tree<SymbolicTensor>;

nb::list to_list(const STree& t) {
  nb::list l;
  for (const auto& leaf : t.flatten()) l.append(nb::cast(leaf));
  return l;
}

STree from_list(nb::handle h, const char* what) {
  if (!PyList_Check(h.ptr()) && !PyTuple_Check(h.ptr()))
    throw InternalError(std::string(what) + ": the Python layer must return a flat list");
  std::vector<STree> kids;
  for (nb::handle x : nb::borrow<nb::sequence>(h)) kids.emplace_back(output_leaf(x));
  return STree::list(std::move(kids));
}

SymbolicTensor single(nb::handle h, const char* what) {
  if (nb::isinstance<SymbolicTensor>(h)) return nb::cast<SymbolicTensor>(h);
  if (PyBool_Check(h.ptr()))
    throw TraceError(std::string(what) +
                     " returned a Python bool: it must return a rank-0 bool SymbolicTensor "
                     "computed from the carry (e.g. evoxc.less(i, n))");
  return output_leaf(h);
}

STree call_region(const nb::callable& fn, const STree& args, const char* what) {
  KeepLocation keep;
  return from_list(fn(to_list(args)), what);
}

}  // namespace

void bind_control(nb::module_& m) {
  def_op(
      m, "_cond",
      [](const SymbolicTensor& pred, nb::callable tf, nb::callable ff, const std::vector<SymbolicTensor>& ops) {
        STree operands = STree::list(std::vector<STree>(ops.begin(), ops.end()));
        STree r = cond(
            pred, [&](const STree& a) { return call_region(tf, a, "cond"); },
            [&](const STree& a) { return call_region(ff, a, "cond"); }, operands);
        return to_list(r);
      },
      nb::arg("pred"), nb::arg("true_fn"), nb::arg("false_fn"), nb::arg("operands"));
  def_op(
      m, "_switch",
      [](const SymbolicTensor& index, std::vector<nb::callable> branches, const std::vector<SymbolicTensor>& ops) {
        if (branches.empty()) throw TraceError("switch: needs at least one branch");
        STree operands = STree::list(std::vector<STree>(ops.begin(), ops.end()));
        // switch_ takes an initializer_list; build the op through the same entry with n regions.
        std::vector<std::function<STree(const STree&)>> fns;
        for (auto& b : branches) fns.push_back([b](const STree& a) { return call_region(b, a, "switch"); });
        std::vector<SymbolicTensor> flat{index};
        std::vector<TensorType> arg_types;
        for (const auto& l : ops) {
          flat.push_back(l);
          arg_types.push_back(l.type());
        }
        std::vector<control_detail::RegionSpec> regions;
        for (auto& f : fns)
          regions.push_back({arg_types, [&f, &operands](const std::vector<SymbolicTensor>& args) {
                               size_t pos = 0;
                               return f(operands.unflatten_from(args, pos));
                             }});
        auto check = [](const std::vector<STree>& outs) {
          for (size_t i = 1; i < outs.size(); ++i)
            control_detail::require_same_tree("switch", outs[0], "branch 0", outs[i], "branch " + std::to_string(i));
        };
        auto results = control_detail::emit_control(control_detail::cond_op(), flat, {}, regions, check,
                                                    std::source_location::current());
        nb::list l;
        for (const auto& r : results) l.append(nb::cast(r));
        return l;
      },
      nb::arg("index"), nb::arg("branches"), nb::arg("operands"));
  def_op(
      m, "_while_loop",
      [](nb::callable cf, nb::callable bf, const std::vector<SymbolicTensor>& init) {
        STree carry = STree::list(std::vector<STree>(init.begin(), init.end()));
        STree r = while_loop(
            [&](const STree& c) {
              KeepLocation keep;
              return single(cf(to_list(c)), "while_loop's cond_fn");
            },
            [&](const STree& c) { return call_region(bf, c, "while_loop"); }, carry);
        return to_list(r);
      },
      nb::arg("cond_fn"), nb::arg("body_fn"), nb::arg("init"));
  def_op(
      m, "_scan",
      [](nb::callable bf, const std::vector<SymbolicTensor>& init, const std::vector<SymbolicTensor>& xs,
         std::optional<int64_t> length, bool reverse) {
        STree carry = STree::list(std::vector<STree>(init.begin(), init.end()));
        STree xt = STree::list(std::vector<STree>(xs.begin(), xs.end()));
        auto [c, y] = scan(
            [&](const STree& cc, const STree& x) {
              KeepLocation keep;
              nb::object r = bf(to_list(cc), to_list(x));
              nb::tuple pair = nb::cast<nb::tuple>(r);
              return std::pair<STree, STree>{from_list(pair[0], "scan"), from_list(pair[1], "scan")};
            },
            carry, xt, length, reverse);
        return nb::make_tuple(to_list(c), to_list(y));
      },
      nb::arg("body_fn"), nb::arg("init"), nb::arg("xs"), nb::arg("length") = nb::none(), nb::arg("reverse") = false);
  def_op(
      m, "_fori_loop",
      [](const Operand& lower, const Operand& upper, nb::callable bf, const std::vector<SymbolicTensor>& init) {
        STree carry = STree::list(std::vector<STree>(init.begin(), init.end()));
        STree r = fori_loop(
            lower, upper,
            [&](const SymbolicTensor& i, const STree& c) {
              KeepLocation keep;
              return from_list(bf(nb::cast(i), to_list(c)), "fori_loop");
            },
            carry);
        return to_list(r);
      },
      nb::arg("lower"), nb::arg("upper"), nb::arg("body_fn"), nb::arg("init"));
}

}  // namespace evoxc::py
