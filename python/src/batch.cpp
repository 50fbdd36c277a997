// Bindings of batch_functions and its BatchReport (plain data in Python).
#include "evoxc/transforms/batch.h"

#include "bind.h"

namespace evoxc::py {

namespace {

const std::pair<const char*, OpCategory> kCategories[] = {
    {"elementwise_unary", OpCategory::ElementwiseUnary},
    {"elementwise_binary", OpCategory::ElementwiseBinary},
    {"comparison", OpCategory::Comparison},
    {"elementwise_other", OpCategory::ElementwiseOther},
    {"elementwise", OpCategory::ElementwiseUnary},
};

// switch_ops: None/False (off), True (the elementwise and comparison categories), or a list of
// category names ("elementwise_unary", "elementwise_binary", "comparison", "elementwise") and op names.
SwitchOps switch_ops(nb::handle h) {
  if (h.is_none() || h.ptr() == Py_False) return SwitchOps::none();
  if (h.ptr() == Py_True) return SwitchOps::elementwise();
  SwitchOps s;
  for (nb::handle x : nb::borrow<nb::sequence>(h)) {
    std::string item = nb::cast<std::string>(x);
    bool category = false;
    for (const auto& [cname, cat] : kCategories) {
      if (item != cname) continue;
      category = true;
      s.categories.push_back(cat);
      if (item == "elementwise") s.categories.push_back(OpCategory::ElementwiseBinary);
    }
    if (!category) {
      get_op(item);  // an unknown op name is an error now, not at merge time
      s.op_names.push_back(item);
    }
  }
  return s;
}

Bands bands(nb::handle h) {
  if (h.is_none()) return Bands::none();
  if (nb::isinstance<nb::str>(h)) {
    if (nb::cast<std::string>(h) == "auto") return Bands::autodetect();
    throw ValidationError("batch_functions: bands must be None, an int or 'auto', got '" + nb::cast<std::string>(h) +
                          "'");
  }
  int64_t k = nb::cast<int64_t>(h);
  if (k < 1) throw ValidationError("batch_functions: bands must be >= 1");
  return Bands::of(k);
}

Alignment alignment(const std::string& a) {
  if (a == "variant") return Alignment::Variant;
  if (a == "occurrence") return Alignment::Occurrence;
  if (a == "auto") return Alignment::Auto;
  throw ValidationError("batch_functions: alignment must be 'variant', 'occurrence' or 'auto', got '" + a + "'");
}

nb::dict report_dict(const BatchReport& r) {
  nb::dict d;
  d["programs"] = r.programs;
  d["program_ops"] = r.program_ops;
  d["emitted_ops"] = r.emitted_ops;
  d["value_classes"] = r.value_classes;
  d["shared_classes"] = r.shared_classes;
  d["own_ops"] = r.own_ops;
  nb::list sw;
  for (const auto& s : r.switched) {
    nb::dict e;
    e["variants"] = s.variants;
    e["rows"] = s.rows;
    sw.append(e);
  }
  d["switched"] = sw;
  d["muxes"] = r.muxes;
  d["output_muxes"] = r.output_muxes;
  d["bands"] = r.bands;
  d["band_sizes"] = r.band_sizes;
  d["alignment"] = r.alignment;
  nb::dict c, sc;
  c["work"] = r.cost_estimate.work;
  c["dispatches"] = r.cost_estimate.dispatches;
  sc["work"] = r.separate_cost.work;
  sc["dispatches"] = r.separate_cost.dispatches;
  d["cost_estimate"] = c;
  d["separate_cost"] = sc;
  d["text"] = r.to_string();
  return d;
}

}  // namespace

void bind_batch(nb::module_& m) {
  m.def(
      "_batch_functions",
      [](const std::vector<Graph>& programs, nb::handle axes, nb::handle out_axes, nb::handle sw, nb::handle b,
         const std::string& align, double dispatch_seconds, double element_seconds) {
        BatchOptions o;
        o.axes = axis_tree_from_python(axes, "batch_functions axes");
        o.out_axes = axis_tree_from_python(out_axes, "batch_functions out_axes");
        o.switch_ops = switch_ops(sw);
        o.bands = bands(b);
        o.alignment = alignment(align);
        o.cost_model = BatchCostModel{dispatch_seconds, element_seconds};
        BatchResult r = batch_functions(programs, o);
        return nb::make_tuple(r.graph, report_dict(r.report));
      },
      nb::arg("programs"), nb::arg("axes").none(), nb::arg("out_axes").none(), nb::arg("switch_ops").none(),
      nb::arg("bands").none(), nb::arg("alignment"), nb::arg("dispatch_seconds"), nb::arg("element_seconds"));
}

}  // namespace evoxc::py
