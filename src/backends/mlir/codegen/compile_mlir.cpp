// MLIR text -> host object code: parse, the pass pipeline (fusion, bufferization, loops, polynomial math, LLVM), LLVM's
// optimiser, machine code.
#include <algorithm>
#include <deque>
#include <mutex>
#include <string>

#include "backends/mlir/codegen/codegen.h"
#include "evoxc/core/error.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/SystemLibraries.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Async/Transforms.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace evoxc::mlir_codegen {
namespace {

void init_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    mlir::registerAllPasses();
  });
}

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

    mlir::RewritePatternSet patterns(&getContext());
    mlir::async::populateAsyncParallelForPatterns(
        patterns, /*asyncDispatch=*/false, workers, [this](mlir::ImplicitLocOpBuilder b, mlir::scf::ParallelOp loop) {
          mlir::Value work = body_work(b, loop, loop.getRegion());
          mlir::Value one = b.create<mlir::arith::ConstantIndexOp>(1);
          mlir::Value size = b.create<mlir::arith::CeilDivSIOp>(b.create<mlir::arith::ConstantIndexOp>(min_work), work);
          return b.create<mlir::arith::MaxSIOp>(size, one).getResult();
        });
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns)))) signalPassFailure();
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
      auto inner = llvm::dyn_cast<mlir::scf::ForOp>(op);
      if (!inner) return mlir::WalkResult::advance();
      auto outside = [&](mlir::Value v) { return !loop->isAncestor(v.getParentRegion()->getParentOp()); };
      mlir::Value trip = b.create<mlir::arith::ConstantIndexOp>(1);
      if (inner.getLowerBound().getType().isIndex() && outside(inner.getLowerBound()) &&
          outside(inner.getUpperBound()) && outside(inner.getStep())) {
        mlir::Value span = b.create<mlir::arith::SubIOp>(inner.getUpperBound(), inner.getLowerBound());
        trip = b.create<mlir::arith::MaxSIOp>(b.create<mlir::arith::CeilDivSIOp>(span, inner.getStep()), trip);
      }
      total = b.create<mlir::arith::AddIOp>(total,
                                            b.create<mlir::arith::MulIOp>(trip, body_work(b, loop, inner.getRegion())));
      return mlir::WalkResult::skip();
    });
    return total;
  }
  int workers;
  int64_t min_work;
};

// The pipeline, as MLIR's textual pass lists around ParallelFor and PolynomialMath (not registered
// upstream). Elementwise chains fuse into one loop nest; empty-tensor elimination lets the
// ops producing results write straight into the caller's output buffers (before CSE, which would
// merge equal tensor.empty/fill inits of two results into one, and both would then write the
// first output); with threads > 1 ParallelFor splits the outer parallel loops.
// Above this many ops, bufferization copies before every in-place write instead of analysing which
// writes may happen in place: One-Shot Bufferize's analysis (and empty-tensor elimination, which
// runs it) grows faster than quadratically with the ops of a function (a merged 500-program
// population of ~60k ops did not finish in minutes; copy-before-write takes 0.3 s), and the copies
// it adds are cheap where programs are that many and small.
constexpr int64_t kInPlaceAnalysisLimit = 20000;

std::string to_buffers(bool analyse) {
  return std::string("linalg-fuse-elementwise-ops,") + (analyse ? "eliminate-empty-tensors," : "") +
         "canonicalize,cse,"
         "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map "
         "allow-return-allocs-from-loops" +
         (analyse ? "" : " copy-before-write") +
         "},"
         "ownership-based-buffer-deallocation,canonicalize,buffer-deallocation-simplification,"
         "bufferization-lower-deallocations";
}
// With threads > 1 ParallelFor runs between the two halves.
const char* kParallelLoops = "convert-linalg-to-parallel-loops,canonicalize,cse";
const char* kAsyncRuntime =
    "async-to-async-runtime,async-runtime-ref-counting,async-runtime-ref-counting-opt,canonicalize,cse";
const char* kSequentialLoops = "convert-linalg-to-loops,canonicalize,cse";
const char* kToLLVM =
    // (no arith-expand: its maximumf/minimumf expansion ignores the sign of zero)
    "convert-async-to-llvm,convert-scf-to-cf,expand-strided-metadata,lower-affine,"
    "finalize-memref-to-llvm,"
    // math-to-llvm first: the approximations' math.fma must become the FMA intrinsic, not libm's fmaf
    "convert-math-to-llvm,convert-math-to-libm,convert-arith-to-llvm,convert-index-to-llvm,"
    "convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts";

struct Context {
  mlir::DialectRegistry registry;
  mlir::MLIRContext ctx;
  Context() : ctx(mlir::MLIRContext::Threading::DISABLED) {
    mlir::registerAllDialects(registry);
    mlir::registerAllExtensions(registry);
    mlir::registerAllToLLVMIRTranslations(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }
};

// Parses and runs the pipeline (`to_llvm`: both halves), collecting diagnostics for the error.
mlir::OwningOpRef<mlir::ModuleOp> run_pipeline(Context& c, const std::string& text, bool to_llvm,
                                               const CodegenOptions& options) {
  init_once();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&c.ctx, [&](mlir::Diagnostic& d) {
    llvm::raw_string_ostream os(diagnostics);
    os << d.getLocation() << ": " << d << "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(text, &c.ctx);
  if (!module) throw BackendError("mlir: the lowered program does not parse:\n" + diagnostics);
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
  auto add = [&](const std::string& pipeline) {
    if (mlir::failed(mlir::parsePassPipeline(pipeline, pm)))
      throw InternalError("mlir: the pass pipeline does not parse: " + diagnostics);
  };
  add(to_buffers(ops <= kInPlaceAnalysisLimit));
  if (options.threads > 1) {
    add(kParallelLoops);
    pm.addPass(std::make_unique<ParallelFor>(options.threads, options.min_work));
    add(kAsyncRuntime);
  } else {
    add(kSequentialLoops);
  }
  if (to_llvm) {
    pm.addPass(std::make_unique<PolynomialMath>());
    add(kToLLVM);
  }
  if (mlir::failed(pm.run(*module))) throw BackendError("mlir: the pass pipeline failed:\n" + diagnostics);
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

// LLVM's pipeline at the opt level, with glibc's vector-math names (libmvec's _ZGV* ABI) as the
// vector library: the loop vectoriser turns sin/cos/tan/exp/log/pow calls into 4/8/16-lane calls,
// which the loader binds to SLEEF's GNU-ABI build (1-ULP, the interpreter's own kernels).
void optimise(llvm::Module& m, llvm::TargetMachine& tm, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  llvm::TargetLibraryInfoImpl tlii(m.getTargetTriple(), llvm::VectorLibrary::LIBMVEC);
  // LLVM's libmvec table stops at 256-bit variants; with AVX-512 the 512-bit ones (SLEEF has them,
  // same 1-ULP accuracy) halve the calls.
  if (tm.getTargetFeatureString().contains("+avx512f")) {
    static const std::vector<llvm::VecDesc> kAvx512 = [] {
      static std::deque<std::string> names;  // VecDesc holds StringRefs
      auto keep = [](std::string n) -> llvm::StringRef { return names.emplace_back(std::move(n)); };
      std::vector<llvm::VecDesc> v;
      for (auto [fn, args] :
           {std::pair{"sin", "v"}, {"cos", "v"}, {"tan", "v"}, {"exp", "v"}, {"log", "v"}, {"pow", "vv"}}) {
        for (auto [suffix, lanes, type] : {std::tuple{"f", 16, "f32"}, {"", 8, "f64"}}) {
          std::string width = std::to_string(lanes);
          llvm::StringRef vec = keep("_ZGVeN" + width + args + "_" + fn + suffix);
          llvm::StringRef abi = keep("_ZGV_LLVM_N" + width + args);
          for (std::string scalar : {std::string(fn) + suffix, "llvm." + std::string(fn) + "." + type})
            v.emplace_back(keep(scalar), vec, llvm::ElementCount::getFixed(lanes), false, abi, std::nullopt);
        }
      }
      return v;
    }();
    tlii.addVectorizableFunctions(kAvx512);
  }
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
  std::string loops = options.threads > 1 ? std::string(kParallelLoops) +
                                                ",evoxc-parallel-for{workers=" + std::to_string(options.threads) +
                                                " min-work=" + std::to_string(options.min_work) + "}," + kAsyncRuntime
                                          : std::string(kSequentialLoops);
  return "builtin.module(" + to_buffers(true) + "," + loops + ",evoxc-polynomial-math," + kToLLVM + "), then LLVM -O" +
         std::to_string(options.opt_level) + (options.reassociate_reductions ? " (reductions reassociate)" : "");
}

std::string lower_to_loops(const std::string& mlir_text, const CodegenOptions& options) {
  Context c;
  auto module = run_pipeline(c, mlir_text, false, options);
  std::string out;
  llvm::raw_string_ostream os(out);
  module->print(os);
  return out;
}

std::string compile_to_object(const std::string& mlir_text, const CodegenOptions& options) {
  Context c;
  auto module = run_pipeline(c, mlir_text, true, options);
  llvm::LLVMContext llvm_ctx;
  std::unique_ptr<llvm::Module> m = mlir::translateModuleToLLVMIR(*module, llvm_ctx, "evoxc");
  if (!m) throw BackendError("mlir: translation to LLVM IR failed");
  add_entry(*m);
  keep_blocks_out_of_coroutines(*m);

  HostTarget host = host_target();
  std::string error;
  llvm::Triple triple(host.triple);
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) throw BackendError("mlir: no LLVM target for " + host.triple + ": " + error);
  llvm::TargetOptions target_options;
  static const llvm::CodeGenOptLevel kLevels[] = {llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less,
                                                  llvm::CodeGenOptLevel::Default, llvm::CodeGenOptLevel::Aggressive};
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, host.cpu, host.features, target_options, llvm::Reloc::PIC_, std::nullopt, kLevels[options.opt_level]));
  if (!tm) throw BackendError("mlir: cannot make a target machine for " + host.cpu);
  m->setDataLayout(tm->createDataLayout());
  m->setTargetTriple(triple);

  optimise(*m, *tm, options.opt_level);
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager emit;
  if (tm->addPassesToEmitFile(emit, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw BackendError("mlir: the target cannot emit object code");
  emit.run(*m);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace evoxc::mlir_codegen
