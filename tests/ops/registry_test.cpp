// Tests of the op registry itself, plus checks generated from the catalogue: every op accepts its dtype class.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "evoxc/ops/op_def.h"
#include "ops/ops_util.h"

namespace evoxc {
namespace {

using testing::all_dtypes;
using testing::sample_call;

// The op names documented in docs/semantics.md: the first cell of every row of its op
// tables (those whose header starts "| op |"), where each backticked word is an op.
std::set<std::string> documented_ops() {
  std::ifstream in(EVOXC_TEST_DATA_DIR "/../../docs/semantics.md");
  EXPECT_TRUE(in.good()) << "cannot read docs/semantics.md";
  std::set<std::string> names;
  std::string line;
  bool in_op_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("| op |", 0) == 0) in_op_table = true;
    if (line.rfind("|", 0) != 0) in_op_table = false;
    if (!in_op_table || line.rfind("| `", 0) != 0) continue;
    std::string cell = line.substr(2, line.find(" |", 2) - 2);
    for (size_t pos = 0; (pos = cell.find('`', pos)) != std::string::npos;) {
      size_t end = cell.find('`', pos + 1);
      if (end == std::string::npos) break;
      std::istringstream words(cell.substr(pos + 1, end - pos - 1));
      for (std::string w; words >> w;) names.insert(w);
      pos = end + 1;
    }
  }
  return names;
}

TEST(Registry, HoldsExactlyTheDocumentedOps) {
  std::set<std::string> registered;
  for (const OpDef* d : all_ops()) EXPECT_TRUE(registered.insert(d->name).second) << "duplicate " << d->name;
  std::set<std::string> documented = documented_ops();
  for (const auto& n : registered)
    EXPECT_TRUE(documented.count(n)) << n << " is registered but not in docs/semantics.md";
  for (const auto& n : documented) EXPECT_TRUE(registered.count(n)) << n << " is documented but not registered";
}

TEST(Registry, OrderIsByCategory) {
  const auto& ops = all_ops();
  for (size_t i = 1; i < ops.size(); ++i) {
    const OpDef* a = ops[i - 1];
    const OpDef* b = ops[i];
    ASSERT_LE(static_cast<int>(a->category), static_cast<int>(b->category)) << a->name << " before " << b->name;
  }
  // The order is stable from call to call (one registry).
  EXPECT_EQ(&all_ops(), &all_ops());
  EXPECT_EQ(all_ops().front()->name, "exp");
  // The extension ops come after the terminator, then the random ops, then the sparse primitives, each family
  // appended so that adding it moved no earlier family's ids.
  EXPECT_EQ(all_ops().back()->name, "sparse_csr_matmul");
  EXPECT_EQ(get_op("random_fold_in").id + 1, get_op("sparse_validate").id);
  EXPECT_EQ(get_op("stablehlo_call").id + 1, get_op("external_call").id);
  EXPECT_EQ(get_op("external_call").id + 1, get_op("random_bits").id);
  EXPECT_EQ(get_op("return").id + 1, get_op("stablehlo_call").id);
}

TEST(Registry, FindAndGet) {
  ASSERT_NE(find_op("add"), nullptr);
  EXPECT_EQ(find_op("add")->name, "add");
  EXPECT_EQ(&get_op("dot"), find_op("dot"));
  EXPECT_EQ(find_op("evoxc.add"), nullptr);
  EXPECT_EQ(find_op("no_such_op"), nullptr);
  try {
    get_op("no_such_op");
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown op 'no_such_op'"), std::string::npos) << e.what();
  }
}

TEST(Registry, CategoriesOfRepresentativeOps) {
  EXPECT_EQ(get_op("exp").category, OpCategory::ElementwiseUnary);
  EXPECT_EQ(get_op("shift_left").category, OpCategory::ElementwiseBinary);
  EXPECT_EQ(get_op("less").category, OpCategory::Comparison);
  EXPECT_EQ(get_op("bitcast_convert").category, OpCategory::ElementwiseOther);
  EXPECT_EQ(get_op("argmin").category, OpCategory::Reduction);
  EXPECT_EQ(get_op("dot").category, OpCategory::LinearAlgebra);
  EXPECT_EQ(get_op("slice").category, OpCategory::Structure);
  EXPECT_EQ(get_op("full").category, OpCategory::Creation);
  EXPECT_EQ(get_op("return").category, OpCategory::Terminator);
  EXPECT_EQ(get_op("return").max_operands, -1);
  EXPECT_EQ(get_op("concatenate").min_operands, 1);
  EXPECT_EQ(get_op("concatenate").max_operands, -1);
  EXPECT_EQ(get_op("iota").max_operands, 0);
}

TEST(Registry, DTypeClassesOfRepresentativeOps) {
  // Hand-copied from the docs table.
  EXPECT_EQ(get_op("sqrt").operand_dtypes, DTypeClass::Float);
  EXPECT_EQ(get_op("abs").operand_dtypes, DTypeClass::Numeric);
  EXPECT_EQ(get_op("popcount").operand_dtypes, DTypeClass::Int);
  EXPECT_EQ(get_op("bitwise_not").operand_dtypes, DTypeClass::IntOrBool);
  EXPECT_EQ(get_op("logical_xor").operand_dtypes, DTypeClass::Bool);
  EXPECT_EQ(get_op("reduce_any").operand_dtypes, DTypeClass::Bool);
  EXPECT_EQ(get_op("reduce_mean").operand_dtypes, DTypeClass::Float);
  EXPECT_EQ(get_op("equal").operand_dtypes, DTypeClass::Any);
  EXPECT_EQ(get_op("atan2").operand_dtypes, DTypeClass::Float);
}

TEST(Registry, NamesOfCategoriesAndClasses) {
  EXPECT_STREQ(op_category_name(OpCategory::Reduction), "reduction");
  EXPECT_STREQ(op_category_name(OpCategory::Terminator), "terminator");
  EXPECT_STREQ(dtype_class_name(DTypeClass::IntOrBool), "int or bool");
  EXPECT_STREQ(dtype_class_name(DTypeClass::Float), "float");
}

TEST(Registry, DTypeInClass) {
  EXPECT_TRUE(dtype_in_class(DType::BF16, DTypeClass::Float));
  EXPECT_FALSE(dtype_in_class(DType::I32, DTypeClass::Float));
  EXPECT_TRUE(dtype_in_class(DType::U64, DTypeClass::Numeric));
  EXPECT_FALSE(dtype_in_class(DType::Bool, DTypeClass::Numeric));
  EXPECT_TRUE(dtype_in_class(DType::Bool, DTypeClass::IntOrBool));
  EXPECT_FALSE(dtype_in_class(DType::F16, DTypeClass::IntOrBool));
  EXPECT_FALSE(dtype_in_class(DType::Bool, DTypeClass::Int));
  EXPECT_TRUE(dtype_in_class(DType::Bool, DTypeClass::Any));
  // Class sizes, counted by hand: 4 floats, 8 ints.
  auto count = [](DTypeClass c) {
    int n = 0;
    for (DType t : all_dtypes()) n += dtype_in_class(t, c) ? 1 : 0;
    return n;
  };
  EXPECT_EQ(count(DTypeClass::Any), 13);
  EXPECT_EQ(count(DTypeClass::Numeric), 12);
  EXPECT_EQ(count(DTypeClass::Float), 4);
  EXPECT_EQ(count(DTypeClass::Int), 8);
  EXPECT_EQ(count(DTypeClass::IntOrBool), 9);
  EXPECT_EQ(count(DTypeClass::Bool), 1);
}

TEST(Registry, EveryOpHasAOneLineDocAndInference) {
  for (const OpDef* d : all_ops()) {
    EXPECT_FALSE(d->doc.empty()) << d->name;
    EXPECT_EQ(d->doc.find('\n'), std::string::npos) << d->name;
    EXPECT_TRUE(static_cast<bool>(d->infer)) << d->name;
    // Only control flow carries regions (-1: one or more, as an n-way switch).
    if (d->category == OpCategory::ControlFlow) {
      EXPECT_NE(d->num_regions, 0) << d->name;
    } else {
      EXPECT_EQ(d->num_regions, 0) << d->name;
    }
  }
}

// Generated from the catalogue: each op accepts every dtype of its class and rejects one outside it.
TEST(Generated, EveryOpAcceptsItsDTypeClassAndRejectsOthers) {
  for (const OpDef* d : all_ops()) {
    SCOPED_TRACE(d->name);
    if (d->category == OpCategory::ControlFlow) continue;  // needs regions: tests/ops/control_test.cpp
    if (d->max_operands == 0) {
      auto c = sample_call(*d, DType::F32);
      EXPECT_NO_THROW(infer_result_types(*d, c.operands, c.attrs));
      continue;
    }
    int accepted = 0;
    std::optional<DType> outside;
    for (DType t : all_dtypes()) {
      if (!dtype_in_class(t, d->operand_dtypes)) {
        if (!outside) outside = t;
        continue;
      }
      auto c = sample_call(*d, t);
      try {
        auto r = infer_result_types(*d, c.operands, c.attrs);
        ++accepted;
        if (d->category != OpCategory::Terminator) {
          EXPECT_GE(r.size(), 1u);
        }
      } catch (const Error& e) {
        ADD_FAILURE() << "rejects " << dtype_name(t) << ": " << e.what();
      }
    }
    EXPECT_GT(accepted, 0);
    if (!outside) continue;
    auto c = sample_call(*d, *outside);
    try {
      infer_result_types(*d, c.operands, c.attrs);
      ADD_FAILURE() << "accepts " << dtype_name(*outside) << " outside class " << dtype_class_name(d->operand_dtypes);
    } catch (const TypeError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("'" + d->name + "'"), std::string::npos) << msg;
      EXPECT_NE(msg.find(std::string(dtype_name(*outside))), std::string::npos) << msg;
    }
  }
}

// Generated: every op rejects one operand too many (or too few, for variadic ones) with the arity message.
TEST(Generated, EveryOpChecksItsArity) {
  for (const OpDef* d : all_ops()) {
    SCOPED_TRACE(d->name);
    if (d->category == OpCategory::ControlFlow) continue;
    auto c = sample_call(*d, DType::F32);
    std::vector<TensorType> wrong = c.operands;
    if (d->max_operands >= 0) {
      wrong.push_back(TensorType(DType::F32, {2, 1}));
    } else if (d->min_operands > 0) {
      wrong.clear();
    } else {
      continue;  // return takes any number
    }
    try {
      infer_result_types(*d, wrong, c.attrs);
      ADD_FAILURE() << "accepted " << wrong.size() << " operands";
    } catch (const TypeError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("op '" + d->name + "' takes"), std::string::npos) << msg;
      EXPECT_NE(msg.find("got " + std::to_string(wrong.size())), std::string::npos) << msg;
    }
  }
}

// The last dtype of the op's class (float64 for the float and numeric classes), so the sample call is valid.
DType dtype_of_class(const OpDef& d) {
  DType last = DType::F32;
  for (DType t : all_dtypes())
    if (dtype_in_class(t, d.operand_dtypes)) last = t;
  return last;
}

// Generated: every attribute of every op is required, of one kind, and no unknown names are accepted.
TEST(Generated, EveryOpChecksItsAttributeSchema) {
  for (const OpDef* d : all_ops()) {
    SCOPED_TRACE(d->name);
    if (d->category == OpCategory::ControlFlow) continue;  // tests/ops/control_test.cpp
    auto c = sample_call(*d, dtype_of_class(*d));
    ASSERT_NO_THROW(infer_result_types(*d, c.operands, c.attrs));
    for (const AttrSpec& spec : d->attrs) {
      if (spec.required) {
        AttrMap missing = c.attrs;
        missing.erase(spec.name);
        EXPECT_THROW(infer_result_types(*d, c.operands, missing), TypeError) << spec.name;
      }
      AttrMap wrong_kind = c.attrs;
      // A value of a kind the attribute never takes: a string, or an int for string attributes.
      wrong_kind[spec.name] = spec.kind == AttrKind::String ? Attribute(int64_t{7}) : Attribute(std::string("text"));
      try {
        infer_result_types(*d, c.operands, wrong_kind);
        ADD_FAILURE() << "accepted a string for " << spec.name;
      } catch (const TypeError& e) {
        EXPECT_NE(std::string(e.what()).find("'" + spec.name + "'"), std::string::npos) << e.what();
      }
    }
    AttrMap extra = c.attrs;
    extra["bogus"] = int64_t{1};
    try {
      infer_result_types(*d, c.operands, extra);
      ADD_FAILURE() << "accepted an unknown attribute";
    } catch (const TypeError& e) {
      EXPECT_NE(std::string(e.what()).find("unknown attribute 'bogus'"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace evoxc
