// The op registry: built once from the family files, plus the checks every op shares (arity, dtypes, attributes).
#include "ops/registry.h"

#include <algorithm>
#include <unordered_map>

namespace evoxc {

namespace ops_detail {

OpDef& OpTable::add(OpDef def) {
  defs_.push_back(std::make_unique<OpDef>(std::move(def)));
  return *defs_.back();
}

void require_same_dtype(const std::string& op, std::span<const TensorType> operands, size_t first) {
  for (size_t i = first + 1; i < operands.size(); ++i) {
    if (operands[i].dtype != operands[first].dtype)
      throw TypeError(op_label(op) + ": operand " + std::to_string(i) + " has dtype " +
                      std::string(dtype_name(operands[i].dtype)) + " but operand " + std::to_string(first) +
                      " has dtype " + std::string(dtype_name(operands[first].dtype)) +
                      "; IR ops never promote, so convert one operand first");
  }
}

Shape reduced_shape(const Shape& in, const std::vector<int64_t>& axes, bool keepdims) {
  std::vector<DimExpr> out;
  size_t next = 0;
  for (size_t i = 0; i < in.rank(); ++i) {
    bool reduced = next < axes.size() && axes[next] == static_cast<int64_t>(i);
    if (reduced) ++next;
    if (!reduced) {
      out.push_back(in[i]);
    } else if (keepdims) {
      out.emplace_back(1);
    }
  }
  return Shape(std::move(out));
}

void check_axes(const std::string& op, const std::string& attr, const std::vector<int64_t>& axes, size_t rank) {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= static_cast<int64_t>(rank))
      throw ShapeError(op_label(op) + ": axis " + std::to_string(axes[i]) + " in '" + attr +
                       "' is out of range for rank " + std::to_string(rank) + "; axes must be normalised to [0, rank)");
    if (i > 0 && axes[i] <= axes[i - 1])
      throw ShapeError(op_label(op) + ": '" + attr + "' must be sorted and free of duplicates, got " +
                       std::to_string(axes[i - 1]) + " before " + std::to_string(axes[i]));
  }
}

void check_shape_attr(const std::string& op, const std::string& attr, const Shape& s) {
  for (const DimExpr& d : s)
    if (d.is_const() && d.value() < 0)
      throw ShapeError(op_label(op) + ": attribute '" + attr + "' has negative extent " + d.to_string() + " in (" +
                       s.to_string() + "); resolve -1 before building the op");
}

namespace {
void add_sorted(std::vector<int>& to, const std::vector<int>& from) {
  for (int i : from)
    if (std::find(to.begin(), to.end(), i) == to.end()) to.push_back(i);
  std::sort(to.begin(), to.end());
}
}  // namespace

void set_linear(OpDef& d, std::vector<int> operands) {
  d.linear_each.clear();
  add_sorted(d.linear_each, operands);
  d.linear_operands = std::move(operands);
}

void set_linear_each(OpDef& d, const std::vector<int>& operands) { add_sorted(d.linear_each, operands); }

Shape sample_shape() { return Shape{2, 1}; }

SampleFn sample_operands(int n, AttrMap attrs) {
  return [n, attrs = std::move(attrs)](DType t) {
    return OpSample{std::vector<TensorType>(static_cast<size_t>(n), TensorType(t, sample_shape())), attrs};
  };
}

SampleFn sample_shapes(std::vector<Shape> shapes, AttrMap attrs) {
  return [shapes = std::move(shapes), attrs = std::move(attrs)](DType t) {
    OpSample s{{}, attrs};
    for (const Shape& sh : shapes) s.operands.emplace_back(t, sh);
    return s;
  };
}

}  // namespace ops_detail

namespace {

using ops_detail::op_label;

struct Registry {
  std::vector<std::unique_ptr<OpDef>> owned;
  std::vector<const OpDef*> ordered;
  std::unordered_map<std::string_view, const OpDef*> by_name;
};

// Built on first use, so no static-initialisation order between translation units matters.
const Registry& registry() {
  static const Registry r = [] {
    ops_detail::OpTable t;
    ops_detail::register_elementwise_ops(t);
    ops_detail::register_reduce_ops(t);
    ops_detail::register_scan_ops(t);
    ops_detail::register_linalg_ops(t);
    ops_detail::register_decomposition_ops(t);
    ops_detail::register_conv_ops(t);
    ops_detail::register_structure_ops(t);
    ops_detail::register_layout_ops(t);
    ops_detail::register_indexing_ops(t);
    ops_detail::register_sort_ops(t);
    ops_detail::register_row_switch_ops(t);
    ops_detail::register_postfix_ops(t);
    ops_detail::register_creation_ops(t);
    ops_detail::register_control_ops(t);
    ops_detail::register_extension_ops(t);
    ops_detail::register_random_ops(t);
    ops_detail::register_sparse_ops(t);
    Registry reg;
    reg.owned = std::move(t.defs());
    for (const auto& d : reg.owned) {
      if (!reg.by_name.emplace(d->name, d.get()).second)
        throw InternalError("op registry: op '" + d->name + "' is registered twice");
      reg.ordered.push_back(d.get());
    }
    // Families register in docs order; a stable sort by category keeps that order inside each category.
    std::stable_sort(reg.ordered.begin(), reg.ordered.end(),
                     [](const OpDef* a, const OpDef* b) { return a->category < b->category; });
    // Dense ids follow that order, so every table and the coverage matrix list ops alike.
    for (const OpDef* d : reg.ordered) register_op_info(const_cast<OpDef&>(*d));  // NOLINT: ids are set once, here
    return reg;
  }();
  return r;
}

// The IR resolves op names through this loader, installed before main() runs; it only
// records a function pointer, so it is safe whatever order static initialisation takes.
const bool kLoaderInstalled = (set_op_catalogue_loader([] { (void)registry(); }), true);

}  // namespace
}  // namespace evoxc

namespace evoxc {
namespace {

std::string dtype_class_members(DTypeClass c) {
  std::string s;
  for (int i = 0; i < kNumDTypes; ++i) {
    auto t = static_cast<DType>(i);
    if (!dtype_in_class(t, c)) continue;
    if (!s.empty()) s += ", ";
    s += dtype_name(t);
  }
  return s;
}

std::string arity_text(const OpDef& def) {
  auto plural = [](int n) { return std::to_string(n) + (n == 1 ? " operand" : " operands"); };
  if (def.max_operands < 0) return "at least " + plural(def.min_operands);
  if (def.min_operands == def.max_operands) return plural(def.min_operands);
  return "between " + std::to_string(def.min_operands) + " and " + plural(def.max_operands);
}

void check_attributes(const OpDef& def, const AttrMap& attrs) {
  for (const AttrSpec& spec : def.attrs) {
    auto it = attrs.find(spec.name);
    if (it == attrs.end()) {
      if (spec.required)
        throw TypeError(op_label(def.name) + ": missing required attribute '" + spec.name + "' (" +
                        attr_kind_name(spec.kind) + ")");
      continue;
    }
    AttrKind k = attr_kind(it->second);
    if (k == spec.kind || std::find(spec.also.begin(), spec.also.end(), k) != spec.also.end()) continue;
    std::string want = attr_kind_name(spec.kind);
    for (AttrKind a : spec.also) want += std::string(" or ") + attr_kind_name(a);
    throw TypeError(op_label(def.name) + ": attribute '" + spec.name + "' must be a " + want + ", got a " +
                    attr_kind_name(k));
  }
  for (const auto& [name, value] : attrs) {
    bool known = std::any_of(def.attrs.begin(), def.attrs.end(), [&](const AttrSpec& s) { return s.name == name; });
    if (known) continue;
    std::string takes;
    for (const AttrSpec& s : def.attrs) takes += (takes.empty() ? "" : ", ") + s.name;
    throw TypeError(op_label(def.name) + ": unknown attribute '" + name + "'; it takes " +
                    (takes.empty() ? std::string("no attributes") : takes));
  }
}

}  // namespace

const char* op_category_name(OpCategory c) {
  switch (c) {
    case OpCategory::ElementwiseUnary: return "elementwise_unary";
    case OpCategory::ElementwiseBinary: return "elementwise_binary";
    case OpCategory::Comparison: return "comparison";
    case OpCategory::ElementwiseOther: return "elementwise_other";
    case OpCategory::Reduction: return "reduction";
    case OpCategory::LinearAlgebra: return "linear_algebra";
    case OpCategory::Structure: return "structure";
    case OpCategory::Creation: return "creation";
    case OpCategory::ControlFlow: return "control_flow";
    case OpCategory::Terminator: return "terminator";
    case OpCategory::Extension: return "extension";
    case OpCategory::Random: return "random";
    case OpCategory::Sparse: return "sparse";
  }
  return "?";
}

const OpDef* find_op(std::string_view name) {
  const auto& r = registry();
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second;
}

const OpDef& get_op(std::string_view name) {
  if (const OpDef* d = find_op(name)) return *d;
  throw TypeError("unknown op '" + std::string(name) + "'; all_ops() lists the ops this build knows");
}

const std::vector<const OpDef*>& all_ops() { return registry().ordered; }

size_t num_ops() { return registry().ordered.size(); }

const OpDef& op_def(uint32_t id) {
  const auto& ops = registry().ordered;
  if (id >= ops.size()) throw InternalError("op_def: no op has id " + std::to_string(id));
  return *ops[id];
}

std::vector<TensorType> OpDef::infer_types(std::span<const TensorType> operands, const AttrMap& attrs,
                                           const Operation* op) const {
  std::vector<TensorType> r = infer_result_types(*this, operands, attrs);
  if (!infer_regions) return r;
  if (op == nullptr)
    throw InternalError("op '" + name +
                        "' infers its results from its regions: build it with Builder::create_detached");
  return infer_regions(operands, attrs, *op);
}

std::vector<TensorType> infer_result_types(const OpDef& def, std::span<const TensorType> operands,
                                           const AttrMap& attrs) {
  auto n = static_cast<int>(operands.size());
  if (n < def.min_operands || (def.max_operands >= 0 && n > def.max_operands))
    throw TypeError(op_label(def.name) + " takes " + arity_text(def) + ", got " + std::to_string(n));
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!dtype_in_class(operands[i].dtype, def.operand_dtypes))
      throw TypeError(op_label(def.name) + ": operand " + std::to_string(i) + " has dtype " +
                      std::string(dtype_name(operands[i].dtype)) + ", expected " +
                      dtype_class_name(def.operand_dtypes) + " (" + dtype_class_members(def.operand_dtypes) + ")");
  }
  check_attributes(def, attrs);
  if (!def.infer) return {};
  return def.infer(operands, attrs);
}

Graph sample_graph(const OpDef& def, const OpSample& sample) {
  std::vector<TensorType> out = infer_result_types(def, sample.operands, sample.attrs);
  auto module = std::make_shared<Module>();
  Function& f = module->add_function("main");
  std::vector<Value*> args;
  for (const auto& ty : sample.operands) args.push_back(f.entry().add_argument(ty));
  Operation* op = f.entry().append(def, args, out, sample.attrs);
  std::vector<Value*> results;
  for (const auto& r : op->results()) results.push_back(r.get());
  f.entry().append(get_op("return"), results, {});
  f.result_types() = out;
  return Graph(module, TreeDef::tuple(std::vector<TreeDef>(sample.operands.size(), TreeDef(LeafMark{}))),
               TreeDef::tuple(std::vector<TreeDef>(out.size(), TreeDef(LeafMark{}))));
}

}  // namespace evoxc
