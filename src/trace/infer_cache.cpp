// The trace layer's memo of inferred result types: a lock-free, insert-only table keyed by op and operand types.
#include "infer_cache.h"

#include <array>
#include <atomic>

namespace evoxc::trace_internal {

namespace {

// Operand counts up to this are memoized (every unary, binary and ternary elementwise op).
constexpr size_t kMaxOperands = 3;
constexpr size_t kSlots = 4096;  // a power of two
constexpr size_t kProbes = 8;

struct Entry {
  size_t hash;
  uint32_t op_id;
  std::vector<TensorType> operands;
  std::vector<TensorType> results;
};

std::array<std::atomic<const Entry*>, kSlots> g_slots{};
std::atomic<size_t> g_count{0};

size_t mix(size_t h, size_t v) { return (h ^ v) * 0x100000001b3ULL + (h >> 29); }

size_t key_hash(const OpDef& op, const std::vector<Value*>& operands) {
  size_t h = mix(0xcbf29ce484222325ULL, op.id);
  for (const Value* v : operands) {
    const TensorType& t = v->type();
    h = mix(h, static_cast<size_t>(t.dtype) + 0x100 * t.rank());
    for (const DimExpr& d : t.shape) h = mix(h, d.hash());
  }
  return h;
}

bool matches(const Entry& e, size_t hash, const OpDef& op, const std::vector<Value*>& operands) {
  if (e.hash != hash || e.op_id != op.id || e.operands.size() != operands.size()) return false;
  for (size_t i = 0; i < operands.size(); ++i)
    if (e.operands[i] != operands[i]->type()) return false;
  return true;
}

const Entry* find(size_t hash, const OpDef& op, const std::vector<Value*>& operands) {
  for (size_t p = 0; p < kProbes; ++p) {
    const Entry* e = g_slots[(hash + p) & (kSlots - 1)].load(std::memory_order_acquire);
    if (e == nullptr) return nullptr;  // slots fill in probe order and are never cleared
    if (matches(*e, hash, op, operands)) return e;
  }
  return nullptr;
}

void remember(size_t hash, const Operation& op) {
  auto* e = new Entry{hash, op.op_id(), {}, {}};
  e->operands.reserve(op.num_operands());
  for (const Value* v : op.operands()) e->operands.push_back(v->type());
  e->results.reserve(op.num_results());
  for (const auto& r : op.results()) e->results.push_back(r->type());
  for (size_t p = 0; p < kProbes; ++p) {
    const Entry* expected = nullptr;
    auto& slot = g_slots[(hash + p) & (kSlots - 1)];
    if (slot.compare_exchange_strong(expected, e, std::memory_order_acq_rel, std::memory_order_acquire)) {
      g_count.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    // Another thread may have remembered the same signature meanwhile.
    if (expected->hash == hash && expected->op_id == e->op_id && expected->operands == e->operands) break;
  }
  delete e;  // already there, or no free slot within kProbes: not remembered
}

}  // namespace

Operation* create_memoized(Builder& b, const OpDef& op, std::vector<Value*> operands) {
  if (operands.size() > kMaxOperands || op.num_regions != 0) return b.create(op, std::move(operands));
  size_t hash = key_hash(op, operands);
  if (const Entry* e = find(hash, op, operands)) return b.create_typed(op, std::move(operands), e->results);
  Operation* r = b.create(op, std::move(operands));
  remember(hash, *r);
  return r;
}

size_t memoized_signatures() { return g_count.load(std::memory_order_relaxed); }

}  // namespace evoxc::trace_internal
