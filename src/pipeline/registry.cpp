// The backend registry and the capability check lower() runs over every op of a graph.
#include <algorithm>
#include <mutex>

#include "evoxc/core/error.h"
#include "evoxc/pipeline/pipeline.h"

namespace evoxc {

// ---- capabilities ----

bool Capabilities::supports_dtype(DType t) const { return std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end(); }

bool Capabilities::supports_device(const Device& d) const {
  return std::find(device_kinds.begin(), device_kinds.end(), d.kind) != device_kinds.end();
}

bool Capabilities::supports(const OpDef& op, DType t) const {
  bool has_rule = op.terminator || (rules && rules->has(op.id));
  return has_rule && supports_dtype(t) && dtype_in_class(t, op.operand_dtypes);
}

namespace {

std::string dtype_list(const std::vector<DType>& ts) {
  std::string s;
  for (DType t : ts) s += (s.empty() ? "" : ", ") + std::string(dtype_name(t));
  return s;
}

// Walks every block of a function, at every region depth, against one backend's capabilities.
class SupportCheck {
 public:
  SupportCheck(const Capabilities& caps, const RuleTableBase& lowered) : caps_(caps), lowered_(lowered) {
    for (DType t : caps.dtypes) dtype_mask_ |= 1u << static_cast<unsigned>(t);
  }

  void block(const Block& b, const Operation* parent) {
    for (const auto& a : b.arguments()) value(*a, nullptr, parent, "takes a region argument of type ");
    for (const auto& op : b.operations()) {
      // The terminator only hands values already checked where they were defined to the
      // enclosing op or the caller; every backend binds them itself.
      if (op->is_terminator()) continue;
      if (!lowered_.has(op->op_id())) {
        std::string m = "has no " + lowered_.name() + " rule or decomposition in this build";
        if (const std::string* why = lowered_.deferral(op->op_id())) m += " (" + *why + ")";
        fail(*op, parent,
             m + "; run the graph on a backend that has one (`evoxc ops` shows which backends cover each op) "
                 "or express it with other ops");
      }
      if (!op->regions().empty() && !caps_.regions)
        fail(*op, parent,
             "has regions (control flow), which this backend does not support; use a backend with "
             "regions (`evoxc devices` lists them) or unroll the control flow while tracing");
      for (const auto& r : op->results()) value(*r, op.get(), parent, "produces a value of type ");
      for (const auto& region : op->regions()) block(region->block(), op.get());
    }
  }

 private:
  void value(const Value& v, const Operation* op, const Operation* parent, const char* what) {
    if (!(dtype_mask_ >> static_cast<unsigned>(v.dtype()) & 1u))
      fail(op, parent,
           what + v.type().to_string() + ", whose dtype " + std::string(dtype_name(v.dtype())) +
               " this backend does not handle (it handles " + dtype_list(caps_.dtypes) +
               "); convert the value to one of those while tracing or use another backend");
    if (!caps_.symbolic_shapes && !v.shape().is_static())
      fail(op, parent,
           what + v.type().to_string() +
               ", with a symbolic extent, which this backend does not support; trace with concrete shapes "
               "or use a backend with symbolic shapes");
  }

  // "<backend>: evoxc.<op> at <loc> (inside evoxc.<parent> at <loc>) <problem>". A block
  // argument of main has no op: it is named as an input.
  [[noreturn]] void fail(const Operation* op, const Operation* parent, const std::string& problem) {
    std::string m = caps_.backend + ": ";
    if (op) {
      m += "evoxc." + op->name() + " at " + op->location().to_string();
    } else if (parent) {
      m += "a region of evoxc." + parent->name() + " at " + parent->location().to_string();
      parent = nullptr;
    } else {
      m += "the graph";
    }
    if (parent) m += " (inside evoxc." + parent->name() + " at " + parent->location().to_string() + ")";
    throw BackendError(m + " " + problem);
  }
  [[noreturn]] void fail(const Operation& op, const Operation* parent, const std::string& problem) {
    fail(&op, parent, problem);
  }

  const Capabilities& caps_;
  const RuleTableBase& lowered_;
  uint32_t dtype_mask_ = 0;
};

// ---- the registry ----

struct Registered {
  std::string name;
  BackendFactory factory;
  std::once_flag once;
  std::unique_ptr<Backend> backend;
};

struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<Registered>> entries;  // stable addresses: backends are handed out by reference
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string known_backends() {
  std::string s;
  for (const auto& n : backend_names()) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? std::string("none") : s;
}

}  // namespace

void Backend::check_supported(const Graph& graph) const {
  SupportCheck check(caps_, lowered_ops());
  for (const auto& f : graph.module().functions()) check.block(f->entry(), nullptr);
}

bool register_backend(std::string name, BackendFactory factory) {
  if (name.empty() || !factory) throw InternalError("register_backend: a backend needs a name and a factory");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& e : r.entries)
    if (e->name == name) throw InternalError("register_backend: backend '" + name + "' is registered twice");
  auto e = std::make_unique<Registered>();
  e->name = std::move(name);
  e->factory = std::move(factory);
  r.entries.push_back(std::move(e));
  return true;
}

const Backend* find_backend(std::string_view name) {
  Registry& r = registry();
  Registered* entry = nullptr;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    for (const auto& e : r.entries)
      if (e->name == name) entry = e.get();
  }
  if (!entry) return nullptr;
  std::call_once(entry->once, [&] {
    std::unique_ptr<Backend> b = entry->factory();
    if (!b || b->name() != entry->name)
      throw InternalError("backend '" + entry->name + "': its factory made " +
                          (b ? "a backend named '" + b->name() + "'" : std::string("nothing")));
    entry->backend = std::move(b);
  });
  return entry->backend.get();
}

const Backend& get_backend(std::string_view name) {
  if (const Backend* b = find_backend(name)) return *b;
  throw BackendError("unknown backend '" + std::string(name) + "'; this build has: " + known_backends());
}

std::vector<std::string> backend_names() {
  Registry& r = registry();
  std::vector<std::string> names;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    for (const auto& e : r.entries) names.push_back(e->name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace evoxc
