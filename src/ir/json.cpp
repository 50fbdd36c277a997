// .evoxcgraph persistence: Graph::to_json/from_json/save/load (schema in docs/ir.md).

#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "evoxc/core/error.h"
#include "evoxc/core/file_io.h"
#include "evoxc/core/limits.h"
#include "evoxc/ir/graph.h"
#include "ir_text.h"

namespace evoxc {
namespace {

using nlohmann::json;

constexpr const char* kFormatTag = "evoxcgraph";
constexpr int kMaxRegionDepth = kMaxNestingDepth;  // the shared budget of core/limits.h

// Attribute kinds as the JSON "kind" field spells them.
const char* json_kind(AttrKind k) {
  switch (k) {
    case AttrKind::None: return "none";
    case AttrKind::Bool: return "bool";
    case AttrKind::Int: return "int";
    case AttrKind::Float: return "float";
    case AttrKind::String: return "string";
    case AttrKind::Ints: return "ints";
    case AttrKind::Floats: return "floats";
    case AttrKind::DType: return "dtype";
    case AttrKind::Shape: return "shape";
    case AttrKind::Tensor: return "tensor";
  }
  return "?";
}

// ---- Writing ----

json float_json(double v) {
  if (std::isfinite(v)) return v;
  return irtext::format_float(v);  // JSON has no NaN or infinity
}

json dim_json(const DimExpr& d) {
  if (d.is_const()) return d.value();
  return d.to_string();
}

json attr_json(const Attribute& a) {
  json j;
  j["kind"] = json_kind(attr_kind(a));
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
        } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t>) {
          j["value"] = v;
        } else if constexpr (std::is_same_v<T, double>) {
          j["value"] = float_json(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          // JSON strings must be UTF-8; other byte strings travel as hex to stay exact.
          if (irtext::valid_utf8(v)) {
            j["value"] = v;
          } else {
            j["hex"] = irtext::hex_encode(v.data(), v.size());
          }
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          j["value"] = v;
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          json arr = json::array();
          for (double d : v) arr.push_back(float_json(d));
          j["value"] = arr;
        } else if constexpr (std::is_same_v<T, DType>) {
          j["value"] = std::string(dtype_short_name(v));
        } else if constexpr (std::is_same_v<T, Shape>) {
          json arr = json::array();
          for (const auto& d : v) arr.push_back(dim_json(d));
          j["value"] = arr;
        } else {
          static_assert(std::is_same_v<T, Tensor>);
          j["value"] = {{"dtype", std::string(dtype_short_name(v.dtype()))},
                        {"shape", v.shape()},
                        {"data", v.nbytes() == 0 ? std::string("0x") : irtext::hex_encode(v.raw_data(), v.nbytes())}};
        }
      },
      a);
  return j;
}

json attrs_json(const AttrMap& m) {
  json j = json::object();
  for (const auto& [k, v] : m) j[k] = attr_json(v);
  return j;
}

json types_json(const std::vector<TensorType>& ts) {
  json arr = json::array();
  for (const auto& t : ts) arr.push_back(t.to_string());
  return arr;
}

// Values get ids per function in definition order: block arguments when their block
// starts, op results before the contents of the op's regions.
class Writer {
 public:
  json function(const Function& f) {
    ids_.clear();
    json j;
    j["name"] = f.name();
    j["results"] = types_json(f.result_types());
    block(f.entry(), j, "@" + f.name(), 0);
    return j;
  }

 private:
  void block(const Block& b, json& j, const std::string& where, int depth) {
    // A graph built in memory is not bounded by a reader; do not write what no reader accepts.
    if (depth > kMaxRegionDepth)
      throw PersistenceError("to_json: " + where + " has regions nested more than " + std::to_string(kMaxRegionDepth) +
                             " deep");
    std::vector<TensorType> args;
    for (const auto& a : b.arguments()) {
      args.push_back(a->type());
      ids_.emplace(a.get(), ids_.size());
    }
    j["args"] = types_json(args);
    json ops = json::array();
    for (const auto& op : b.operations()) ops.push_back(operation(*op, where, depth));
    j["ops"] = std::move(ops);
  }

  json operation(const Operation& op, const std::string& where, int depth) {
    json j;
    j["name"] = op.name();
    json operands = json::array();
    for (const Value* v : op.operands()) {
      auto it = ids_.find(v);
      if (it == ids_.end())
        throw PersistenceError("to_json: evoxc." + op.name() + " in " + where +
                               " uses a value defined outside its function; run verify_structure first");
      operands.push_back(it->second);
    }
    j["operands"] = std::move(operands);
    std::vector<TensorType> results;
    for (const auto& r : op.results()) {
      results.push_back(r->type());
      ids_.emplace(r.get(), ids_.size());
    }
    j["results"] = types_json(results);
    if (!op.attributes().empty()) j["attributes"] = attrs_json(op.attributes());
    if (op.location().known())
      j["loc"] = {{"file", op.location().file}, {"line", op.location().line}, {"column", op.location().column}};
    if (!op.regions().empty()) {
      json regions = json::array();
      for (const auto& r : op.regions()) {
        json rj;
        block(r->block(), rj, where, depth + 1);
        regions.push_back(std::move(rj));
      }
      j["regions"] = std::move(regions);
    }
    return j;
  }

  std::unordered_map<const Value*, size_t> ids_;
};

// ---- Reading ----

class Reader {
 public:
  Graph graph(const json& doc) {
    if (!doc.is_object()) fail("", "the document must be a JSON object, got " + std::string(doc.type_name()));
    std::string tag = str(field(doc, "format", ""), "format");
    if (tag != kFormatTag) fail("format", "expected \"" + std::string(kFormatTag) + "\", got \"" + tag + "\"");
    int64_t version = integer(field(doc, "version", ""), "version");
    if (version != kIrVersion)
      fail("version", "the file has format version " + std::to_string(version) + ", but this build reads version " +
                          std::to_string(kIrVersion) + "; re-export the graph with a matching evoxc");
    TreeDef inputs = tree(field(doc, "inputs", ""), "inputs");
    TreeDef outputs = tree(field(doc, "outputs", ""), "outputs");
    AttrMap statics;
    if (doc.contains("statics")) statics = attrs(doc["statics"], "statics");
    const json& mj = field(doc, "module", "");
    std::string name = str(field(mj, "name", "module"), "module.name");
    auto module = std::make_shared<Module>(name, static_cast<int>(version));
    const json& fs = array(field(mj, "functions", "module"), "module.functions");
    std::unordered_set<std::string> names;
    for (size_t i = 0; i < fs.size(); ++i) {
      std::string path = "module.functions[" + std::to_string(i) + "]";
      std::string fname = str(field(fs[i], "name", path), path + ".name");
      if (!names.insert(fname).second) fail(path + ".name", "function @" + fname + " is defined twice");
      Function& f = module->add_function(fname);
      f.result_types() = types(field(fs[i], "results", path), path + ".results");
      values_.clear();
      visible_.clear();
      block(fs[i], f.entry(), path, 0);
    }
    return Graph(std::move(module), std::move(inputs), std::move(outputs), std::move(statics));
  }

 private:
  [[noreturn]] static void fail(const std::string& path, const std::string& msg) {
    throw PersistenceError(".evoxcgraph: " + (path.empty() ? std::string("document") : path) + ": " + msg);
  }

  static const json& field(const json& obj, const char* key, const std::string& path) {
    if (!obj.is_object()) fail(path, "expected a JSON object, got " + std::string(obj.type_name()));
    auto it = obj.find(key);
    if (it == obj.end()) fail(path, std::string("missing key \"") + key + "\"");
    return *it;
  }
  static std::string str(const json& j, const std::string& path) {
    if (!j.is_string()) fail(path, "expected a string, got " + std::string(j.type_name()));
    return j.get<std::string>();
  }
  static int64_t integer(const json& j, const std::string& path) {
    if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      fail(path, "integer out of range for int64");
    if (!j.is_number_integer()) fail(path, "expected an integer, got " + std::string(j.type_name()));
    return j.get<int64_t>();
  }
  static const json& array(const json& j, const std::string& path) {
    if (!j.is_array()) fail(path, "expected an array, got " + std::string(j.type_name()));
    return j;
  }
  static double floating(const json& j, const std::string& path) {
    if (j.is_number()) return j.get<double>();
    if (j.is_string()) {
      auto d = irtext::parse_float(j.get<std::string>());
      if (d) return *d;
    }
    std::string got = j.dump();
    if (got.size() > 80) got = got.substr(0, 80) + "...";
    fail(path, "expected a number or one of \"nan\", \"inf\", \"-inf\", got " + got);
  }
  static TreeDef tree(const json& j, const std::string& path) {
    try {
      return parse_tree_structure(str(j, path));
    } catch (const ParseError& e) {
      fail(path, e.what());
    }
  }
  static TensorType type(const json& j, const std::string& path) {
    std::string err;
    auto t = irtext::parse_tensor_type(str(j, path), &err);
    if (!t) fail(path, err);
    return *t;
  }
  static std::vector<TensorType> types(const json& j, const std::string& path) {
    std::vector<TensorType> out;
    const json& a = array(j, path);
    for (size_t i = 0; i < a.size(); ++i) out.push_back(type(a[i], path + "[" + std::to_string(i) + "]"));
    return out;
  }
  static DType dtype(const json& j, const std::string& path) {
    std::string s = str(j, path);
    auto d = parse_dtype(s);
    if (!d) fail(path, "unknown dtype \"" + s + "\" (use f32, i64, i1, ...)");
    return *d;
  }

  static AttrMap attrs(const json& j, const std::string& path) {
    if (!j.is_object()) fail(path, "expected an object of attributes, got " + std::string(j.type_name()));
    AttrMap m;
    for (auto it = j.begin(); it != j.end(); ++it) m[it.key()] = attr(it.value(), path + "." + it.key());
    return m;
  }

  static Attribute attr(const json& j, const std::string& path) {
    std::string kind = str(field(j, "kind", path), path + ".kind");
    std::string vpath = path + ".value";
    if (kind == "none") return std::monostate{};
    if (kind == "string" && j.is_object() && j.contains("hex")) {
      std::string bytes, err;
      if (!irtext::hex_decode(str(j["hex"], path + ".hex"), bytes, &err)) fail(path + ".hex", err);
      return bytes;
    }
    const json& v = field(j, "value", path);
    if (kind == "bool") {
      if (!v.is_boolean()) fail(vpath, "expected true or false, got " + std::string(v.type_name()));
      return v.get<bool>();
    }
    if (kind == "int") return integer(v, vpath);
    if (kind == "float") return floating(v, vpath);
    if (kind == "string") return str(v, vpath);
    if (kind == "ints") {
      std::vector<int64_t> out;
      for (size_t i = 0; i < array(v, vpath).size(); ++i)
        out.push_back(integer(v[i], vpath + "[" + std::to_string(i) + "]"));
      return out;
    }
    if (kind == "floats") {
      std::vector<double> out;
      for (size_t i = 0; i < array(v, vpath).size(); ++i)
        out.push_back(floating(v[i], vpath + "[" + std::to_string(i) + "]"));
      return out;
    }
    if (kind == "dtype") return dtype(v, vpath);
    if (kind == "shape") return shape(v, vpath);
    if (kind == "tensor") {
      DType dt = dtype(field(v, "dtype", vpath), vpath + ".dtype");
      Shape s = shape(field(v, "shape", vpath), vpath + ".shape");
      std::string data = str(field(v, "data", vpath), vpath + ".data");
      std::string err;
      auto t = irtext::make_dense_tensor(TensorType(dt, s), data, &err);
      if (!t) fail(vpath, err);
      return std::move(*t);
    }
    fail(path + ".kind", "unknown attribute kind \"" + kind +
                             "\" (expected none, bool, int, float, string, ints, floats, dtype, shape, tensor)");
  }

  static Shape shape(const json& j, const std::string& path) {
    std::vector<DimExpr> dims;
    const json& a = array(j, path);
    for (size_t i = 0; i < a.size(); ++i) {
      std::string p = path + "[" + std::to_string(i) + "]";
      if (a[i].is_number_integer()) {
        dims.emplace_back(integer(a[i], p));
      } else {
        std::string s = str(a[i], p);
        std::string why;
        auto d = parse_dim_expr(s, &why);
        if (!d) {
          if (s.size() > 80) s = s.substr(0, 80) + "...";
          fail(p, "bad extent \"" + s + "\" (expected a number, a symbol or an expression like (2*B+1)): " + why);
        }
        dims.push_back(*d);
      }
    }
    return Shape(std::move(dims));
  }

  void block(const json& j, Block& b, const std::string& path, int depth) {
    if (depth > kMaxRegionDepth) fail(path, "regions nested more than " + std::to_string(kMaxRegionDepth) + " deep");
    std::vector<const Value*> added;
    std::vector<TensorType> args = types(field(j, "args", path), path + ".args");
    for (auto& t : args) {
      Value* v = b.add_argument(std::move(t));
      values_.push_back(v);
      visible_.insert(v);
      added.push_back(v);
    }
    const json& ops = array(field(j, "ops", path), path + ".ops");
    for (size_t i = 0; i < ops.size(); ++i) {
      std::string p = path + ".ops[" + std::to_string(i) + "]";
      const json& oj = ops[i];
      std::string name = str(field(oj, "name", p), p + ".name");
      std::vector<Value*> operands;
      const json& oa = array(field(oj, "operands", p), p + ".operands");
      for (size_t k = 0; k < oa.size(); ++k) {
        std::string kp = p + ".operands[" + std::to_string(k) + "]";
        int64_t id = integer(oa[k], kp);
        if (id < 0 || static_cast<size_t>(id) >= values_.size() || !visible_.count(values_[static_cast<size_t>(id)]))
          fail(kp, "value id " + std::to_string(id) + " used by " + name +
                       " is not defined before it in this block or an enclosing one");
        operands.push_back(values_[static_cast<size_t>(id)]);
      }
      std::vector<TensorType> results = types(field(oj, "results", p), p + ".results");
      AttrMap attributes;
      if (oj.contains("attributes")) attributes = attrs(oj["attributes"], p + ".attributes");
      Location loc;
      if (oj.contains("loc")) {
        const json& lj = oj["loc"];
        loc.file = str(field(lj, "file", p + ".loc"), p + ".loc.file");
        int64_t line = integer(field(lj, "line", p + ".loc"), p + ".loc.line");
        int64_t col = integer(field(lj, "column", p + ".loc"), p + ".loc.column");
        if (line < INT32_MIN || line > INT32_MAX || col < INT32_MIN || col > INT32_MAX)
          fail(p + ".loc", "line or column out of range");
        loc.line = static_cast<int>(line);
        loc.column = static_cast<int>(col);
      }
      const json* regions = nullptr;
      if (oj.contains("regions")) regions = &array(oj["regions"], p + ".regions");
      const OpInfo* info = find_op_info(name);
      if (!info) fail(p + ".name", "unknown op '" + name + "'; `evoxc ops` lists the ops this build knows");
      Operation* op = b.append(*info, std::move(operands), results, std::move(attributes), std::move(loc),
                               regions ? regions->size() : 0);
      for (const auto& r : op->results()) values_.push_back(r.get());
      for (size_t r = 0; regions && r < regions->size(); ++r)
        block((*regions)[r], op->region(r).block(), p + ".regions[" + std::to_string(r) + "]", depth + 1);
      for (const auto& r : op->results()) {
        visible_.insert(r.get());
        added.push_back(r.get());
      }
    }
    for (const Value* v : added) visible_.erase(v);
  }

  std::vector<Value*> values_;
  std::unordered_set<const Value*> visible_;
};

}  // namespace

std::string Graph::to_json() const {
  const Module& m = module();
  json doc;
  doc["format"] = kFormatTag;
  doc["version"] = m.version();
  doc["inputs"] = inputs_.structure_string();
  doc["outputs"] = outputs_.structure_string();
  doc["statics"] = attrs_json(statics_);
  json functions = json::array();
  Writer w;
  for (const auto& f : m.functions()) functions.push_back(w.function(*f));
  doc["module"] = {{"name", m.name()}, {"functions", std::move(functions)}};
  try {
    return doc.dump(1) + "\n";
  } catch (const json::exception& e) {
    throw PersistenceError(std::string("to_json: a name or location is not valid UTF-8 (") + e.what() + ")");
  }
}

Graph Graph::from_json(std::string_view text) {
  // nlohmann's document copy, dump and comparisons recurse per level: refuse deep text before parsing.
  if (auto at = find_excess_json_nesting(text))
    throw PersistenceError(".evoxcgraph: JSON arrays and objects nested more than " + std::to_string(kMaxJsonDepth) +
                           " deep at byte " + std::to_string(*at));
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw PersistenceError(std::string(".evoxcgraph: not valid JSON (truncated or corrupted file?): ") + e.what());
  }
  try {
    return Reader().graph(doc);
  } catch (const PersistenceError&) {
    throw;
  } catch (const json::exception& e) {
    throw PersistenceError(std::string(".evoxcgraph: malformed document: ") + e.what());
  } catch (const Error& e) {
    throw PersistenceError(std::string(".evoxcgraph: malformed document: ") + e.what());
  }
}

void Graph::save(const std::string& path) const { write_file_atomic(path, to_json()); }

Graph Graph::load(const std::string& path) {
  // Regular files only, at most max_file_bytes(): PersistenceError naming the path otherwise.
  std::string text = read_file(path);
  try {
    return from_json(text);
  } catch (const PersistenceError& e) {
    throw PersistenceError("load('" + path + "'): " + e.what());
  }
}

}  // namespace evoxc
