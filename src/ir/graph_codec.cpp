// The binary graph encoding of artifacts (ir/graph_codec.h): writer and strict reader.
#include "ir/graph_codec.h"

#include <cstring>
#include <map>
#include <unordered_map>

#include "evoxc/core/error.h"
#include "evoxc/core/limits.h"

namespace evoxc::graph_codec {
namespace {

constexpr std::string_view kMagic = "EVXG";
// Regions, trees and extents: the one nesting budget every reader shares (core/limits.h).
constexpr int kMaxDepth = kMaxNestingDepth;
constexpr int kMaxDimDepth = kMaxNestingDepth;

// ---- writing ----

class Writer {
 public:
  void byte(uint8_t b) { out_.push_back(static_cast<char>(b)); }
  void u(uint64_t v) {
    while (v >= 0x80) {
      byte(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    byte(static_cast<uint8_t>(v));
  }
  void s(int64_t v) { u((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void str(std::string_view v) {
    u(v.size());
    out_.append(v);
  }
  void f64(double v) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, 8);
    for (int i = 0; i < 8; ++i) byte(static_cast<uint8_t>(bits >> (8 * i)));
  }
  void raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

class Encoder {
 public:
  std::string run(const Graph& g) {
    const Module& m = g.module();
    tree(g.input_tree());
    tree(g.output_tree());
    attrs(g.static_values());
    w_.str(m.name());
    w_.u(m.functions().size());
    for (const auto& f : m.functions()) {
      ids_.clear();
      w_.str(f->name());
      types(f->result_types());
      block(f->entry());
    }
    Writer head;
    head.raw(kMagic.data(), kMagic.size());
    head.u(kVersion);
    head.u(static_cast<uint64_t>(m.version()));
    head.u(op_names_.size());
    for (const auto& n : op_names_) head.str(n);
    head.u(file_names_.size());
    for (const auto& n : file_names_) head.str(n);
    head.out() += w_.out();
    return std::move(head.out());
  }

 private:
  void tree(const TreeDef& t) {
    w_.byte(static_cast<uint8_t>(t.kind()));
    if (t.kind() == TreeKind::None || t.kind() == TreeKind::Leaf) return;
    w_.u(t.size());
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.kind() == TreeKind::Dict) w_.str(t.keys()[i]);
      tree(t.children()[i]);
    }
  }

  void dim(const DimExpr& d) {
    w_.byte(static_cast<uint8_t>(d.kind()));
    switch (d.kind()) {
      case DimExpr::Kind::Const: w_.s(d.value()); return;
      case DimExpr::Kind::Sym: w_.str(d.name()); return;
      default: dim(d.lhs()); dim(d.rhs());
    }
  }

  void type(const TensorType& t) {
    w_.byte(static_cast<uint8_t>(t.dtype));
    w_.u(t.rank());
    for (const auto& d : t.shape) dim(d);
  }
  void types(const std::vector<TensorType>& ts) {
    w_.u(ts.size());
    for (const auto& t : ts) type(t);
  }

  void attr(const Attribute& a) {
    w_.byte(static_cast<uint8_t>(attr_kind(a)));
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::monostate>) {
          } else if constexpr (std::is_same_v<T, bool>) {
            w_.byte(v ? 1 : 0);
          } else if constexpr (std::is_same_v<T, int64_t>) {
            w_.s(v);
          } else if constexpr (std::is_same_v<T, double>) {
            w_.f64(v);
          } else if constexpr (std::is_same_v<T, std::string>) {
            w_.str(v);
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            w_.u(v.size());
            for (int64_t x : v) w_.s(x);
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            w_.u(v.size());
            for (double x : v) w_.f64(x);
          } else if constexpr (std::is_same_v<T, DType>) {
            w_.byte(static_cast<uint8_t>(v));
          } else if constexpr (std::is_same_v<T, Shape>) {
            w_.u(v.rank());
            for (const auto& d : v) dim(d);
          } else {
            static_assert(std::is_same_v<T, Tensor>);
            w_.byte(static_cast<uint8_t>(v.dtype()));
            w_.u(v.rank());
            for (int64_t d : v.shape()) w_.u(static_cast<uint64_t>(d));
            w_.u(v.nbytes());
            if (v.nbytes() > 0) w_.raw(v.raw_data(), v.nbytes());
          }
        },
        a);
  }
  void attrs(const AttrMap& m) {
    w_.u(m.size());
    for (const auto& [k, v] : m) {
      w_.str(k);
      attr(v);
    }
  }

  void location(const Location& loc) {
    if (!loc.known()) {
      w_.u(0);
      return;
    }
    auto [it, added] = files_.emplace(loc.file, file_names_.size());
    if (added) file_names_.push_back(loc.file);
    w_.u(it->second + 1);
    w_.s(loc.line);
    w_.s(loc.column);
  }

  uint64_t op_index(const Operation& op) {
    uint32_t id = op.op_id();
    if (id >= op_slot_.size()) op_slot_.resize(id + 1, 0);
    if (op_slot_[id] == 0) {
      op_names_.push_back(op.name());
      op_slot_[id] = op_names_.size();
    }
    return op_slot_[id] - 1;
  }

  void block(const Block& b, int depth = 0) {
    // A graph built in memory is not bounded by a reader; do not write what the reader refuses.
    if (depth > kMaxDepth)
      throw PersistenceError("graph_codec: regions nested more than " + std::to_string(kMaxDepth) + " deep");
    w_.u(b.num_arguments());
    for (const auto& a : b.arguments()) {
      type(a->type());
      ids_.emplace(a.get(), ids_.size());
    }
    w_.u(b.num_operations());
    for (const auto& op : b.operations()) {
      w_.u(op_index(*op));
      w_.u(op->num_operands());
      for (const Value* v : op->operands()) {
        auto it = ids_.find(v);
        if (it == ids_.end())
          throw InternalError("graph_codec: evoxc." + op->name() + " at " + op->location().to_string() +
                              " uses a value defined outside its function; verify the graph first");
        w_.u(it->second);
      }
      w_.u(op->num_results());
      for (const auto& r : op->results()) {
        type(r->type());
        ids_.emplace(r.get(), ids_.size());
      }
      attrs(op->attributes());
      location(op->location());
      w_.u(op->regions().size());
      for (const auto& r : op->regions()) block(r->block(), depth + 1);
    }
  }

  Writer w_;
  std::vector<std::string> op_names_;
  std::vector<uint64_t> op_slot_;  // by op id: index in op_names_ + 1, 0 when not yet used
  std::vector<std::string> file_names_;
  std::unordered_map<std::string, uint64_t> files_;
  std::unordered_map<const Value*, uint64_t> ids_;
};

// ---- reading ----

class Decoder {
 public:
  explicit Decoder(std::string_view bytes)
      : begin_(reinterpret_cast<const uint8_t*>(bytes.data())), p_(begin_), end_(begin_ + bytes.size()) {}

  Graph run() {
    if (left() < kMagic.size() || std::memcmp(p_, kMagic.data(), kMagic.size()) != 0)
      fail("bad magic (not a binary evoxc graph)");
    p_ += kMagic.size();
    uint64_t version = u();
    if (version != static_cast<uint64_t>(kVersion))
      fail("encoding version " + std::to_string(version) + ", this build reads " + std::to_string(kVersion));
    uint64_t ir_version = u();
    if (ir_version != static_cast<uint64_t>(kIrVersion))
      fail("IR version " + std::to_string(ir_version) + ", this build reads " + std::to_string(kIrVersion));
    uint64_t n_ops = count(1, "op-name table");
    for (uint64_t i = 0; i < n_ops; ++i) {
      std::string name = str();
      const OpInfo* info = find_op_info(name);
      if (!info) fail("unknown op '" + name + "' in the op-name table; this build does not have it");
      ops_.push_back(info);
    }
    uint64_t n_files = count(1, "location-file table");
    for (uint64_t i = 0; i < n_files; ++i) files_.push_back(str());
    TreeDef inputs = tree(0);
    TreeDef outputs = tree(0);
    AttrMap statics = attrs();
    auto module = std::make_shared<Module>(str(), static_cast<int>(ir_version));
    uint64_t n_functions = count(3, "functions");
    std::vector<std::string> names;
    for (uint64_t i = 0; i < n_functions; ++i) {
      std::string name = str();
      for (const auto& n : names)
        if (n == name) fail("function @" + name + " is defined twice");
      names.push_back(name);
      Function& f = module->add_function(name);
      f.result_types() = types();
      values_.clear();
      visible_.clear();
      block(f.entry(), 0);
    }
    if (p_ != end_) fail(std::to_string(left()) + " bytes after the end of the graph");
    return Graph(std::move(module), std::move(inputs), std::move(outputs), std::move(statics));
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw PersistenceError("binary graph payload, byte " + std::to_string(p_ - begin_) + ": " + what +
                           " (truncated or corrupted)");
  }
  size_t left() const { return static_cast<size_t>(end_ - p_); }

  uint8_t byte() {
    if (p_ == end_) fail("unexpected end of data");
    return *p_++;
  }
  uint64_t u() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = byte();
      if (shift == 63 && b > 1) fail("varint overflows 64 bits");
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    fail("varint longer than 10 bytes");
  }
  int64_t s() {
    uint64_t z = u();
    return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
  }
  int32_t s32(const char* what) {
    int64_t v = s();
    if (v < INT32_MIN || v > INT32_MAX) fail(std::string(what) + " " + std::to_string(v) + " is out of range");
    return static_cast<int32_t>(v);
  }
  // A count of items that take at least `min_bytes` each: never more than the bytes left
  // allow, so a corrupted count cannot ask for an unbounded allocation.
  uint64_t count(size_t min_bytes, const char* what) {
    uint64_t n = u();
    if (n > left() / min_bytes)
      fail(std::string(what) + ": count " + std::to_string(n) + " is more than the " + std::to_string(left()) +
           " bytes left can hold");
    return n;
  }
  std::string str() {
    uint64_t n = u();
    if (n > left()) fail("string of " + std::to_string(n) + " bytes, only " + std::to_string(left()) + " left");
    std::string v(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return v;
  }
  double f64() {
    if (left() < 8) fail("unexpected end of data in a float");
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits |= static_cast<uint64_t>(p_[i]) << (8 * i);
    p_ += 8;
    double v = 0;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  DType dtype() {
    uint8_t b = byte();
    if (b >= kNumDTypes) fail("dtype tag " + std::to_string(b) + " is not a dtype");
    return static_cast<DType>(b);
  }

  TreeDef tree(int depth) {
    if (depth > kMaxDepth) fail("a tree nested more than " + std::to_string(kMaxDepth) + " deep");
    uint8_t kind = byte();
    switch (static_cast<TreeKind>(kind)) {
      case TreeKind::None: return TreeDef();
      case TreeKind::Leaf: return TreeDef(LeafMark{});
      case TreeKind::Tuple:
      case TreeKind::List: {
        uint64_t n = count(1, "tree children");
        std::vector<TreeDef> kids;
        kids.reserve(n);
        for (uint64_t i = 0; i < n; ++i) kids.push_back(tree(depth + 1));
        return static_cast<TreeKind>(kind) == TreeKind::Tuple ? TreeDef::tuple(std::move(kids))
                                                              : TreeDef::list(std::move(kids));
      }
      case TreeKind::Dict: {
        uint64_t n = count(2, "dict entries");
        std::map<std::string, TreeDef> kids;
        for (uint64_t i = 0; i < n; ++i) {
          std::string key = str();
          if (!kids.emplace(key, tree(depth + 1)).second) fail("dict key '" + key + "' appears twice");
        }
        return TreeDef::dict(std::move(kids));
      }
    }
    fail("tree tag " + std::to_string(kind) + " is not a tree node");
  }

  DimExpr dim(int depth) {
    if (depth > kMaxDimDepth) fail("an extent nested more than " + std::to_string(kMaxDimDepth) + " deep");
    uint8_t kind = byte();
    using K = DimExpr::Kind;
    if (kind > static_cast<uint8_t>(K::Max)) fail("extent tag " + std::to_string(kind) + " is not an extent");
    switch (static_cast<K>(kind)) {
      case K::Const: return DimExpr(s());
      case K::Sym: return Dim(str());  // ShapeError on a bad name: reported as corrupted by decode()
      default: break;
    }
    DimExpr a = dim(depth + 1);
    DimExpr b = dim(depth + 1);
    switch (static_cast<K>(kind)) {
      case K::Add: return a + b;
      case K::Sub: return a - b;
      case K::Mul: return a * b;
      case K::FloorDiv: return floordiv(a, b);
      case K::Mod: return a % b;
      case K::Min: return min(a, b);
      default: return max(a, b);
    }
  }

  TensorType type() {
    DType t = dtype();
    uint64_t rank = count(2, "extents");  // an extent is a tag and at least one byte
    std::vector<DimExpr> dims;
    dims.reserve(rank);
    for (uint64_t i = 0; i < rank; ++i) dims.push_back(dim(0));
    return TensorType(t, Shape(std::move(dims)));
  }
  std::vector<TensorType> types() {
    uint64_t n = count(2, "types");
    std::vector<TensorType> out;
    out.reserve(n);
    for (uint64_t i = 0; i < n; ++i) out.push_back(type());
    return out;
  }

  Attribute attr() {
    uint8_t kind = byte();
    switch (static_cast<AttrKind>(kind)) {
      case AttrKind::None: return std::monostate{};
      case AttrKind::Bool: {
        uint8_t b = byte();
        if (b > 1) fail("bool attribute byte " + std::to_string(b));
        return b == 1;
      }
      case AttrKind::Int: return s();
      case AttrKind::Float: return f64();
      case AttrKind::String: return str();
      case AttrKind::Ints: {
        uint64_t n = count(1, "ints");
        std::vector<int64_t> v;
        v.reserve(n);
        for (uint64_t i = 0; i < n; ++i) v.push_back(s());
        return v;
      }
      case AttrKind::Floats: {
        uint64_t n = count(8, "floats");
        std::vector<double> v;
        v.reserve(n);
        for (uint64_t i = 0; i < n; ++i) v.push_back(f64());
        return v;
      }
      case AttrKind::DType: return dtype();
      case AttrKind::Shape: {
        uint64_t rank = count(2, "extents");
        std::vector<DimExpr> dims;
        for (uint64_t i = 0; i < rank; ++i) dims.push_back(dim(0));
        return Shape(std::move(dims));
      }
      case AttrKind::Tensor: return tensor();
    }
    fail("attribute tag " + std::to_string(kind) + " is not an attribute kind");
  }

  Tensor tensor() {
    DType t = dtype();
    uint64_t rank = count(1, "tensor extents");
    std::vector<int64_t> shape;
    uint64_t numel = 1;
    bool overflow = false;
    for (uint64_t i = 0; i < rank; ++i) {
      uint64_t d = u();
      if (d > static_cast<uint64_t>(INT64_MAX)) fail("tensor extent " + std::to_string(d) + " is out of range");
      shape.push_back(static_cast<int64_t>(d));
      if (d != 0 && numel > UINT64_MAX / d) overflow = true;
      numel *= d;
    }
    uint64_t nbytes = u();
    if (overflow || numel > left() || numel * size_of(t) != nbytes || nbytes > left())
      fail("tensor data of " + std::to_string(nbytes) + " bytes does not fit its shape and dtype or the bytes left");
    Tensor v = Tensor::empty(shape, t);
    if (nbytes > 0) std::memcpy(v.raw_data(), p_, static_cast<size_t>(nbytes));
    if (t == DType::Bool)
      for (uint64_t i = 0; i < nbytes; ++i)
        if (p_[i] > 1) fail("bool tensor element byte " + std::to_string(p_[i]));
    p_ += nbytes;
    return v;
  }

  AttrMap attrs() {
    uint64_t n = count(2, "attributes");
    AttrMap m;
    for (uint64_t i = 0; i < n; ++i) {
      std::string key = str();
      Attribute a = attr();
      if (!m.emplace(std::move(key), std::move(a)).second) fail("an attribute name appears twice");
    }
    return m;
  }

  Location location() {
    uint64_t f = u();
    Location loc;
    if (f == 0) return loc;
    if (f > files_.size()) fail("location file index " + std::to_string(f) + " is not in the file table");
    loc.file = files_[f - 1];
    if (loc.file.empty()) fail("an empty location file name");
    loc.line = s32("location line");
    loc.column = s32("location column");
    return loc;
  }

  void define(Value* v) {
    values_.push_back(v);
    visible_.push_back(0);
  }

  void block(Block& b, int depth) {
    if (depth > kMaxDepth) fail("regions nested more than " + std::to_string(kMaxDepth) + " deep");
    std::vector<size_t> defined_here;
    uint64_t n_args = count(2, "block arguments");
    for (uint64_t i = 0; i < n_args; ++i) {
      define(b.add_argument(type()));
      visible_.back() = 1;
      defined_here.push_back(values_.size() - 1);
    }
    // An op is at least: name index, operand count, result count, attribute count,
    // location, region count.
    uint64_t n_ops = count(6, "operations");
    for (uint64_t i = 0; i < n_ops; ++i) {
      uint64_t k = u();
      if (k >= ops_.size()) fail("op index " + std::to_string(k) + " is not in the op-name table");
      const OpInfo& info = *ops_[k];
      uint64_t n_operands = count(1, "operands");
      std::vector<Value*> operands;
      operands.reserve(n_operands);
      for (uint64_t j = 0; j < n_operands; ++j) {
        uint64_t id = u();
        if (id >= values_.size() || !visible_[id])
          fail("value id " + std::to_string(id) + " used by evoxc." + info.name +
               " is not defined before it in this block or an enclosing one");
        operands.push_back(values_[id]);
      }
      std::vector<TensorType> results = types();
      AttrMap attributes = attrs();
      Location loc = location();
      uint64_t n_regions = count(2, "regions");
      Operation* op = b.append(info, std::move(operands), std::move(results), std::move(attributes), std::move(loc),
                               static_cast<size_t>(n_regions));
      size_t first_result = values_.size();
      for (const auto& r : op->results()) define(r.get());
      // An op's results are not visible inside its own regions.
      for (uint64_t r = 0; r < n_regions; ++r) block(op->region(r).block(), depth + 1);
      for (size_t r = first_result; r < first_result + op->num_results(); ++r) {
        visible_[r] = 1;
        defined_here.push_back(r);
      }
    }
    for (size_t id : defined_here) visible_[id] = 0;
  }

  const uint8_t* begin_;
  const uint8_t* p_;
  const uint8_t* end_;
  std::vector<const OpInfo*> ops_;
  std::vector<std::string> files_;
  std::vector<Value*> values_;
  std::vector<uint8_t> visible_;  // by value id: in scope at the current position
};

}  // namespace

std::string encode(const Graph& graph) { return Encoder().run(graph); }

Graph decode(std::string_view bytes) {
  try {
    return Decoder(bytes).run();
  } catch (const PersistenceError&) {
    throw;
  } catch (const std::exception& e) {
    // A value the IR itself rejects (a bad symbol name, a division by zero in an extent).
    throw PersistenceError(std::string("binary graph payload: corrupted: ") + e.what());
  }
}

}  // namespace evoxc::graph_codec
