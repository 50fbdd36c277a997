// The memo of inferred result types: a lock-free, insert-only table keyed by op and operand types.
#include "evoxc/ops/infer_memo.h"

#include <array>
#include <atomic>

namespace evoxc {

namespace {

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

size_t key_hash(const OpDef& op, std::span<const TensorType* const> operands) {
  size_t h = mix(0xcbf29ce484222325ULL, op.id);
  for (const TensorType* t : operands) {
    h = mix(h, static_cast<size_t>(t->dtype) + 0x100 * t->rank());
    for (const DimExpr& d : t->shape) h = mix(h, d.hash());
  }
  return h;
}

bool matches(const Entry& e, size_t hash, uint32_t op_id, std::span<const TensorType* const> operands) {
  if (e.hash != hash || e.op_id != op_id || e.operands.size() != operands.size()) return false;
  for (size_t i = 0; i < operands.size(); ++i)
    if (e.operands[i] != *operands[i]) return false;
  return true;
}

}  // namespace

const std::vector<TensorType>* memoized_result_types(const OpDef& op, std::span<const TensorType* const> operands) {
  size_t hash = key_hash(op, operands);
  for (size_t p = 0; p < kProbes; ++p) {
    const Entry* e = g_slots[(hash + p) & (kSlots - 1)].load(std::memory_order_acquire);
    if (e == nullptr) return nullptr;  // slots fill in probe order and are never cleared
    if (matches(*e, hash, op.id, operands)) return &e->results;
  }
  return nullptr;
}

void remember_result_types(const OpDef& op, std::span<const TensorType* const> operands,
                           const std::vector<TensorType>& results) {
  size_t hash = key_hash(op, operands);
  auto* e = new Entry{hash, op.id, {}, results};
  e->operands.reserve(operands.size());
  for (const TensorType* t : operands) e->operands.push_back(*t);
  for (size_t p = 0; p < kProbes; ++p) {
    const Entry* expected = nullptr;
    auto& slot = g_slots[(hash + p) & (kSlots - 1)];
    if (slot.compare_exchange_strong(expected, e, std::memory_order_acq_rel, std::memory_order_acquire)) {
      g_count.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    // Another thread may have remembered the same signature meanwhile.
    if (matches(*expected, hash, op.id, operands)) break;
  }
  delete e;  // already there, or no free slot within kProbes: not remembered
}

size_t memoized_signatures() { return g_count.load(std::memory_order_relaxed); }

}  // namespace evoxc
