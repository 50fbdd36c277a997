// Tests for trace_dynamic, the type-erased trace entry: statics at any position, input order, trees and errors.
#include <gtest/gtest.h>

#include <string>

#include "evoxc/evoxc.h"

namespace evoxc {
namespace {

using ST = SymbolicTensor;

TraceArg spec(Shape s, DType t = f32) { return arg_leaf(TensorSpec(std::move(s), t)); }

// A tracer-side view of a leaf.
const ST& tensor(const TracedArg& a) { return std::get<ST>(a.leaf()); }

TEST(TraceDynamic, StaticsAnywhereInTheArgumentTrees) {
  // args: (x, {"lr": 0.5, "steps": 3, "w": spec}, [spec, "tanh", None])
  std::vector<TraceArg> args{
      spec({4}),
      TraceArg::dict({{"lr", arg_leaf(0.5)}, {"steps", arg_leaf(int64_t{3})}, {"w", spec({4})}}),
      TraceArg::list({spec({4}, i32), arg_leaf(std::string("tanh")), TraceArg::none()}),
  };
  std::vector<std::string> seen;
  TraceFunction fn = [&](const std::vector<TracedArg>& a) -> Tree<ST> {
    EXPECT_EQ(a.size(), 3u);
    double lr = std::get<double>(a[1]["lr"].leaf());
    int64_t steps = std::get<int64_t>(a[1]["steps"].leaf());
    seen.push_back(std::get<std::string>(a[2][1].leaf()));
    EXPECT_TRUE(a[2][2].is_none());
    ST y = tensor(a[0]);
    for (int64_t i = 0; i < steps; ++i) y = y - lr * tensor(a[1]["w"]);
    return Tree<ST>::tuple({tanh(y), Tree<ST>::dict({{"n", astype(tensor(a[2][0]), f32)}})});
  };
  Graph g = trace_dynamic(fn, args);
  EXPECT_EQ(seen, (std::vector<std::string>{"tanh"}));
  const AttrMap& st = g.static_values();
  EXPECT_EQ(st.size(), 3u);
  EXPECT_EQ(std::get<double>(st.at("[1]['lr']")), 0.5);
  EXPECT_EQ(std::get<int64_t>(st.at("[1]['steps']")), 3);
  EXPECT_EQ(std::get<std::string>(st.at("[2][1]")), "tanh");
  // Spec leaves are the inputs, in flattening order; statics are None in the input tree.
  EXPECT_EQ(g.input_tree().structure_string(), "(*, {'lr': None, 'steps': None, 'w': *}, [*, None, None])");
  EXPECT_EQ(g.input_paths(), (std::vector<std::string>{"[0]", "[1]['w']", "[2][0]"}));
  ASSERT_EQ(g.num_inputs(), 3u);
  EXPECT_EQ(g.input_specs()[2].dtype, i32);
  EXPECT_EQ(g.output_tree().structure_string(), "(*, {'n': *})");
  EXPECT_EQ(g.summary(), "<Graph 3 tensor inputs, 3 static values>");
  verify(g);
}

TEST(TraceDynamic, TopLevelStaticsAndEveryStaticKind) {
  std::vector<TraceArg> args{spec({2}),     arg_leaf(true), arg_leaf(int64_t{-7}),
                             arg_leaf(2.5), arg_leaf(i16),  arg_leaf(std::string("s"))};
  TraceFunction fn = [](const std::vector<TracedArg>& a) -> Tree<ST> {
    EXPECT_TRUE(std::get<bool>(a[1].leaf()));
    EXPECT_EQ(std::get<DType>(a[4].leaf()), i16);
    return astype(tensor(a[0]) * std::get<double>(a[3].leaf()), std::get<DType>(a[4].leaf()));
  };
  Graph g = trace_dynamic(fn, args);
  EXPECT_EQ(std::get<bool>(g.static_values().at("[1]")), true);
  EXPECT_EQ(std::get<int64_t>(g.static_values().at("[2]")), -7);
  EXPECT_EQ(std::get<double>(g.static_values().at("[3]")), 2.5);
  EXPECT_EQ(std::get<DType>(g.static_values().at("[4]")), i16);
  EXPECT_EQ(std::get<std::string>(g.static_values().at("[5]")), "s");
  EXPECT_EQ(g.input_tree().structure_string(), "(*, None, None, None, None, None)");
  EXPECT_EQ(g.output_specs()[0].dtype, i16);
}

TEST(TraceDynamic, MatchesTheCompileTimeEntry) {
  auto body = [](ST x, ST w, double s) { return sum(tanh(dot(x, w)) * s, {1}); };
  Graph typed = trace(body, TensorSpec({4, 8}, f32), TensorSpec({8, 4}, f32), 0.5);
  TraceFunction fn = [&](const std::vector<TracedArg>& a) -> Tree<ST> {
    return body(tensor(a[0]), tensor(a[1]), std::get<double>(a[2].leaf()));
  };
  Graph dynamic = trace_dynamic(fn, {spec({4, 8}), spec({8, 4}), arg_leaf(0.5)});
  std::string why;
  EXPECT_TRUE(graphs_equal(typed, dynamic, /*compare_locations=*/false, &why)) << why;
}

TEST(TraceDynamic, Errors) {
  EXPECT_THROW(trace_dynamic(TraceFunction(), {spec({2})}), TraceError);
  ST kept;
  trace_dynamic(
      [&](const std::vector<TracedArg>& a) -> Tree<ST> {
        kept = tensor(a[0]);
        return kept;
      },
      {spec({2})});
  try {
    trace_dynamic([&](const std::vector<TracedArg>&) -> Tree<ST> { return kept; }, {spec({2})});
    FAIL() << "expected TraceError";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("another trace"), std::string::npos) << e.what();
  }
  EXPECT_THROW(trace_dynamic([](const std::vector<TracedArg>&) -> Tree<ST> { return ST(); }, {}), TraceError);
  EXPECT_THROW(trace_dynamic([](const std::vector<TracedArg>&) -> Tree<ST> { return Tree<ST>(); },
                             {arg_leaf(TensorSpec({-1}, f32))}),
               ShapeError);
  // A function that throws leaves no trace active.
  EXPECT_THROW(trace_dynamic([](const std::vector<TracedArg>&) -> Tree<ST> { throw TraceError("x"); }, {}), TraceError);
  EXPECT_EQ(TraceContext::current_or_null(), nullptr);
}

}  // namespace
}  // namespace evoxc
