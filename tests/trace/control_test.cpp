// Tracing of cond, switch_, while_loop, scan and fori_loop: region structure, pytrees and the TraceErrors for
// mismatches.
#include "evoxc/trace/control.h"

#include <gtest/gtest.h>

#include "evoxc/evoxc.h"
#include "trace/trace_util.h"

namespace evoxc {
namespace {

using ST = SymbolicTensor;

using testing::expect_error;

TEST(TraceControl, CondBuildsTwoRegionsWithPytrees) {
  auto f = [](ST p, ST x, ST y) {
    auto out = cond(
        p, [](const std::pair<ST, ST>& s) { return std::make_tuple(s.first + s.second, s.first); },
        [](const std::pair<ST, ST>& s) { return std::make_tuple(s.second, s.first * 2.0); }, std::pair<ST, ST>{x, y});
    return std::get<0>(out) + std::get<1>(out);
  };
  Graph g = trace(f, TensorSpec({}, bool_), TensorSpec({3}, f32), TensorSpec({3}, f32));
  const Operation& op = *g.main().entry().operations()[0];
  EXPECT_EQ(op.name(), "cond");
  EXPECT_EQ(op.regions().size(), 2u);
  EXPECT_EQ(op.num_operands(), 3u);
  EXPECT_EQ(op.num_results(), 2u);
  EXPECT_EQ(op.region(0).block().num_arguments(), 2u);
  verify(g);
}

TEST(TraceControl, SymbolicShapesInsideRegions) {
  DimExpr N = Dim("N");
  auto f = [](ST x) {
    return while_loop([](const ST& v) { return less(sum(v), 100.0); }, [](const ST& v) { return v * 2.0 + 1.0; }, x);
  };
  Graph g = trace(f, TensorSpec({N}, f32));
  verify(g);
  EXPECT_NE(g.to_string().find("tensor<Nxf32>"), std::string::npos);
  Tensor y = run(build_graph(g), Tensor::from_vector<float>({1, 2}, {2})).leaf();
  // (1,2) -> (3,5) -> (7,11) -> (15,23) -> (31,47) -> (63,95): sum 158 >= 100.
  EXPECT_FLOAT_EQ(y.data<const float>()[0], 63.0f);
  EXPECT_FLOAT_EQ(y.data<const float>()[1], 95.0f);
}

TEST(TraceControl, ScanAttributes) {
  auto f = [](ST xs) {
    return scan(
               [](const ST& c, const ST& x) {
                 return std::pair<ST, ST>{c + x, c};
               },
               fill(Shape(), 0.0, f32), xs, 5, true)
        .second;
  };
  Graph g = trace(f, TensorSpec({5}, f32));
  const Operation* op = nullptr;
  for (const auto& o : g.main().entry().operations())
    if (o->name() == "scan") op = o.get();
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(std::get<int64_t>(op->attributes().at("num_carry")), 1);
  EXPECT_EQ(std::get<int64_t>(op->attributes().at("length")), 5);
  EXPECT_TRUE(std::get<bool>(op->attributes().at("reverse")));
  EXPECT_EQ(op->result(1)->type().to_string(), "tensor<5xf32>");
}

TEST(TraceControl, BranchTypeMismatchNamesPath) {
  auto f = [](ST p, ST x) {
    return cond(
        p, [](const ST& v) { return std::make_tuple(v, v); },
        [](const ST& v) { return std::make_tuple(v, convert(v, f64)); }, x);
  };
  expect_error<TraceError>([&] { trace(f, TensorSpec({}, bool_), TensorSpec({3}, f32)); },
                           {"cond: branch 1 (false_fn) returns tensor<3xf64> at [1] where branch 0 (true_fn) returns "
                            "tensor<3xf32>"});
}

TEST(TraceControl, MustFail) {
  // Branch structures differ.
  expect_error<TraceError>(
      [] {
        trace(
            [](ST p, ST x) {
              return cond(
                  p, [](const ST& v) -> Tree<ST> { return v; },
                  [](const ST& v) -> Tree<ST> {
                    return Tree<ST>::tuple({v, v});
                  },
                  x);
            },
            TensorSpec({}, bool_), TensorSpec({3}, f32));
      },
      {"cond: branch 1 (false_fn) returns a different structure"});
  // A non-scalar predicate.
  expect_error<TypeError>(
      [] {
        trace(
            [](ST p, ST x) {
              return cond(
                  p, [](const ST& v) { return v; }, [](const ST& v) { return v; }, x);
            },
            TensorSpec({2}, bool_), TensorSpec({3}, f32));
      },
      {"op 'cond'", "rank-0 bool, int32 or int64", "tensor<2xi1>"});
  // A float predicate.
  expect_error<TypeError>(
      [] {
        trace(
            [](ST p, ST x) {
              return cond(
                  p, [](const ST& v) { return v; }, [](const ST& v) { return v; }, x);
            },
            TensorSpec({}, f32), TensorSpec({3}, f32));
      },
      {"op 'cond'", "predicate"});
  // A while body that changes the carry's dtype.
  expect_error<TraceError>(
      [] {
        trace(
            [](ST x) {
              return while_loop([](const ST& v) { return less(sum(v), 1.0); },
                                [](const ST& v) { return convert(v, f64); }, x);
            },
            TensorSpec({3}, f32));
      },
      {"while_loop: body_fn returns tensor<3xf64> at the root where the initial carry returns tensor<3xf32>"});
  // A while cond that is not a scalar bool.
  expect_error<TraceError>(
      [] {
        trace(
            [](ST x) { return while_loop([](const ST& v) { return less(v, 1.0); }, [](const ST& v) { return v; }, x); },
            TensorSpec({3}, f32));
      },
      {"while_loop: cond_fn must return one rank-0 bool", "tensor<3xi1>"});
  // A scan over a rank-0 xs.
  expect_error<TraceError>(
      [] {
        trace(
            [](ST x) {
              return scan([](const ST& c, const ST& v) { return std::pair<ST, ST>{c, v}; }, x, x).second;
            },
            TensorSpec({}, f32));
      },
      {"scan: xs leaf 0", "rank >= 1"});
  // A scan whose body changes the carry's shape.
  expect_error<TraceError>(
      [] {
        trace(
            [](ST x) {
              return scan([](const ST& c, const ST& v) { return std::pair<ST, ST>{sum(c), v}; }, x, x).second;
            },
            TensorSpec({3}, f32));
      },
      {"scan: body_fn's carry returns tensor<f32> at the root where the initial carry returns tensor<3xf32>"});
  // A scan without xs and without length.
  expect_error<ShapeError>(
      [] {
        trace(
            [](ST x) {
              return scan(
                         [](const ST& c, const std::vector<ST>&) {
                           return std::pair<ST, std::vector<ST>>{c, {}};
                         },
                         x, std::vector<ST>{})
                  .first;
            },
            TensorSpec({3}, f32));
      },
      {"op 'scan'", "'length' attribute is required"});
  // Float loop bounds.
  expect_error<TraceError>(
      [] {
        trace(
            [](ST x) {
              return fori_loop(
                  0, 2.5, [](const ST&, const ST& c) { return c; }, x);
            },
            TensorSpec({}, f32));
      },
      {"fori_loop: bounds must be integers"});
  // Switch index of the wrong dtype.
  expect_error<TypeError>(
      [] {
        trace([](ST i, ST x) { return switch_(i, {[](const ST& v) -> Tree<ST> { return v; }}, x).leaf(); },
              TensorSpec({}, u8), TensorSpec({3}, f32));
      },
      {"op 'cond'", "predicate"});
}

TEST(TraceControl, ForiLoopLowersToScanOrWhile) {
  Graph a = trace(
      [](ST x) {
        return fori_loop(
            0, 4, [](const ST&, const ST& c) { return c + 1.0; }, x);
      },
      TensorSpec({}, f32));
  EXPECT_NE(a.to_string().find("evoxc.scan"), std::string::npos);
  Graph b = trace(
      [](ST n, ST x) {
        return fori_loop(
            0, n, [](const ST&, const ST& c) { return c + 1.0; }, x);
      },
      TensorSpec({}, i32), TensorSpec({}, f32));
  EXPECT_NE(b.to_string().find("evoxc.while_loop"), std::string::npos);
  verify(a);
  verify(b);
}

}  // namespace
}  // namespace evoxc
