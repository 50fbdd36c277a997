// MLIR text -> host object code: parse, the pass pipeline (fusion, bufferization, loops, polynomial math, LLVM), LLVM's
// optimiser, machine code.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "backends/mlir/codegen/codegen.h"
#include "evoxc/core/error.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/PassTimingInfo.h"
#include "llvm/IR/SystemLibraries.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/SplitModule.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Async/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

namespace evoxc::mlir_codegen {
namespace {

void init_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    mlir::registerAllPasses();
    // EVOXC_LLVM_ARGS: LLVM's own command-line options, read once per process (for experiments, e.g.
    // "-force-vector-width=8"; docs/mlir.md, Compile time).
    if (std::getenv("EVOXC_LLVM_ARGS")) {
      const char* argv[] = {"evoxc"};
      llvm::cl::ParseCommandLineOptions(1, argv, "", nullptr, nullptr, "EVOXC_LLVM_ARGS");
    }
  });
}

// The work (innermost iterations) of a function ParallelConcat outlined, for ParallelFor's block sizes.
constexpr const char* kWorkAttr = "evoxc.work";
// The static trip count of an scf.for whose bounds are computed inside a parallel loop (RowRuns' blocks).
constexpr const char* kTripAttr = "evoxc.trip";

// Replaces math ops by MLIR's polynomial approximations (f16/bf16 computed in f32), so they
// vectorise with the loop around them instead of calling scalar libm.
struct PolynomialMath : mlir::PassWrapper<PolynomialMath, mlir::OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PolynomialMath)
  llvm::StringRef getArgument() const override { return "evoxc-polynomial-math"; }
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    // Not sin/cos/tan/exp/log/pow: those vectorise through the vector-math library (1 ULP over
    // the whole range; MLIR's sin/cos approximations lose accuracy from |x| ~ 100 on).
    static const llvm::StringSet<> kApproximated = {"math.tanh",  "math.erf",  "math.erfc", "math.expm1",
                                                    "math.log1p", "math.log2", "math.atan", "math.atan2",
                                                    "math.asin",  "math.acos", "math.cbrt", "math.rsqrt"};
    mlir::populateMathF32ExpansionPatterns(patterns, [](llvm::StringRef) { return true; });
    mlir::populateMathPolynomialApproximationPatterns(
        patterns, [](llvm::StringRef name) { return kApproximated.contains(name); });
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns)))) signalPassFailure();
  }
};

// Splits outer parallel loops into blocks run by MLIR's async runtime (upstream async-parallel-for)
// with the smallest block sized by work, not iterations: the block holds at least `min_work`
// innermost iterations, counting the sequential loops nested in the body at run time. (Upstream's
// pass takes a constant iteration count, so a 1024-row reduction over 1024 columns stayed on one
// thread while a 32k-element elementwise loop was split.) The caller submits the blocks one by one
// and runs the first itself (sequential dispatch): with a pool of cores - 1 workers and a caller
// that helps while it waits, recursive splitting only adds coroutines.
struct ParallelFor : mlir::PassWrapper<ParallelFor, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ParallelFor)
  ParallelFor(int workers, int64_t min_work) : workers(workers), min_work(min_work) {}
  llvm::StringRef getArgument() const override { return "evoxc-parallel-for"; }
  void runOnOperation() override {
    // Only loops run once per call split: a parallel loop inside a sequential or parallel loop
    // (a row_switch run, a scan step, a per-row body) runs as plain loops, since dispatching it on
    // every outer iteration costs more than its blocks gain (and the outlined blocks and
    // coroutines multiply the code LLVM compiles).
    llvm::SmallVector<mlir::scf::ParallelOp> inner;
    getOperation().walk([&](mlir::scf::ParallelOp p) {
      mlir::Operation* up = p->getParentOp();
      while (up && !llvm::isa<mlir::scf::ForOp, mlir::scf::WhileOp, mlir::scf::ParallelOp>(up)) up = up->getParentOp();
      if (up && p.getNumReductions() == 0) inner.push_back(p);
    });
    for (mlir::scf::ParallelOp p : inner) sequential(p);  // innermost first (post-order)
    // The loops that split are split along their first dimension only, the others becoming a nest of
    // scf.for inside: upstream's pattern, given several dimensions whose inner extents are static,
    // rounds the block size up to whole inner rows but keeps the block count of the unrounded size,
    // and its index arithmetic wraps around, so a block ran twice: harmless for elementwise loops,
    // a doubled sum for matmul's accumulation (32x32 and 64x64 matmuls came out 2x at O2).
    llvm::SmallVector<mlir::scf::ParallelOp> multi;
    getOperation().walk([&](mlir::scf::ParallelOp p) {
      if (p.getNumLoops() > 1 && p.getNumReductions() == 0) multi.push_back(p);
    });
    for (mlir::scf::ParallelOp p : multi) outer_only(p);
    // A loop whose work is known at compile time and fits one block runs as plain loops: its dispatch
    // (a task group from the runtime, taken and freed) costs more than such a loop. A merged population of
    // 8 programs (160 loops of 64 elements) took 4.9 us with the dispatches, 2.9 us without.
    llvm::SmallVector<mlir::scf::ParallelOp> small;
    getOperation().walk([&](mlir::scf::ParallelOp p) {
      if (p.getNumReductions() != 0) return;
      mlir::ImplicitLocOpBuilder b(p.getLoc(), p);
      std::optional<int64_t> work = mlir::getConstantIntValue(b.createOrFold<mlir::arith::MulIOp>(
          trip_count(b, p, p.getLowerBound()[0], p.getUpperBound()[0], p.getStep()[0]),
          body_work(b, p, p.getRegion())));
      if (work && *work <= min_work) small.push_back(p);
    });
    for (mlir::scf::ParallelOp p : small) sequential(p);

    mlir::RewritePatternSet patterns(&getContext());
    mlir::async::populateAsyncParallelForPatterns(
        patterns, /*asyncDispatch=*/false, workers, [this](mlir::ImplicitLocOpBuilder b, mlir::scf::ParallelOp loop) {
          mlir::Value work = body_work(b, loop, loop.getRegion());
          mlir::Value one = b.create<mlir::arith::ConstantIndexOp>(1);
          mlir::Value size = b.create<mlir::arith::CeilDivSIOp>(b.create<mlir::arith::ConstantIndexOp>(min_work), work);
          return b.create<mlir::arith::MaxSIOp>(size, one).getResult();
        });
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns)))) signalPassFailure();
    getOperation().walk([](mlir::func::FuncOp f) { f->removeAttr(kWorkAttr); });
    getOperation().walk([](mlir::scf::ForOp f) { f->removeAttr(kTripAttr); });
  }
  // `p` (no reductions: linalg's loops carry none) as a nest of scf.for.
  static void sequential(mlir::scf::ParallelOp p) {
    mlir::OpBuilder b(p);
    nest(b, p, p.getLoc(), {}, 0);
    p.erase();
  }
  // `p` as a one-dimensional parallel loop over its first dimension around a nest of scf.for.
  static void outer_only(mlir::scf::ParallelOp p) {
    mlir::OpBuilder b(p);
    Bounds d(p);
    mlir::scf::ParallelOp::create(
        b, p.getLoc(), d.lbs.take_front(), d.ubs.take_front(), d.steps.take_front(),
        [&](mlir::OpBuilder& ob, mlir::Location loc, mlir::ValueRange outer) { nest(ob, p, loc, outer, 1); });
    p.erase();
  }
  struct Bounds {
    explicit Bounds(mlir::scf::ParallelOp p) : lbs(p.getLowerBound()), ubs(p.getUpperBound()), steps(p.getStep()) {}
    mlir::ValueRange lbs, ubs, steps;
  };
  // Dimensions `first`.. of `p` as scf.for loops around a copy of its body (`outer`: the induction
  // values of the dimensions before `first`).
  static void nest(mlir::OpBuilder& b, mlir::scf::ParallelOp p, mlir::Location loc, mlir::ValueRange outer,
                   unsigned first) {
    Bounds d(p);
    mlir::scf::buildLoopNest(b, loc, d.lbs.drop_front(first), d.ubs.drop_front(first), d.steps.drop_front(first),
                             [&](mlir::OpBuilder& nb, mlir::Location, mlir::ValueRange ivs) {
                               llvm::SmallVector<mlir::Value> vars = p.getInductionVars();
                               mlir::IRMapping map;
                               map.map(mlir::ValueRange(vars).take_front(first), outer);
                               map.map(mlir::ValueRange(vars).drop_front(first), ivs);
                               for (mlir::Operation& op : p.getBody()->without_terminator()) nb.clone(op, map);
                             });
  }
  // Innermost iterations of one iteration of `region`: 1 plus, for each sequential loop in it, its trip
  // count times its body's work. A trip count computed inside the parallel loop counts as 1.
  static mlir::Value body_work(mlir::ImplicitLocOpBuilder& b, mlir::scf::ParallelOp loop, mlir::Region& region) {
    mlir::Value total = b.create<mlir::arith::ConstantIndexOp>(1);
    region.walk<mlir::WalkOrder::PreOrder>([&](mlir::Operation* op) {
      if (auto call = llvm::dyn_cast<mlir::func::CallOp>(op)) {
        // A function ParallelConcat outlined says its work.
        auto fn = mlir::SymbolTable::lookupNearestSymbolFrom<mlir::func::FuncOp>(call, call.getCalleeAttr());
        if (auto w = fn ? fn->getAttrOfType<mlir::IntegerAttr>(kWorkAttr) : nullptr)
          total = b.createOrFold<mlir::arith::AddIOp>(total, b.create<mlir::arith::ConstantIndexOp>(w.getInt()));
        return mlir::WalkResult::advance();
      }
      auto inner = llvm::dyn_cast<mlir::scf::ForOp>(op);
      if (!inner) return mlir::WalkResult::advance();
      auto outside = [&](mlir::Value v) { return !loop->isAncestor(v.getParentRegion()->getParentOp()); };
      mlir::Value trip = b.create<mlir::arith::ConstantIndexOp>(1);
      if (auto t = inner->getAttrOfType<mlir::IntegerAttr>(kTripAttr))
        trip = b.create<mlir::arith::ConstantIndexOp>(t.getInt());
      else if (inner.getLowerBound().getType().isIndex() && outside(inner.getLowerBound()) &&
               outside(inner.getUpperBound()) && outside(inner.getStep()))
        trip = trip_count(b, loop, inner.getLowerBound(), inner.getUpperBound(), inner.getStep());
      total = b.createOrFold<mlir::arith::AddIOp>(
          total, b.createOrFold<mlir::arith::MulIOp>(trip, body_work(b, loop, inner.getRegion())));
      return mlir::WalkResult::skip();
    });
    return total;
  }
  // max(ceil((ub - lb) / step), 1), folded to a constant when the bounds are.
  static mlir::Value trip_count(mlir::ImplicitLocOpBuilder& b, mlir::scf::ParallelOp, mlir::Value lb, mlir::Value ub,
                                mlir::Value step) {
    mlir::Value span = b.createOrFold<mlir::arith::SubIOp>(ub, lb);
    return b.createOrFold<mlir::arith::MaxSIOp>(b.createOrFold<mlir::arith::CeilDivSIOp>(span, step),
                                                b.create<mlir::arith::ConstantIndexOp>(1));
  }
  int workers;
  int64_t min_work;
};

// Runs the independent operands of a wide tensor.concat on the pool: the ops that feed only some of
// its operands move into the cases of an scf.index_switch inside an scf.forall over groups of operands,
// each group writing its slice of the result (tensor.parallel_insert_slice); ops several groups use stay
// before the loop. A merged population of programs whose results are stacked is this shape: 500 GP
// trees otherwise ran one after another on one core, each tree's loops too short (1,024 cases) to
// split. Groups are contiguous runs of operands of about equal work (the static iteration counts of
// the linalg ops they hold), at most 4 per worker so the pool balances them, and at least `min_work`
// iterations each, so a small concat stays as it is. Functions' top-level concats of static shape only.
struct ParallelConcat : mlir::PassWrapper<ParallelConcat, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ParallelConcat)
  ParallelConcat(int workers, int64_t min_work) : workers(workers), min_work(min_work) {}
  llvm::StringRef getArgument() const override { return "evoxc-parallel-concat"; }
  void runOnOperation() override {
    llvm::SmallVector<mlir::tensor::ConcatOp> concats;
    getOperation().walk([&](mlir::tensor::ConcatOp c) {
      if (llvm::isa<mlir::func::FuncOp>(c->getParentOp()) && c.getResultType().hasStaticShape() &&
          llvm::all_of(c.getInputs(),
                       [](mlir::Value v) { return llvm::cast<mlir::RankedTensorType>(v.getType()).hasStaticShape(); }))
        concats.push_back(c);
    });
    for (mlir::tensor::ConcatOp c : concats) split(c);
  }

  static constexpr int kShared = -1;

  // For each op before `c` in its block, the one owner (operand or group of operands of `c`) all its
  // uses lead to, or kShared. `owner_of_operand` maps an operand number of `c` to its owner.
  static llvm::DenseMap<mlir::Operation*, int> owners(mlir::tensor::ConcatOp c,
                                                      const std::function<int(unsigned)>& owner_of_operand) {
    llvm::DenseMap<mlir::Operation*, int> owner;
    mlir::Block* block = c->getBlock();
    for (mlir::Operation* op = c->getPrevNode(); op; op = op->getPrevNode()) {
      if (op->getNumResults() == 0 || !mlir::isMemoryEffectFree(op)) continue;
      int found = kShared;
      bool first = true;
      for (mlir::OpOperand& use : op->getUses()) {
        mlir::Operation* user = block->findAncestorOpInBlock(*use.getOwner());
        int o = kShared;
        if (user == c.getOperation()) {
          o = owner_of_operand(use.getOperandNumber());
        } else if (auto it = owner.find(user); it != owner.end()) {
          o = it->second;
        }
        if (o == kShared || (!first && o != found)) {
          found = kShared;
          break;
        }
        found = o;
        first = false;
      }
      if (!first && found != kShared) owner[op] = found;
    }
    return owner;
  }

  // Iterations of the linalg ops in `op` (1 for any other op).
  static int64_t work(mlir::Operation* op) {
    int64_t total = 0;
    op->walk([&](mlir::Operation* inner) {
      int64_t n = 1;
      if (auto l = llvm::dyn_cast<mlir::linalg::LinalgOp>(inner))
        for (int64_t r : l.getStaticLoopRanges()) n *= mlir::ShapedType::isDynamic(r) ? 1 : r;
      total += n;
    });
    return total;
  }

  // A call (at `cb`) of a new function holding `ops` and the concat of `c`'s operands [begin, end): each
  // group's code is its own function, never inlined, since LLVM's register allocation and loop analyses
  // grow faster than linearly with a function's size (the 500-tree population: 37 s to compile as one
  // function). Constants the ops use are copied in, so they stay constants there.
  mlir::Value outline(mlir::OpBuilder& cb, mlir::tensor::ConcatOp c, llvm::ArrayRef<mlir::Operation*> ops,
                      unsigned begin, unsigned end) {
    mlir::Location loc = c.getLoc();
    llvm::SmallPtrSet<mlir::Operation*, 16> inside(ops.begin(), ops.end());
    llvm::SetVector<mlir::Value> used;
    auto use = [&](mlir::Value v) {
      if (!inside.contains(v.getDefiningOp())) used.insert(v);
    };
    for (mlir::Operation* op : ops) {
      for (mlir::Value v : op->getOperands()) use(v);
      llvm::SetVector<mlir::Value> above;
      mlir::getUsedValuesDefinedAbove(op->getRegions(), above);
      for (mlir::Value v : above) use(v);
    }
    for (unsigned i = begin; i < end; ++i) use(c.getOperand(i));
    llvm::SmallVector<mlir::Value> args;
    llvm::SmallVector<mlir::Operation*> constants;
    for (mlir::Value v : used) {
      mlir::Operation* def = v.getDefiningOp();
      if (def && def->hasTrait<mlir::OpTrait::ConstantLike>())
        constants.push_back(def);
      else
        args.push_back(v);
    }
    auto module = c->getParentOfType<mlir::ModuleOp>();
    llvm::SmallVector<int64_t> shape(c.getResultType().getShape());
    shape[c.getDim()] = 0;
    for (unsigned i = begin; i < end; ++i)
      shape[c.getDim()] += llvm::cast<mlir::RankedTensorType>(c.getOperand(i).getType()).getDimSize(c.getDim());
    auto out_type = mlir::RankedTensorType::get(shape, c.getResultType().getElementType());
    mlir::OpBuilder mb = mlir::OpBuilder::atBlockEnd(module.getBody());
    auto fn = mlir::func::FuncOp::create(mb, loc, "evoxc_concat_part_" + std::to_string(outlined++),
                                         mb.getFunctionType(mlir::ValueRange(args).getTypes(), {out_type}));
    fn.setPrivate();
    fn->setAttr("passthrough", mb.getArrayAttr({mb.getStringAttr("noinline")}));
    int64_t w = 0;
    for (mlir::Operation* op : ops) w += work(op);
    fn->setAttr(kWorkAttr, mb.getI64IntegerAttr(w));
    mlir::OpBuilder fb = mlir::OpBuilder::atBlockBegin(fn.addEntryBlock());
    mlir::IRMapping map;
    for (auto [v, a] : llvm::zip(args, fn.getArguments())) map.map(v, a);
    for (mlir::Operation* k : constants) fb.clone(*k, map);
    for (mlir::Operation* op : ops) fb.clone(*op, map);
    llvm::SmallVector<mlir::Value> inputs;
    for (unsigned i = begin; i < end; ++i) inputs.push_back(map.lookupOrDefault(c.getOperand(i)));
    mlir::Value slice =
        inputs.size() == 1 ? inputs[0] : mlir::tensor::ConcatOp::create(fb, loc, c.getDim(), inputs).getResult();
    mlir::func::ReturnOp::create(fb, loc, slice);
    return mlir::func::CallOp::create(cb, loc, fn, args).getResult(0);
  }

  void split(mlir::tensor::ConcatOp c) {
    unsigned parts = c.getNumOperands();
    if (parts < 2) return;
    // Work per operand, then contiguous groups of about equal work.
    llvm::DenseMap<mlir::Operation*, int> by_part = owners(c, [](unsigned i) { return static_cast<int>(i); });
    std::vector<int64_t> part_work(parts, 0);
    int64_t total = 0;
    for (auto& [op, part] : by_part) {
      int64_t w = work(op);
      part_work[static_cast<size_t>(part)] += w;
      total += w;
    }
    int64_t groups = std::min<int64_t>({int64_t{4} * workers, total / std::max<int64_t>(min_work, 1), parts});
    if (groups < 2) return;
    std::vector<int> group_of(parts);
    std::vector<unsigned> first_part{0};  // first operand of each group, then `parts`
    int64_t done = 0;
    for (unsigned i = 0; i < parts; ++i) {
      auto g = static_cast<int64_t>(first_part.size()) - 1;
      // Close the group once it holds its share of the work (the last group takes the rest).
      if (g + 1 < groups && i > first_part.back() && done >= total * (g + 1) / groups) {
        first_part.push_back(i);
        ++g;
      }
      group_of[i] = static_cast<int>(g);
      done += part_work[i];
    }
    first_part.push_back(parts);
    groups = static_cast<int64_t>(first_part.size()) - 1;
    if (groups < 2) return;
    llvm::DenseMap<mlir::Operation*, int> owner = owners(c, [&](unsigned i) { return group_of[i]; });

    mlir::OpBuilder b(c);
    mlir::Location loc = c.getLoc();
    mlir::RankedTensorType rt = c.getResultType();
    int64_t dim = static_cast<int64_t>(c.getDim());
    llvm::SmallVector<int64_t> slice_shape(rt.getShape());
    slice_shape[static_cast<size_t>(dim)] = mlir::ShapedType::kDynamic;
    auto slice_type = mlir::RankedTensorType::get(slice_shape, rt.getElementType());
    mlir::Value init = mlir::tensor::EmptyOp::create(b, loc, rt.getShape(), rt.getElementType());
    auto forall = mlir::scf::ForallOp::create(b, loc, llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(groups)},
                                              mlir::ValueRange{init}, std::nullopt);
    b.setInsertionPoint(forall.getTerminator());
    llvm::SmallVector<int64_t> cases;
    for (int64_t g = 0; g + 1 < groups; ++g) cases.push_back(g);
    mlir::Type index = b.getIndexType();
    auto sw = mlir::scf::IndexSwitchOp::create(b, loc, mlir::TypeRange{slice_type, index, index},
                                               forall.getInductionVar(0), cases, cases.size());
    // Each case: the group's own ops (in their order), the concat of its operands, where it goes.
    std::vector<std::vector<mlir::Operation*>> ops_of(static_cast<size_t>(groups));
    for (mlir::Operation& op : *c->getBlock()) {
      if (&op == c.getOperation()) break;
      if (auto it = owner.find(&op); it != owner.end()) ops_of[static_cast<size_t>(it->second)].push_back(&op);
    }
    int64_t offset = 0;
    for (int64_t g = 0; g < groups; ++g) {
      mlir::Region& region = g + 1 < groups ? sw.getCaseRegions()[static_cast<unsigned>(g)] : sw.getDefaultRegion();
      mlir::OpBuilder cb(b.getContext());
      cb.setInsertionPointToStart(&region.emplaceBlock());
      mlir::Value slice = outline(cb, c, ops_of[static_cast<size_t>(g)], first_part[static_cast<size_t>(g)],
                                  first_part[static_cast<size_t>(g) + 1]);
      int64_t size = llvm::cast<mlir::RankedTensorType>(slice.getType()).getDimSize(dim);
      mlir::Value cast = mlir::tensor::CastOp::create(cb, loc, slice_type, slice);
      mlir::scf::YieldOp::create(cb, loc,
                                 mlir::ValueRange{cast, mlir::arith::ConstantIndexOp::create(cb, loc, offset),
                                                  mlir::arith::ConstantIndexOp::create(cb, loc, size)});
      offset += size;
    }
    llvm::SmallVector<mlir::OpFoldResult> offsets(rt.getRank(), b.getIndexAttr(0));
    llvm::SmallVector<mlir::OpFoldResult> sizes, strides(rt.getRank(), b.getIndexAttr(1));
    for (int64_t d : rt.getShape()) sizes.push_back(b.getIndexAttr(d));
    offsets[static_cast<size_t>(dim)] = sw.getResult(1);
    sizes[static_cast<size_t>(dim)] = sw.getResult(2);
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    mlir::tensor::ParallelInsertSliceOp::create(b, loc, sw.getResult(0), forall.getRegionOutArgs()[0], offsets, sizes,
                                                strides);
    c.getResult().replaceAllUsesWith(forall.getResult(0));
    c.erase();
    for (int64_t g = groups; g-- > 0;)
      for (auto it = ops_of[static_cast<size_t>(g)].rbegin(); it != ops_of[static_cast<size_t>(g)].rend(); ++it)
        (*it)->erase();
  }

  int workers;
  int64_t min_work;
  int64_t outlined = 0;
};

// Runs each group of row_switch loops (rules_control.cpp marks a group's loops with one `evoxc.row_runs`
// name; they loop over one shared partition of rows) on the pool as one scf.parallel over blocks of that
// partition, each block running the members one after another over its rows: iteration k of a member
// reads, of the group's earlier results, only the rows iteration k of those wrote, so blocks are
// independent. A merged population of 32 programs was 20 such loops, each too short to split, one after
// another on one core; one dispatch now splits them all. (Fusing the members into one loop instead, each
// iteration running all of them, was 1.4x slower on one core: each iteration walks the code of every
// member, where one member's loop keeps its few cases hot.) Runs after bufferization, where a member
// writes its buffer in place and has no results; an op between two members that only allocates or
// computes moves before the group, any other op ends it. A loop still carrying results (bufferization
// copied it instead) is left as it is. One block per worker: on the 32-program population two blocks
// ran in 6.7-6.9 us, four in 7.1-7.9, the loops one after another 7.2-10.1 (best of 10, four runs).
struct RowRuns : mlir::PassWrapper<RowRuns, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RowRuns)
  explicit RowRuns(int workers) : workers(workers) {}
  llvm::StringRef getArgument() const override { return "evoxc-row-runs"; }
  void runOnOperation() override {
    llvm::SmallVector<mlir::scf::ForOp> heads;
    getOperation().walk([&](mlir::scf::ForOp f) {
      if (f->hasAttr(kGroup)) heads.push_back(f);
    });
    llvm::SmallPtrSet<mlir::Operation*, 16> taken;
    for (mlir::scf::ForOp head : heads) {
      if (taken.contains(head)) continue;
      llvm::SmallVector<mlir::scf::ForOp> group{head};
      if (workers > 1 && head.getNumResults() == 0) group.append(members_after(head));
      for (mlir::scf::ForOp f : group) {
        f->removeAttr(kGroup);
        taken.insert(f);
      }
      std::optional<int64_t> lb = mlir::getConstantIntValue(head.getLowerBound()),
                             ub = mlir::getConstantIntValue(head.getUpperBound()),
                             step = mlir::getConstantIntValue(head.getStep());
      if (workers > 1 && head.getNumResults() == 0 && lb == 0 && step == 1 && ub && *ub > 1) blocks(group, *ub);
    }
  }
  static constexpr const char* kGroup = "evoxc.row_runs";
  // The loops of `head`'s group that follow it, the movable ops between them moved before `head`.
  static llvm::SmallVector<mlir::scf::ForOp> members_after(mlir::scf::ForOp head) {
    mlir::Attribute group = head->getAttr(kGroup);
    llvm::SmallVector<mlir::scf::ForOp> members;
    llvm::SmallVector<mlir::Operation*> between;
    for (mlir::Operation* op = head->getNextNode(); op; op = op->getNextNode()) {
      auto f = llvm::dyn_cast<mlir::scf::ForOp>(op);
      if (f && f->getAttr(kGroup) == group && f.getNumResults() == 0 && same_bounds(f, head)) {
        for (mlir::Operation* m : between) m->moveBefore(head);
        between.clear();
        members.push_back(f);
      } else if (op->getNumRegions() == 0 &&
                 (mlir::isMemoryEffectFree(op) || llvm::isa<mlir::memref::AllocOp, mlir::memref::AllocaOp>(op))) {
        between.push_back(op);
      } else {
        break;
      }
    }
    return members;
  }
  static bool same_bounds(mlir::scf::ForOp a, mlir::scf::ForOp b) {
    auto same = [](mlir::Value x, mlir::Value y) {
      std::optional<int64_t> cx = mlir::getConstantIntValue(x), cy = mlir::getConstantIntValue(y);
      return x == y || (cx && cy && *cx == *cy);
    };
    return same(a.getLowerBound(), b.getLowerBound()) && same(a.getUpperBound(), b.getUpperBound()) &&
           same(a.getStep(), b.getStep());
  }
  // The group's loops (over [0, n)) inside one scf.parallel over blocks of their range; each loop's
  // static trip count (kTripAttr) tells ParallelFor the block's work.
  void blocks(llvm::MutableArrayRef<mlir::scf::ForOp> group, int64_t n) const {
    int64_t size = (n + workers - 1) / workers;
    mlir::OpBuilder b(group.front());
    mlir::Location loc = group.front().getLoc();
    auto index = [&](int64_t v) { return mlir::arith::ConstantIndexOp::create(b, loc, v).getResult(); };
    mlir::Value zero = index(0), end = index(n), step = index(size);
    auto par =
        mlir::scf::ParallelOp::create(b, loc, mlir::ValueRange{zero}, mlir::ValueRange{end}, mlir::ValueRange{step},
                                      [](mlir::OpBuilder&, mlir::Location, mlir::ValueRange) {});
    mlir::OpBuilder in = mlir::OpBuilder::atBlockTerminator(par.getBody());
    mlir::Value lo = par.getInductionVars()[0];
    mlir::Value hi = mlir::arith::MinSIOp::create(in, loc, mlir::arith::AddIOp::create(in, loc, lo, step), end);
    for (mlir::scf::ForOp f : group) {
      f->moveBefore(par.getBody()->getTerminator());
      f.getLowerBoundMutable().assign(lo);
      f.getUpperBoundMutable().assign(hi);
      f->setAttr(kTripAttr, b.getI64IntegerAttr(size));
    }
  }
  int workers;
};

// The pipeline, as MLIR's textual pass lists around ParallelFor and PolynomialMath (not registered
// upstream). Elementwise chains fuse into one loop nest; empty-tensor elimination lets the
// ops producing results write straight into the caller's output buffers (before CSE, which would
// merge equal tensor.empty/fill inits of two results into one, and both would then write the
// first output); with threads > 1 ParallelFor splits the outer parallel loops.
// Above this many ops, bufferization copies before every in-place write instead of analysing which
// writes may happen in place. One-Shot Bufferize's analysis walks chains of ops that write into one
// tensor back to their start for every link: a concatenate of 500 results lowered as insert_slices
// took minutes (it is one tensor.concat now, and the 65k-op population analyses in 0.5 s). The
// limit guards against another such chain in a very large function.
constexpr int64_t kInPlaceAnalysisLimit = 200000;

const char* kFuse = "linalg-fuse-elementwise-ops";
std::string to_buffers(bool analyse) {
  return std::string(analyse ? "eliminate-empty-tensors," : "") +
         "func.func(canonicalize,cse),"
         "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map "
         "allow-return-allocs-from-loops" +
         (analyse ? "" : " copy-before-write") +
         "},"
         "ownership-based-buffer-deallocation,func.func(canonicalize,buffer-deallocation-simplification),"
         // (cse: two equal subviews of one in-place write become one, so canonicalize drops the copy between them)
         "bufferization-lower-deallocations,func.func(cse)";
}
// With threads > 1 ParallelFor runs between the two halves.
const char* kParallelLoops = "func.func(scf-forall-to-parallel,convert-linalg-to-parallel-loops,canonicalize,cse)";
const char* kAsyncRuntime =
    "async-to-async-runtime,async-runtime-ref-counting,async-runtime-ref-counting-opt,canonicalize,cse";
const char* kSequentialLoops = "func.func(convert-linalg-to-loops,canonicalize,cse)";
const char* kToLLVM =
    // (no arith-expand: its maximumf/minimumf expansion ignores the sign of zero)
    "convert-async-to-llvm,func.func(convert-scf-to-cf,expand-strided-metadata,lower-affine),"
    // (generic functions: buffers come from evoxc's scratch allocator, src/backends/common/scratch_memory.h; aligned
    // allocation: the buffer's pointer is the allocation's own, not rounded up through an integer, so LLVM sees it
    // fresh (mark_allocations_fresh))
    "finalize-memref-to-llvm{use-generic-functions use-aligned-alloc},"
    // math-to-llvm first: the approximations' math.fma must become the FMA intrinsic, not libm's fmaf
    "func.func(convert-math-to-llvm),convert-math-to-libm,func.func(convert-arith-to-llvm,convert-index-to-llvm),"
    "convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts";

// The threads MLIR runs a pass on several functions with (ParallelConcat's groups), shared by every compile.
llvm::ThreadPoolInterface& thread_pool() {
  static llvm::DefaultThreadPool* pool = new llvm::DefaultThreadPool(llvm::hardware_concurrency());
  return *pool;
}

struct Context {
  mlir::DialectRegistry registry;
  mlir::MLIRContext ctx;
  Context() : ctx(mlir::MLIRContext::Threading::DISABLED) {
    ctx.setThreadPool(thread_pool());
    mlir::registerAllDialects(registry);
    mlir::registerAllExtensions(registry);
    mlir::registerAllToLLVMIRTranslations(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }
};

// Parses and runs the pipeline (`to_llvm`: both halves), collecting diagnostics for the error.
// BackendError when the compile was cancelled (checked between stages).
void check_cancel(const CodegenOptions& options) {
  if (options.cancel && options.cancel->load(std::memory_order_relaxed)) throw BackendError("mlir: compile cancelled");
}

// Seconds since `t`, and resets `t`.
double lap(std::chrono::steady_clock::time_point& t) {
  auto now = std::chrono::steady_clock::now();
  double s = std::chrono::duration<double>(now - t).count();
  t = now;
  return s;
}

mlir::OwningOpRef<mlir::ModuleOp> run_pipeline(Context& c, const std::string& text, bool to_llvm,
                                               const CodegenOptions& options, StageTimes* stages = nullptr) {
  auto clock = std::chrono::steady_clock::now();
  init_once();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&c.ctx, [&](mlir::Diagnostic& d) {
    llvm::raw_string_ostream os(diagnostics);
    os << d.getLocation() << ": " << d << "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(text, &c.ctx);
  if (!module) throw BackendError("mlir: the lowered program does not parse:\n" + diagnostics);
  if (stages) stages->emplace_back("parse", lap(clock));
  check_cancel(options);
  // The lowering marks reduction combiners `reassoc` (the one numeric liberty); below O2 the
  // marks are dropped so float reductions keep their sequential order.
  if (!options.reassociate_reductions) {
    auto none = mlir::arith::FastMathFlagsAttr::get(&c.ctx, mlir::arith::FastMathFlags::none);
    module->walk([&](mlir::Operation* op) {
      if (op->getAttrOfType<mlir::arith::FastMathFlagsAttr>("fastmath")) op->setAttr("fastmath", none);
    });
  }
  int64_t ops = 0;
  module->walk([&](mlir::Operation*) { ++ops; });
  mlir::PassManager pm(&c.ctx);
  if (std::getenv("EVOXC_MLIR_TIMING")) pm.enableTiming();
  auto add = [&](const std::string& pipeline) {
    if (mlir::failed(mlir::parsePassPipeline(pipeline, pm)))
      throw InternalError("mlir: the pass pipeline does not parse: " + diagnostics);
  };
  add(kFuse);
  if (options.threads > 1) pm.addPass(std::make_unique<ParallelConcat>(options.threads, options.min_work));
  add(to_buffers(ops <= kInPlaceAnalysisLimit));
  if (options.threads > 1) {
    add(kParallelLoops);
    pm.addPass(std::make_unique<RowRuns>(options.threads));
    pm.addPass(std::make_unique<ParallelFor>(options.threads, options.min_work));
    add(kAsyncRuntime);
  } else {
    add(kSequentialLoops);
    pm.addPass(std::make_unique<RowRuns>(1));
  }
  if (to_llvm) {
    pm.addNestedPass<mlir::func::FuncOp>(std::make_unique<PolynomialMath>());  // per function, on MLIR's threads
    add(kToLLVM);
  }
  if (mlir::failed(pm.run(*module))) throw BackendError("mlir: the pass pipeline failed:\n" + diagnostics);
  if (stages) stages->emplace_back("mlir passes", lap(clock));
  check_cancel(options);
  return module;
}

// `void evoxc_entry(void** args)` calling `_mlir_ciface_main(args[0], args[1], ...)`: one
// entry whatever the arity, so the loader needs no per-signature thunks.
void add_entry(llvm::Module& m) {
  llvm::Function* f = m.getFunction("_mlir_ciface_main");
  if (!f) throw InternalError("mlir: the lowered module has no _mlir_ciface_main");
  llvm::LLVMContext& ctx = m.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(ctx);
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);
  llvm::Function* entry = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, "evoxc_entry", m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  std::vector<llvm::Value*> args;
  for (unsigned i = 0; i < f->arg_size(); ++i) {
    llvm::Value* slot = b.CreateConstGEP1_64(ptr, entry->getArg(0), i);
    args.push_back(b.CreateLoad(ptr, slot));
  }
  b.CreateCall(f, args);
  b.CreateRetVoid();
}

// The calls a coroutine (an async task running a block of a parallel loop) makes to the module's own
// functions stay calls: inlined there, a block's loops read the buffer pointers back from the
// coroutine frame on every iteration (the frame might alias the stores) and stay scalar, 5x slower.
void keep_blocks_out_of_coroutines(llvm::Module& m) {
  for (llvm::Function& f : m) {
    if (!f.isPresplitCoroutine()) continue;
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb)
        if (auto* call = llvm::dyn_cast<llvm::CallBase>(&i))
          if (llvm::Function* callee = call->getCalledFunction(); callee && !callee->isDeclaration())
            call->setIsNoInline();
  }
}

// The buffers compiled code allocates (MLIR's generic allocation functions, bound to evoxc's scratch allocator)
// are fresh, as malloc's: no other pointer the code holds reaches them. Said to LLVM (a noalias result), a loop
// writing a new buffer needs no run-time overlap checks against the buffers it reads, nor the scalar copy of the
// loop that runs when they overlap: the merged 500-tree population had both on every loop.
void mark_allocations_fresh(llvm::Module& m) {
  for (const char* name : {"_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_aligned_alloc"})
    if (llvm::Function* f = m.getFunction(name)) f->addRetAttr(llvm::Attribute::NoAlias);
}

// The vector-math functions LLVM's loop vectoriser may call for the scalar math in a loop: glibc's
// vector ABI names (libmvec's _ZGV<isa>N<lanes><args>_<fn>), which the loader binds to SLEEF's GNU-ABI
// build, for each vector width the CPU has (SSE 128, AVX2 256, AVX-512 512 bits). float64 and float32
// exp/pow are SLEEF's 1-ULP functions; float32 sin, cos, tan and log its 3.5-ULP
// ones (the interpreter's float32 tanh is the same choice): measured here at 0.30 vs 0.64 ns per
// element for sin, 0.32 vs 0.76 for cos, 0.28 vs 0.60 for log, and sin/cos/log are most of what a
// population of evolved programs computes. (LLVM's own libmvec table has no 512-bit entries.)
// (Built once per set of vector widths: VecDesc holds StringRefs, so the names live as long as the process.)
const std::vector<llvm::VecDesc>& vector_math(const llvm::TargetMachine& tm) {
  static std::mutex mu;
  static std::map<std::pair<bool, bool>, std::vector<llvm::VecDesc>> tables;
  static std::deque<std::string> names;
  llvm::StringRef features = tm.getTargetFeatureString();
  bool avx2 = features.contains("+avx2"), avx512 = features.contains("+avx512f");
  std::lock_guard<std::mutex> lock(mu);
  auto [it, fresh] = tables.try_emplace({avx2, avx512});
  std::vector<llvm::VecDesc>& table = it->second;
  if (!fresh) return table;
  auto keep = [](std::string n) -> llvm::StringRef { return names.emplace_back(std::move(n)); };
  struct Width {
    char isa;
    int f32_lanes;
    bool present;
  };
  const Width widths[] = {{'b', 4, true}, {'d', 8, avx2}, {'e', 16, avx512}};
  struct Fn {
    const char* name;
    const char* args;
    bool fast_f32;  // the 3.5-ULP variant for float32
  };
  // (Not acosh: SLEEF's overflows from x ~ 1e19 in float32, where the interpreter's kernel switches to
  // log(x) + ln 2. asin/acos/atan/tanh/... are MLIR's polynomial approximations, before LLVM.)
  static const Fn fns[] = {{"sin", "v", true}, {"cos", "v", true},  {"tan", "v", true},
                           {"log", "v", true}, {"exp", "v", false}, {"pow", "vv", false}};
  for (const Fn& fn : fns) {
    for (const Width& w : widths) {
      if (!w.present) continue;
      for (bool f32 : {true, false}) {
        int lanes = f32 ? w.f32_lanes : w.f32_lanes / 2;
        std::string width = std::to_string(lanes);
        std::string vector = std::string("_ZGV") + w.isa + "N" + width + fn.args + "_" + fn.name + (f32 ? "f" : "") +
                             (f32 && fn.fast_f32 ? "_u35" : "");
        llvm::StringRef vec = keep(vector);
        llvm::StringRef abi = keep("_ZGV_LLVM_N" + width + fn.args);
        for (std::string scalar :
             {std::string(fn.name) + (f32 ? "f" : ""), "llvm." + std::string(fn.name) + (f32 ? ".f32" : ".f64")})
          table.emplace_back(keep(scalar), vec, llvm::ElementCount::getFixed(lanes), false, abi, std::nullopt);
      }
    }
  }
  return table;
}

// LLVM's pipeline at the opt level, with vector_math() as the vector library.
void optimise(llvm::Module& m, llvm::TargetMachine& tm, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // No loop unrolling (the vectoriser still interleaves): unrolled vector loops with their math calls
  // were most of the machine code, and code generation most of a compile. Measured on the merged
  // 32-program population: compile 0.57 -> 0.31 s at O2, evaluation 7.2 -> 7.4 us; the 500-tree GP
  // population 29 -> 24 s, 0.73 -> 0.76 ms; elementwise and reduction kernels within noise.
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  // With EVOXC_MLIR_TIMING set, LLVM's per-pass times go to stderr as MLIR's do.
  llvm::PassInstrumentationCallbacks pic;
  std::optional<llvm::TimePassesHandler> timing;
  if (std::getenv("EVOXC_MLIR_TIMING")) {
    timing.emplace(true);
    timing->registerCallbacks(pic);
  }
  llvm::PassBuilder pb(&tm, tuning, std::nullopt, &pic);
  llvm::TargetLibraryInfoImpl tlii(m.getTargetTriple(), llvm::VectorLibrary::NoLibrary);
  tlii.addVectorizableFunctions(vector_math(tm));
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  static const llvm::OptimizationLevel kLevels[] = {llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
                                                    llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  llvm::ModulePassManager mpm = opt_level == 0 ? pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
                                               : pb.buildPerModuleDefaultPipeline(kLevels[opt_level]);
  mpm.run(m, mam);
  if (timing) timing->print();
}

// A vectorisation width hint on every innermost loop (llvm.loop.vectorize.width = the target's preferred vector
// register bits / the widest element the loop loads or stores): LoopVectorize then builds and costs one plan per
// loop instead of one per candidate width, which was 67% of LLVM's pipeline on the merged 500-tree population.
// Measured (bench_staging --programs 500 --compile 2, two runs each): llvm opt 3.5 -> 1.76 s, the compile 10.0 ->
// 7.9 s, the evaluation unchanged (2.47 / 2.48 vs 2.50 / 2.44 ms); bench/mlir_backend.py's kernels within noise.
void hint_vector_widths(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::LLVMContext& ctx = m.getContext();
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    const unsigned bits =
        static_cast<unsigned>(tm.getTargetTransformInfo(f)
                                  .getRegisterBitWidth(llvm::TargetTransformInfo::RGK_FixedWidthVector)
                                  .getFixedValue());
    if (bits == 0) continue;
    llvm::DominatorTree dt(f);
    llvm::LoopInfo li(dt);
    for (llvm::Loop* l : li.getLoopsInPreorder()) {
      if (!l->isInnermost()) continue;
      unsigned widest = 0;
      for (llvm::BasicBlock* bb : l->blocks())
        for (llvm::Instruction& i : *bb) {
          llvm::Type* t = nullptr;
          if (auto* ld = llvm::dyn_cast<llvm::LoadInst>(&i)) t = ld->getType();
          if (auto* st = llvm::dyn_cast<llvm::StoreInst>(&i)) t = st->getValueOperand()->getType();
          if (t && (t->isFloatingPointTy() || t->isIntegerTy())) widest = std::max(widest, t->getScalarSizeInBits());
        }
      if (widest == 0 || bits / widest < 2) continue;
      llvm::SmallVector<llvm::Metadata*, 4> ops{nullptr};
      if (llvm::MDNode* old = l->getLoopID())
        for (unsigned k = 1; k < old->getNumOperands(); ++k) ops.push_back(old->getOperand(k));
      ops.push_back(llvm::MDNode::get(
          ctx, {llvm::MDString::get(ctx, "llvm.loop.vectorize.width"),
                llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), bits / widest))}));
      llvm::MDNode* id = llvm::MDNode::getDistinct(ctx, ops);
      id->replaceOperandWith(0, id);
      l->setLoopID(id);
    }
  }
}

}  // namespace

HostTarget host_target() {
  init_once();
  HostTarget t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  std::vector<std::string> feats;
  for (const auto& f : llvm::sys::getHostCPUFeatures()) feats.push_back((f.second ? "+" : "-") + f.first().str());
  std::sort(feats.begin(), feats.end());
  for (size_t i = 0; i < feats.size(); ++i) t.features += (i ? "," : "") + feats[i];
  return t;
}

std::string pipeline_text(const CodegenOptions& options) {
  std::string concat = options.threads > 1 ? ",evoxc-parallel-concat{workers=" + std::to_string(options.threads) +
                                                 " min-work=" + std::to_string(options.min_work) + "}"
                                           : "";
  std::string loops = options.threads > 1
                          ? std::string(kParallelLoops) + ",evoxc-row-runs{workers=" + std::to_string(options.threads) +
                                "},evoxc-parallel-for{workers=" + std::to_string(options.threads) +
                                " min-work=" + std::to_string(options.min_work) + "}," + kAsyncRuntime
                          : std::string(kSequentialLoops) + ",evoxc-row-runs";
  return "builtin.module(" + std::string(kFuse) + concat + "," + to_buffers(true) + "," + loops +
         ",func.func(evoxc-polynomial-math)," + kToLLVM + "), then LLVM -O" + std::to_string(options.opt_level) +
         (options.reassociate_reductions ? " (reductions reassociate)" : "");
}

std::string lower_to_loops(const std::string& mlir_text, const CodegenOptions& options) {
  Context c;
  auto module = run_pipeline(c, mlir_text, false, options);
  std::string out;
  llvm::raw_string_ostream os(out);
  module->print(os);
  return out;
}

namespace {

std::unique_ptr<llvm::TargetMachine> target_machine(const HostTarget& host, int opt_level) {
  std::string error;
  llvm::Triple triple(host.triple);
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) throw BackendError("mlir: no LLVM target for " + host.triple + ": " + error);
  llvm::TargetOptions target_options;
  static const llvm::CodeGenOptLevel kLevels[] = {llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less,
                                                  llvm::CodeGenOptLevel::Default, llvm::CodeGenOptLevel::Aggressive};
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, host.cpu, host.features, target_options, llvm::Reloc::PIC_, std::nullopt, kLevels[opt_level]));
  if (!tm) throw BackendError("mlir: cannot make a target machine for " + host.cpu);
  return tm;
}

// A hinted loop that cannot be vectorised is a missed-transformation warning, not the user's concern: warnings
// and remarks are dropped; an error is kept in `sink` and raised once LLVM's pipeline returns.
void collect_errors(llvm::LLVMContext& ctx, std::string* sink) {
  ctx.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo* d, void* out) {
        if (d->getSeverity() != llvm::DS_Error) return;
        llvm::raw_string_ostream os(*static_cast<std::string*>(out));
        llvm::DiagnosticPrinterRawOStream printer(os);
        d->print(printer);
        os << "\n";
      },
      sink);
}

std::string emit_object(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager emit;
  if (tm.addPassesToEmitFile(emit, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw BackendError("mlir: the target cannot emit object code");
  emit.run(m);
  return std::string(buffer.begin(), buffer.end());
}

// A module this large (instructions) is split into parts optimised and emitted on threads of their own: the
// merged 500-tree GP population has ~25,000; a single kernel a few hundred.
constexpr size_t kSplitInstructions = 8000;

size_t instruction_count(const llvm::Module& m) {
  size_t n = 0;
  for (const llvm::Function& f : m) n += f.getInstructionCount();
  return n;
}

// One part of a split module: its bitcode parsed into a context of its own (a context is never shared between
// threads), optimised and emitted.
struct Part {
  llvm::SmallVector<char, 0> bitcode;
  std::string object, errors;
  double opt_s = 0, codegen_s = 0;
  std::exception_ptr failure;
};

void compile_part(Part& p, const HostTarget& host, int opt_level) {
  try {
    llvm::LLVMContext ctx;
    collect_errors(ctx, &p.errors);
    auto m =
        llvm::parseBitcodeFile(llvm::MemoryBufferRef(llvm::StringRef(p.bitcode.data(), p.bitcode.size()), "part"), ctx);
    if (!m) throw InternalError("mlir: a part of the split module does not read back: " + toString(m.takeError()));
    std::unique_ptr<llvm::TargetMachine> tm = target_machine(host, opt_level);
    auto clock = std::chrono::steady_clock::now();
    optimise(**m, *tm, opt_level);
    p.opt_s = lap(clock);
    if (p.errors.empty()) p.object = emit_object(**m, *tm);
    p.codegen_s = lap(clock);
  } catch (...) {
    p.failure = std::current_exception();
  }
}

// The parts' objects as one ar archive (LoadedObject::load links every member).
std::string archive(const std::vector<Part>& parts) {
  std::vector<llvm::NewArchiveMember> members;
  for (size_t i = 0; i < parts.size(); ++i)
    members.emplace_back(llvm::MemoryBufferRef(parts[i].object, "part" + std::to_string(i) + ".o"));
  auto buffer = llvm::writeArchiveToBuffer(members, llvm::SymtabWritingMode::NoSymtab, llvm::object::Archive::K_GNU,
                                           /*Deterministic=*/true, /*Thin=*/false);
  if (!buffer) throw InternalError("mlir: cannot write the parts' archive: " + toString(buffer.takeError()));
  return std::string((*buffer)->getBuffer());
}

}  // namespace

std::string compile_to_object(const std::string& mlir_text, const CodegenOptions& options, StageTimes* stages) {
  auto t_ctx = std::chrono::steady_clock::now();
  Context c;
  if (stages) stages->emplace_back("context", lap(t_ctx));
  auto module = run_pipeline(c, mlir_text, true, options, stages);
  auto clock = std::chrono::steady_clock::now();
  llvm::LLVMContext llvm_ctx;
  std::unique_ptr<llvm::Module> m = mlir::translateModuleToLLVMIR(*module, llvm_ctx, "evoxc");
  if (!m) throw BackendError("mlir: translation to LLVM IR failed");
  add_entry(*m);
  keep_blocks_out_of_coroutines(*m);
  mark_allocations_fresh(*m);

  HostTarget host = host_target();
  std::unique_ptr<llvm::TargetMachine> tm = target_machine(host, options.opt_level);
  m->setDataLayout(tm->createDataLayout());
  m->setTargetTriple(llvm::Triple(host.triple));

  if (stages) stages->emplace_back("translate", lap(clock));
  check_cancel(options);
  std::string llvm_errors;
  collect_errors(llvm_ctx, &llvm_errors);
  if (options.opt_level >= 2) hint_vector_widths(*m, *tm);

  size_t functions = 0;
  for (const llvm::Function& f : *m) functions += f.isDeclaration() ? 0 : 1;
  const auto num_parts = static_cast<unsigned>(std::min<size_t>(static_cast<size_t>(options.threads), functions));
  if (num_parts > 1 && instruction_count(*m) >= kSplitInstructions) {
    // LLVM's SplitModule deals the functions round-robin in module order (ParallelConcat's groups are about equal;
    // its default, by name hash, put 24k of the population's 38k instructions in one of two parts); each part is
    // optimised and emitted on a thread of its own. Stage "split" is the split and the parts' bitcode, "llvm opt"
    // the slowest part's pipeline, "codegen" the rest of the parallel section. (Measured, bench_staging --compile 2,
    // three runs each: llvm opt + codegen 2.3-2.5 s -> 1.1-1.3 s on 2 cores, the compile 3.6-3.9 -> 2.6-2.7 s.)
    std::vector<Part> parts;
    llvm::SplitModule(
        *m, num_parts,
        [&](std::unique_ptr<llvm::Module> part) {
          llvm::raw_svector_ostream os(parts.emplace_back().bitcode);
          llvm::WriteBitcodeToFile(*part, os);
        },
        /*PreserveLocals=*/false, /*RoundRobin=*/true);
    if (stages) stages->emplace_back("split", lap(clock));
    check_cancel(options);
    std::vector<std::thread> workers;
    for (size_t i = 1; i < parts.size(); ++i)
      workers.emplace_back([&, i] { compile_part(parts[i], host, options.opt_level); });
    compile_part(parts[0], host, options.opt_level);
    for (std::thread& w : workers) w.join();
    double slowest_opt = 0;
    for (const Part& p : parts) {
      if (p.failure) std::rethrow_exception(p.failure);
      if (!p.errors.empty()) throw BackendError("mlir: LLVM's pipeline failed:\n" + p.errors);
      slowest_opt = std::max(slowest_opt, p.opt_s);
    }
    double section = lap(clock);
    if (stages) {
      stages->emplace_back("llvm opt", slowest_opt);
      stages->emplace_back("codegen", section - slowest_opt);
    }
    return archive(parts);
  }

  optimise(*m, *tm, options.opt_level);
  if (!llvm_errors.empty()) throw BackendError("mlir: LLVM's pipeline failed:\n" + llvm_errors);
  if (stages) stages->emplace_back("llvm opt", lap(clock));
  check_cancel(options);
  std::string object = emit_object(*m, *tm);
  if (!llvm_errors.empty()) throw BackendError("mlir: LLVM's code generation failed:\n" + llvm_errors);
  if (stages) stages->emplace_back("codegen", lap(clock));
  return object;
}

}  // namespace evoxc::mlir_codegen
