// Generated from the catalogue: every op has a sample call that type-checks on every dtype of
// its class, and its traits (elementwise, linear operands, data attributes) are consistent.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "evoxc/ops/op_def.h"
#include "ops/ops_util.h"

namespace evoxc {
namespace {

using testing::all_dtypes;

bool elementwise_category(OpCategory c) {
  return c == OpCategory::ElementwiseUnary || c == OpCategory::ElementwiseBinary || c == OpCategory::Comparison ||
         c == OpCategory::ElementwiseOther;
}

TEST(Samples, EveryOpHasOneThatInfersOnEveryDTypeOfItsClass) {
  int calls = 0;
  for (const OpDef* d : all_ops()) {
    SCOPED_TRACE(d->name);
    ASSERT_TRUE(static_cast<bool>(d->sample)) << "no sample";
    for (DType t : all_dtypes()) {
      if (!dtype_in_class(t, d->operand_dtypes)) continue;
      SCOPED_TRACE(dtype_name(t));
      OpSample s = d->sample(t);
      // The sample's arity is the op's own: a check of the sample, not of inference.
      auto n = static_cast<int>(s.operands.size());
      EXPECT_GE(n, d->min_operands);
      if (d->max_operands >= 0) {
        EXPECT_LE(n, d->max_operands);
      }
      // Ops with regions: `infer` checks what needs no regions (tests/ops/control_test.cpp builds them).
      EXPECT_NO_THROW(infer_result_types(*d, s.operands, s.attrs));
      ++calls;
    }
  }
  EXPECT_GT(calls, 700);  // about 140 ops, most on several dtypes
}

TEST(Samples, OperandsOfTheClassCarryTheRequestedDType) {
  // A sample on t uses t for at least one operand, so a generated test over dtypes really
  // varies them (indices, predicates and starts keep their own dtype).
  for (const OpDef* d : all_ops()) {
    if (d->max_operands == 0) continue;
    SCOPED_TRACE(d->name);
    for (DType t : {DType::F64, DType::I16}) {
      if (!dtype_in_class(t, d->operand_dtypes)) continue;
      OpSample s = d->sample(t);
      if (s.operands.empty()) continue;
      bool uses = std::any_of(s.operands.begin(), s.operands.end(), [&](const TensorType& o) { return o.dtype == t; });
      EXPECT_TRUE(uses) << dtype_name(t);
    }
  }
}

TEST(Traits, ElementwiseExactlyInTheElementwiseCategories) {
  int n = 0;
  for (const OpDef* d : all_ops()) {
    EXPECT_EQ(d->elementwise, elementwise_category(d->category))
        << d->name << " in category " << op_category_name(d->category);
    n += d->elementwise ? 1 : 0;
  }
  EXPECT_GE(n, 80);  // 47 unary, 23 binary, 6 comparisons, 4 others, counted from docs/semantics.md
}

// An elementwise op's results have the broadcast shape of its operands (the sample's, and
// operands of distinct extents that need broadcasting on both sides).
TEST(Traits, ElementwiseResultsHaveTheBroadcastShape) {
  for (const OpDef* d : all_ops()) {
    if (!d->elementwise) continue;
    SCOPED_TRACE(d->name);
    DType t = DType::F32;
    if (!dtype_in_class(t, d->operand_dtypes))
      t = dtype_in_class(DType::I32, d->operand_dtypes) ? DType::I32 : DType::Bool;
    OpSample s = d->sample(t);
    std::vector<TensorType> r = infer_result_types(*d, s.operands, s.attrs);
    for (const TensorType& out : r) EXPECT_EQ(out.shape, s.operands[0].shape);
    if (s.operands.size() < 2) continue;
    s.operands[0].shape = Shape{3, 1};
    for (size_t i = 1; i < s.operands.size(); ++i) s.operands[i].shape = Shape{1, 4};
    r = infer_result_types(*d, s.operands, s.attrs);
    for (const TensorType& out : r) EXPECT_EQ(out.shape, (Shape{3, 4}));
  }
}

void check_operand_list(const OpDef& d, const std::vector<int>& list, const char* what) {
  SCOPED_TRACE(what);
  for (size_t i = 0; i < list.size(); ++i) {
    int k = list[i];
    if (k == kEveryOperand) {
      EXPECT_LT(d.max_operands, 0) << "kEveryOperand on an op of fixed arity";
      EXPECT_EQ(list.size(), 1u) << "kEveryOperand stands alone";
      continue;
    }
    EXPECT_GE(k, 0);
    if (d.max_operands >= 0) {
      EXPECT_LT(k, d.max_operands) << "operand " << k << " beyond the arity";
    }
    if (i > 0) {
      EXPECT_LT(list[i - 1], k) << "not sorted and unique";
    }
  }
}

TEST(Traits, LinearOperandsAreWithinTheArity) {
  int linear = 0;
  for (const OpDef* d : all_ops()) {
    SCOPED_TRACE(d->name);
    check_operand_list(*d, d->linear_operands, "linear_operands");
    check_operand_list(*d, d->linear_each, "linear_each");
    // linear_each is a superset of linear_operands.
    for (int k : d->linear_operands)
      EXPECT_TRUE(k == kEveryOperand ? d->linear_each == d->linear_operands : linear_in(d->linear_each, k)) << k;
    // Linearity is over the reals: ops that take only ints or bools have no tangents.
    DTypeClass c = d->operand_dtypes;
    if (c == DTypeClass::Int || c == DTypeClass::IntOrBool || c == DTypeClass::Bool) {
      EXPECT_TRUE(d->linear_each.empty());
    }
    if (d->max_operands == 0) {
      EXPECT_TRUE(d->linear_each.empty());
    }
    linear += d->linear_each.empty() ? 0 : 1;
  }
  EXPECT_GT(linear, 25);
}

TEST(Traits, LinearInExpandsEveryOperand) {
  const OpDef& cat = get_op("concatenate");
  EXPECT_TRUE(linear_in(cat.linear_operands, 0));
  EXPECT_TRUE(linear_in(cat.linear_operands, 7));
  const OpDef& mul = get_op("multiply");
  EXPECT_TRUE(mul.linear_operands.empty());
  EXPECT_TRUE(linear_in(mul.linear_each, 0));
  EXPECT_TRUE(linear_in(mul.linear_each, 1));
  const OpDef& sel = get_op("select");
  EXPECT_FALSE(linear_in(sel.linear_operands, 0));
  EXPECT_TRUE(linear_in(sel.linear_operands, 2));
}

const AttrSpec* find_spec(const OpDef& d, const std::string& name) {
  for (const AttrSpec& s : d.attrs)
    if (s.name == name) return &s;
  return nullptr;
}

bool value_kind(AttrKind k) {
  return k == AttrKind::Float || k == AttrKind::Int || k == AttrKind::Bool || k == AttrKind::Tensor;
}

// Another value of the same kind, for a data attribute: what stacking programs would vary.
Attribute other_value(const Attribute& a) {
  switch (attr_kind(a)) {
    case AttrKind::Float: return std::get<double>(a) + 0.75;
    case AttrKind::Int: return std::get<int64_t>(a) + 3;
    case AttrKind::Bool: return !std::get<bool>(a);
    case AttrKind::Tensor: {
      const Tensor& v = std::get<Tensor>(a);
      return Tensor::full(v.shape(), 2.0, v.dtype());
    }
    default: ADD_FAILURE() << "not a value kind"; return a;
  }
}

Attribute value_of_kind(AttrKind k) {
  switch (k) {
    case AttrKind::Float: return 0.25;
    case AttrKind::Int: return int64_t{2};
    case AttrKind::Bool: return true;
    default: return Tensor::zeros({3}, DType::F32);
  }
}

TEST(Traits, DataAttributesAreValuesOfTheSchema) {
  std::set<std::string> with_data;
  for (const OpDef* d : all_ops()) {
    SCOPED_TRACE(d->name);
    std::set<std::string> seen;
    for (const std::string& a : d->data_attrs) {
      EXPECT_TRUE(seen.insert(a).second) << a << " listed twice";
      const AttrSpec* spec = find_spec(*d, a);
      ASSERT_NE(spec, nullptr) << a << " is not an attribute of the op";
      EXPECT_TRUE(value_kind(spec->kind)) << a << " is a " << attr_kind_name(spec->kind);
      for (AttrKind k : spec->also) EXPECT_TRUE(value_kind(k)) << a << " also takes " << attr_kind_name(k);
      with_data.insert(d->name);
    }
  }
  EXPECT_EQ(with_data, (std::set<std::string>{"constant", "full", "linspace", "matrix_rank", "nan_to_num"}));
}

// Changing a data attribute's value keeps every result type: programs that differ only there
// have one signature and can be stacked.
TEST(Traits, ChangingADataAttributeKeepsTheResultTypes) {
  for (const OpDef* d : all_ops()) {
    if (d->data_attrs.empty()) continue;
    SCOPED_TRACE(d->name);
    DType t = dtype_in_class(DType::F32, d->operand_dtypes) ? DType::F32 : DType::I32;
    OpSample s = d->sample(t);
    for (const std::string& a : d->data_attrs) {
      SCOPED_TRACE(a);
      AttrMap base = s.attrs;
      // An optional attribute the sample leaves out (matrix_rank's tolerances): give it one value first.
      if (!base.count(a)) base[a] = value_of_kind(find_spec(*d, a)->kind);
      std::vector<TensorType> want = infer_result_types(*d, s.operands, base);
      AttrMap changed = base;
      changed[a] = other_value(base.at(a));
      EXPECT_EQ(infer_result_types(*d, s.operands, changed), want);
      // Every kind the attribute also accepts is data too (full's value may be an int or a bool).
      for (AttrKind k : find_spec(*d, a)->also) {
        changed[a] = value_of_kind(k);
        EXPECT_EQ(infer_result_types(*d, s.operands, changed), want) << attr_kind_name(k);
      }
    }
  }
}

// cmake/check_op_names.cmake allows `mode == "add"` because docs/semantics.md documents
// "`mode: string`": every string attribute of the catalogue must be documented that way.
TEST(Traits, StringAttributesAreDocumentedForTheOpNameCheck) {
  std::ifstream in(EVOXC_TEST_DATA_DIR "/../../docs/semantics.md");
  ASSERT_TRUE(in.good());
  std::stringstream doc;
  doc << in.rdbuf();
  int n = 0;
  for (const OpDef* d : all_ops())
    for (const AttrSpec& a : d->attrs)
      if (a.kind == AttrKind::String) {
        EXPECT_NE(doc.str().find("`" + a.name + ": string`"), std::string::npos) << d->name << "." << a.name;
        ++n;
      }
  EXPECT_GE(n, 4);  // pad and scatter mode, searchsorted side, norm ord
}

// Hand-checked rows of the trait table, against JAX's ad.deflinear / defbilinear.
TEST(Traits, RepresentativeRows) {
  auto joint = [](const char* op) { return get_op(op).linear_operands; };
  auto each = [](const char* op) { return get_op(op).linear_each; };
  using V = std::vector<int>;
  EXPECT_EQ(joint("add"), (V{0, 1}));
  EXPECT_EQ(joint("subtract"), (V{0, 1}));
  EXPECT_EQ(joint("neg"), (V{0}));
  EXPECT_EQ(joint("multiply"), V{});
  EXPECT_EQ(each("multiply"), (V{0, 1}));
  EXPECT_EQ(each("divide"), (V{0}));
  EXPECT_EQ(joint("select"), (V{1, 2}));
  EXPECT_EQ(joint("reduce_sum"), (V{0}));
  EXPECT_EQ(joint("reduce_max"), V{});
  EXPECT_EQ(joint("cumsum"), (V{0}));
  EXPECT_EQ(each("dot"), (V{0, 1}));
  EXPECT_EQ(each("dot_general"), (V{0, 1}));
  EXPECT_EQ(each("conv"), (V{0, 1}));
  EXPECT_EQ(each("triangular_solve"), (V{1}));
  EXPECT_EQ(joint("pad"), (V{0, 1}));
  EXPECT_EQ(joint("concatenate"), (V{kEveryOperand}));
  EXPECT_EQ(joint("gather"), (V{0}));
  EXPECT_EQ(joint("scatter"), V{});
  EXPECT_EQ(joint("dynamic_slice"), (V{0}));
  EXPECT_EQ(joint("dynamic_update_slice"), (V{0, 1}));
  EXPECT_EQ(each("exp"), V{});
  EXPECT_EQ(each("bitwise_xor"), V{});
  EXPECT_EQ(each("sort"), V{});
  EXPECT_TRUE(get_op("exp").elementwise);
  EXPECT_TRUE(get_op("select").elementwise);
  EXPECT_FALSE(get_op("tril").elementwise);
  EXPECT_EQ(get_op("full").data_attrs, std::vector<std::string>{"value"});
  EXPECT_TRUE(get_op("arange").data_attrs.empty());  // start, stop and step set the length
  EXPECT_TRUE(get_op("iota").data_attrs.empty());
}

}  // namespace
}  // namespace evoxc
