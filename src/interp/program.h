// The interpreter's prepared plan: value table, compiled dim expressions, run-time checks, kernels, buffers.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "evoxc/core/error.h"
#include "evoxc/interp/interp.h"
#include "evoxc/ir/ir.h"

namespace evoxc::interp {

class RunBudget;

// What a kernel sees while running: one data pointer per value, the flat table of every
// value's concrete extents, and every value's element count.
struct Frame {
  void* const* ptr;
  const int64_t* dims;
  const int64_t* numel;
  // The plan's symbol values (Program::sym_names order); control kernels hand them to
  // their region plans.
  const int64_t* syms = nullptr;
  // The call's run limits and loop-iteration count; loop kernels tick it per iteration and
  // hand it to their region plans.
  RunBudget* budget = nullptr;
};

// One call's RunLimits and its loop-iteration count. Owned by execute() for one call, so it
// is touched by one thread only (the cancel flag is the one shared, atomic, input).
class RunBudget {
 public:
  explicit RunBudget(const RunLimits& limits);
  // A loop kernel calls this before running iteration `iteration` (0-based) of `op`'s body:
  // RunLimitError naming the op, its location and the limit when one is hit. Cheap on the
  // path where nothing is hit: a count, a relaxed load and a countdown.
  void tick(const Operation& op, int64_t iteration) {
    if (++count_ > max_count_) over_count(op, iteration);
    if (cancelled_ && cancelled_->load(std::memory_order_relaxed)) stop_cancelled(op, iteration);
    if (deadline_ && --until_clock_ <= 0) check_clock(op, iteration);
  }
  // At the start of a call: cancelled already, or the deadline already passed.
  void check_start() const;
  // Whether `op` is the loop that raised the RunLimitError in flight (enclosing loops add
  // themselves to its message instead).
  bool stopped_here(const Operation& op) const { return stopped_at_ == &op; }

 private:
  [[noreturn]] void over_count(const Operation& op, int64_t iteration);
  [[noreturn]] void stop_cancelled(const Operation& op, int64_t iteration);
  void check_clock(const Operation& op, int64_t iteration);

  const Operation* stopped_at_ = nullptr;
  int64_t count_ = 0;
  int64_t max_count_;
  const std::atomic<bool>* cancelled_;
  bool deadline_;
  std::chrono::steady_clock::time_point deadline_at_;
  // Clock sampling: read every `stride_` ticks, the stride doubling (to 1024) while samples
  // come closer than run_limits::kClockSampleGap apart and dropping to 1 when an iteration is slow
  // (evoxc/core/run_limits.h).
  int64_t until_clock_ = 1, stride_ = 1;
  std::chrono::steady_clock::time_point last_sample_;
};

// Adds "; inside <op> at iteration <k>" to a RunLimitError leaving a loop, so the message of
// a nested loop names its enclosing loops too, innermost first.
[[noreturn]] void rethrow_in_loop(const RunLimitError& e, const Operation& op, int64_t iteration);

// One prepared instruction. run() must not throw, allocate or look anything up by name:
// every decision was taken when the kernel was built.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void run(const Frame& f) const = 0;
  // Flat elementwise kernels over one static element count, whose every operand is read
  // at the position it writes (no broadcasting), return that count and can run any range
  // [begin, end) of it; the plan then runs consecutive such kernels tile by tile, so
  // intermediates stay in cache (see fuse_elementwise_runs). Others return -1.
  virtual int64_t tile_numel() const { return -1; }
  virtual void run_range(const Frame& /*f*/, int64_t /*begin*/, int64_t /*end*/) const {}
};

// Replaces each run of two or more consecutive tileable kernels of one large element
// count by one kernel that walks cache-sized tiles in parallel and runs every member on
// each tile in order. Correct under the plan's buffer reuse because every member reads
// and writes the same positions: a buffer reused later in the run is only overwritten
// at positions its earlier reader has already consumed.
void fuse_elementwise_runs(std::vector<std::unique_ptr<Kernel>>& kernels);

// Static facts about one SSA value. Its type is the IR value's own (the plan keeps the
// graph's module alive), so describing a value copies nothing.
struct ValueDesc {
  const TensorType* ty = nullptr;
  uint32_t dim_off = 0;  // where its extents start in Frame::dims
  bool is_static = false;
  const TensorType& type() const { return *ty; }
  DType dtype() const { return ty->dtype; }
  uint32_t rank() const { return static_cast<uint32_t>(ty->rank()); }
};

// "evoxc.add at f.cpp:3:0" ("evoxc.add" where the location is unknown): how messages name
// an op. Built only when a message is.
std::string op_where(const Operation& op);

// Integer dim expressions compiled to postfix code over symbol slots, so a call binds
// and evaluates shapes without hashing names.
class DimCode {
 public:
  // Returns an expression id; a symbol's slot is its index in `sym_names`.
  int32_t add(const DimExpr& e, const std::vector<std::string>& sym_names);
  // ValidationError on division by zero or int64 overflow.
  int64_t eval(int32_t id, const int64_t* syms) const;
  const DimExpr& expr(int32_t id) const { return exprs_[static_cast<size_t>(id)]; }
  size_t size() const { return exprs_.size(); }

 private:
  struct Ins {
    DimExpr::Kind kind;
    int64_t arg;
  };
  void emit(const DimExpr& e, const std::vector<std::string>& sym_names, int depth, int& max_depth);
  std::vector<Ins> code_;
  std::vector<std::pair<uint32_t, uint32_t>> ranges_;
  std::vector<DimExpr> exprs_;
};

// A run-time shape condition the graph relies on. Conditions that are decidable at
// prepare are decided there; the rest run on every call, in op order.
struct Check {
  enum class Kind : uint8_t { Equal, BroadcastTo, LessEqual, NonNegative };
  Kind kind;
  int32_t a = -1, b = -1;  // DimCode ids
  std::string what;        // "evoxc.slice at f.cpp:3:0: limit of axis 0 within the operand's extent"
};

// What a kernel factory gets at prepare. Nothing here builds a string unless a message is
// actually raised: `where()` and the `what` of a condition are formed on demand.
class PrepareCtx {
 public:
  PrepareCtx(const Operation& op, const Program& plan, std::span<const uint32_t> in, std::span<const uint32_t> out);

  const Operation& op;
  // Value ids of the operands (then, for ops with regions, the captured values) and results.
  const std::span<const uint32_t> in, out;

  // "evoxc.add at f.cpp:3:0", for messages.
  std::string where() const { return op_where(op); }
  const ValueDesc& val(uint32_t id) const { return values_[id]; }
  const ValueDesc& operand(size_t i) const { return values_[in[i]]; }
  const ValueDesc& result(size_t i = 0) const { return values_[out[i]]; }
  // "%3" or "input [0]", for messages.
  std::string value_name(uint32_t id) const;
  // True when every operand and result has static extents (geometry can be precomputed).
  bool all_static() const;
  // The extents of a static value (valid only when it is static).
  const int64_t* static_dims(uint32_t id) const { return static_dims_.data() + values_[id].dim_off; }

  // The op's attributes, typed; the attribute helper's TypeError naming the op when one is
  // missing or of another kind (evoxc::attr_int and friends, with where()).
  const AttrMap& attrs() const { return op.attributes(); }
  bool has_attr(const std::string& name) const { return op.attributes().count(name) != 0; }
  int64_t attr_int(const std::string& name) const;
  double attr_float(const std::string& name) const;
  bool attr_bool(const std::string& name) const;
  const std::string& attr_string(const std::string& name) const;
  const std::vector<int64_t>& attr_ints(const std::string& name) const;
  DType attr_dtype(const std::string& name) const;
  const Shape& attr_shape(const std::string& name) const;
  const Tensor& attr_tensor(const std::string& name) const;

  // Conditions to hold at run time; `what` says which condition, without the op: a string,
  // or a callable returning one, called only when the condition is not decided equal here.
  template <typename What>
  void require_equal(const DimExpr& a, const DimExpr& b, What&& what) {
    if (a == b) return;
    checks.push_back({Check::Kind::Equal, a, b, text(std::forward<What>(what))});
  }
  template <typename What>
  void require_broadcast(const DimExpr& operand, const DimExpr& result, What&& what) {
    if (operand == result || (operand.is_const() && operand.value() == 1)) return;
    checks.push_back({Check::Kind::BroadcastTo, operand, result, text(std::forward<What>(what))});
  }
  template <typename What>
  void require_less_equal(const DimExpr& a, const DimExpr& b, What&& what) {
    if (a == b) return;
    checks.push_back({Check::Kind::LessEqual, a, b, text(std::forward<What>(what))});
  }
  // BackendError naming the op.
  [[noreturn]] void fail(const std::string& why) const;

  // The enclosing plan's symbols (slot order), for kernels that prepare region plans.
  const std::vector<std::string>& sym_names() const;
  // Ops with regions: the values their regions read from outside (captured_values order);
  // their ids follow the operands' in `in`.
  std::span<const Value* const> captures;

  // Filled by the factory: operand indices (bit k for operand k) the result may be written
  // over (elementwise ops whose kernel tolerates out == in), when that operand dies here.
  uint32_t in_place_operands = 0;
  // Filled by the factory for zero-copy ops: the result shares the operand's bytes.
  bool alias_operand0 = false;
  // Filled by the factory of constant: the result is this tensor, read in place.
  const Tensor* constant = nullptr;

  struct PendingCheck {
    Check::Kind kind;
    DimExpr a, b;
    std::string what;
  };
  std::vector<PendingCheck> checks;

 private:
  template <typename What>
  static std::string text(What&& what) {
    if constexpr (std::is_invocable_v<What>)
      return std::string(what());
    else
      return std::string(std::forward<What>(what));
  }
  const Program& plan_;
  const std::vector<ValueDesc>& values_;
  const std::vector<int64_t>& static_dims_;
};

using KernelPtr = std::unique_ptr<Kernel>;

// Prepares one region's block as a plan of its own: its inputs are the block arguments
// followed by `captures`; the symbols in `outer_syms` are not bound by the inputs but take
// the enclosing plan's values (slots 0.. in that order), and the inputs are checked
// against them. `where` names the region in messages.
std::shared_ptr<const Program> prepare_block(const Block& block, std::span<const Value* const> captures,
                                             const std::vector<std::string>& outer_syms, const std::string& where);

// One run of a block plan on raw buffers (what a control kernel holds). Input pointers
// are read only; output buffers must not overlap the inputs. Output extents are checked
// against the plan's result extents (ValidationError).
struct BlockCall {
  const void* const* in;
  const int64_t* const* in_dims;
  void* const* out;
  const int64_t* const* out_dims;
  const int64_t* outer_syms;    // Program::num_outer_syms values
  RunBudget* budget = nullptr;  // the enclosing call's (Frame::budget)
};
void execute_block(const Program& p, const BlockCall& call);

// The most elements one value may have (as Tensor::empty allows): checked at prepare for
// static shapes, per call for symbolic ones.
inline constexpr int64_t kMaxElements = int64_t{1} << 48;

// This host's physical memory in bytes (read once). An allocation larger than this is
// refused up front with a ValidationError (never tried: with overcommit it might succeed and
// be killed later, and sanitizer allocators abort on it).
size_t host_memory_bytes();
// ValidationError "<what>: cannot allocate <bytes> bytes: more than this host's memory ..."
// when `bytes` exceeds host_memory_bytes().
void check_host_memory(size_t bytes, const std::string& what);

// numpy's shape text: "(5, 3)", "(4,)", "()".
std::string shape_text(const int64_t* dims, size_t rank);

// A static multi-stream schedule of a top-level plan, decided at prepare (plan_streams in
// program.cpp) so that independent kernels run on several threads. Segments run one after
// another, with a full join between them; a segment is `lanes` [lane_begin, lane_end): one lane
// runs on the caller in order (kernels that use every thread themselves, or work too small to
// share), several run concurrently, one pool task each. Before a step, its lane waits until
// each lane named by its waits has completed `count` steps of this segment. Every lane lists
// its kernels in one topological order of the graph, which is what makes any interleaving of
// the lanes, including one thread running them all, free of deadlock (see execute.cpp).
struct StreamSchedule {
  struct Wait {
    uint32_t lane;  // within the segment
    int32_t count;
  };
  struct Step {
    uint32_t kernel;  // index in Program::kernels
    uint32_t wait_begin, wait_end;
  };
  struct Lane {
    uint32_t step_begin, step_end;
  };
  struct Segment {
    uint32_t lane_begin, lane_end;
  };
  // The most lanes of a segment: a run keeps their per-call state on its stack. More lanes
  // would split little work into many waits; wider machines still use every thread in the
  // large kernels.
  static constexpr uint32_t kMaxLanes = 8;
  std::vector<Segment> segments;
  std::vector<Lane> lanes;
  std::vector<Step> steps;
  std::vector<Wait> waits;
  uint32_t max_lanes = 0;  // the widest segment; 0 when the plan runs in op order
};

class Program {
 public:
  enum class StorageKind : uint8_t { Input, Constant, Output, Temp };
  struct Storage {
    StorageKind kind = StorageKind::Temp;
    uint32_t index = 0;  // input, constant, output or buffer number
  };
  struct InputRule {
    enum class Kind : uint8_t { Const, Bind, SameSym, Expr };
    Kind kind;
    uint32_t input, axis;
    int32_t slot = -1;                         // symbol slot (Bind, SameSym) or DimCode id (Expr)
    int64_t value = 0;                         // Const
    uint32_t first_input = 0, first_axis = 0;  // SameSym: where the symbol was bound
  };
  struct Buffer {
    size_t static_bytes = 0;
    // Symbolic plans: every value stored in it (sizes it at run time); empty when static.
    std::vector<uint32_t> values;
  };

  // The graph's module: the plan's value types and messages refer to its values and ops.
  // Block plans leave it empty (their enclosing plan holds it).
  std::shared_ptr<const Module> module;

  // Values and their extents.
  std::vector<ValueDesc> values;
  bool all_static = true;
  std::vector<int64_t> dims_template;         // constant extents; symbolic slots filled per call
  std::vector<int32_t> dim_expr;              // per dims entry: DimCode id or -1
  std::vector<int64_t> static_numel;          // per value, when all_static
  std::vector<const Operation*> producer_op;  // per value: its defining op; nullptr for inputs
  DimCode code;
  std::vector<std::string> sym_names;
  size_t num_outer_syms = 0;  // block plans: leading sym_names given by the enclosing plan

  // Inputs.
  size_t num_inputs = 0;
  std::vector<std::string> input_paths;
  // For messages: "input [0]" or "%3" (value_name), and "evoxc.add at f.cpp:3:0" or
  // "input [0]" (producer).
  std::string value_name(uint32_t v) const;
  std::string producer(uint32_t v) const;
  // Static plans: "the largest: %3 of evoxc.scan at f.cpp:3:0, tensor<...>, N bytes", for a
  // scratch arena that cannot be allocated.
  std::string largest_temp() const;
  std::vector<InputRule> input_rules;
  std::vector<Check> checks;

  // Storage plan.
  std::vector<Storage> storage;  // per value
  std::vector<Buffer> buffers;
  std::vector<size_t> static_offsets;  // per buffer, when all_static
  size_t static_arena = 0;
  std::vector<Tensor> constants;

  // Instructions, in op order (null for ops that need none: views, constants, and members
  // of a fused run, which its first member's kernel runs).
  std::vector<KernelPtr> kernels;
  // When not empty, kernels run in this order, partly concurrently, rather than in op order;
  // the storage plan above was made for it.
  StreamSchedule streams;
  // How the schedule fared lately (execute.cpp): calls left to run every lane on the caller,
  // and the count to use next time the pool's threads leave the caller waiting.
  struct StreamLoad {
    std::atomic<int32_t> alone_calls{0}, backoff{0};
  };
  mutable StreamLoad stream_load;

  // Outputs: the value each output leaf holds; `direct` when its producer writes the
  // caller's buffer, otherwise it is copied after the run.
  std::vector<uint32_t> output_value;
  std::vector<bool> output_direct;
  // Values whose pointer changes per call (stored in an input or an output).
  std::vector<uint32_t> patch_values;

  // Per-call scratch, pooled so steady-state calls allocate nothing.
  struct FrameData;
  std::unique_ptr<FrameData> acquire_frame() const;
  void release_frame(std::unique_ptr<FrameData> f) const;

  Program();
  ~Program();

 private:
  mutable std::mutex pool_mu_;
  mutable std::vector<std::unique_ptr<FrameData>> pool_;
};

struct Program::FrameData {
  std::vector<void*> ptr;
  std::vector<int64_t> dims, numel, syms, expr_vals;
  std::vector<size_t> offsets;
  std::vector<Tensor> staged;  // outputs computed away from an overlapping caller buffer
  void* arena = nullptr;
  size_t arena_cap = 0;
  ~FrameData();
  void reserve_arena(size_t bytes);
};

// The number of threads a prepared plan's kernels may run on at once: the widest segment of
// its stream schedule, 1 when it runs in op order (a test hook).
inline int num_streams(const Program& p) { return p.streams.max_lanes > 1 ? static_cast<int>(p.streams.max_lanes) : 1; }

// execute_block on a frame the caller holds (a control kernel keeps its regions' frames
// across iterations rather than leasing one per call).
void execute_block(const Program& p, const BlockCall& call, Program::FrameData& frame);

}  // namespace evoxc::interp
