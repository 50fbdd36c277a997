// The module arena: operations are carved from it, destroyed with the module, never mixed
// across modules; detached ops of no module live on the heap.
#include "evoxc/ir/arena.h"

#include <gtest/gtest.h>

#include "evoxc/core/error.h"
#include "evoxc/ir/builder.h"
#include "evoxc/ops/op_def.h"
#include "ir/graph_util.h"

namespace evoxc {
namespace {

using testing::tt;

TEST(Arena, AlignsAndGrowsInChunks) {
  Arena a;
  EXPECT_EQ(a.bytes_reserved(), 0u);
  for (int i = 0; i < 1000; ++i) {
    void* p = a.allocate(24, 16);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u);
  }
  EXPECT_GE(a.bytes_allocated(), 24u * 1000);
  EXPECT_GE(a.bytes_reserved(), a.bytes_allocated());
  // One allocation larger than any chunk still fits.
  void* big = a.allocate(1 << 20, 64);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big) % 64, 0u);
  EXPECT_GE(a.bytes_reserved(), size_t{1} << 20);
}

TEST(Arena, OperationsOfAModuleComeFromItsArena) {
  Module m;
  Function& f = m.add_function("main");
  Value* x = f.entry().add_argument(tt({4}));
  Builder b(f.entry());
  EXPECT_EQ(f.entry().arena(), &m.arena());
  size_t before = m.arena().bytes_allocated();
  Operation* op = b.create("add", {x, x});
  EXPECT_GT(m.arena().bytes_allocated(), before);
  EXPECT_EQ(op->result()->type(), tt({4}));
  // A detached control-flow op made by the builder carries the arena into its regions.
  OpPtr d = b.create_detached(get_op_info("cond"), {x}, {}, 2);
  EXPECT_EQ(d->region(0).block().arena(), &m.arena());
}

TEST(Arena, AnOpOfAnotherModuleIsRefused) {
  Module a, b;
  Function& fa = a.add_function("main");
  Function& fb = b.add_function("main");
  Value* x = fa.entry().add_argument(tt({2}));
  OpPtr foreign = Operation::create(get_op_info("neg"), std::vector<Value*>{x}, std::vector<TensorType>{tt({2})}, {},
                                    {}, 0, &a.arena());
  EXPECT_THROW(fb.entry().push_back(std::move(foreign)), InternalError);
  // A heap op (no arena) may go into any block.
  OpPtr heap = Operation::create(get_op_info("neg"), std::vector<Value*>{x}, std::vector<TensorType>{tt({2})}, {}, {});
  EXPECT_NO_THROW(fb.entry().push_back(std::move(heap)));
}

TEST(Arena, ACloneLivesInTheDestinationModule) {
  auto m = std::make_shared<Module>();
  Function& f = m->add_function("main");
  Value* x = f.entry().add_argument(tt({3}));
  Builder b(f.entry());
  Value* y = b.create1("sin", {x});
  f.result_types().push_back(y->type());
  b.create_return({y});
  std::shared_ptr<Module> c = clone_module(*m);
  m.reset();  // the clone owns every op it has
  const Block& e = c->main().entry();
  ASSERT_EQ(e.num_operations(), 2u);
  EXPECT_EQ(e.operations()[0]->name(), "sin");
  EXPECT_EQ(e.operations()[0]->operand(0), e.argument(0));
  EXPECT_GT(c->arena().bytes_allocated(), 0u);
}

}  // namespace
}  // namespace evoxc
