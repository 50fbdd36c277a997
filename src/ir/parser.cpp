// The EvoXIR text parser (Graph::parse) and the tree-structure parser (grammar in docs/ir.md).
#include <charconv>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "evoxc/core/error.h"
#include "evoxc/core/limits.h"
#include "evoxc/ir/graph.h"
#include "ir_text.h"

namespace evoxc {
namespace {

// Deep nesting is legal but a hostile text must not exhaust the stack: regions and tree
// containers share the one nesting budget of core/limits.h.
constexpr int kMaxRegionDepth = kMaxNestingDepth;
constexpr int kMaxTreeDepth = kMaxNestingDepth;

// The text is parsed into this syntax tree first and turned into IR afterwards, because
// an op's result types are written after its regions, while Block::append needs them
// before the regions can be filled.
struct OpAst;
struct BlockAst {
  std::vector<std::string> arg_names;
  std::vector<size_t> arg_pos;
  std::vector<TensorType> arg_types;
  std::vector<OpAst> ops;
};
struct OpAst {
  size_t pos = 0;
  std::vector<std::string> results;
  std::vector<size_t> result_pos;
  std::string name;
  std::vector<std::string> operands;
  std::vector<size_t> operand_pos;
  AttrMap attrs;
  std::vector<BlockAst> regions;
  std::vector<TensorType> types;
  Location loc;
};
struct FuncAst {
  size_t pos = 0;
  std::string name;
  BlockAst body;
  std::vector<TensorType> results;
};

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

class Cursor {
 public:
  Cursor(std::string_view s, std::string what) : s_(s), what_(std::move(what)) {}

  [[noreturn]] void fail(size_t pos, const std::string& msg) const {
    throw ParseError(what_ + " at " + where(pos) + ": " + msg);
  }
  // "line:column" (1-based) of a byte offset.
  std::string where(size_t pos) const {
    int line = 1;
    int col = 1;
    for (size_t i = 0; i < pos && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return std::to_string(line) + ":" + std::to_string(col);
  }
  [[noreturn]] void expected(const std::string& what) {
    skip_ws();
    fail(pos_, "expected " + what + ", found " + found());
  }

  // A short description of the text at the cursor for error messages.
  std::string found() const {
    if (pos_ >= s_.size()) return "end of input";
    size_t end = pos_;
    while (end < s_.size() && end - pos_ < 16 && !std::isspace(static_cast<unsigned char>(s_[end]))) ++end;
    if (end == pos_) ++end;
    return irtext::quote(s_.substr(pos_, end - pos_));
  }

  void skip_ws() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }
  bool at_end() {
    skip_ws();
    return pos_ >= s_.size();
  }
  size_t pos() {
    skip_ws();
    return pos_;
  }
  void set_pos(size_t p) { pos_ = p; }
  char peek() {
    skip_ws();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool accept(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool accept(std::string_view t) {
    skip_ws();
    if (s_.substr(pos_, t.size()) != t) return false;
    pos_ += t.size();
    return true;
  }
  void expect(char c, const std::string& what) {
    if (!accept(c)) expected(std::string("'") + c + "' " + what);
  }
  bool peek_ident() { return is_ident_start(peek()); }
  std::string ident(const std::string& what) {
    if (!peek_ident()) expected(what);
    size_t start = pos_;
    while (pos_ < s_.size() && is_ident_char(s_[pos_])) ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }
  bool accept_keyword(std::string_view kw) {
    skip_ws();
    if (s_.substr(pos_, kw.size()) != kw) return false;
    if (pos_ + kw.size() < s_.size() && is_ident_char(s_[pos_ + kw.size()])) return false;
    pos_ += kw.size();
    return true;
  }
  void expect_keyword(std::string_view kw) {
    if (!accept_keyword(kw)) expected("'" + std::string(kw) + "'");
  }

  // A quoted name, key, location or tree structure: .evoxcgraph stores these as JSON strings,
  // so the text may hold only what JSON can (string attribute values may hold any bytes).
  std::string text_lit(const std::string& what) {
    size_t start = pos();
    std::string s = string_lit(what);
    if (!irtext::valid_utf8(s)) fail(start, what + " must be valid UTF-8 (.evoxcgraph stores it as a JSON string)");
    return s;
  }

  std::string string_lit(const std::string& what) {
    if (peek() != '"') expected(what);
    size_t start = pos_++;
    std::string out;
    while (true) {
      if (pos_ >= s_.size() || s_[pos_] == '\n') fail(start, "unterminated string (missing closing '\"')");
      char c = s_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) fail(start, "unterminated string (missing closing '\"')");
      char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'x': {
          std::string byte;
          std::string err;
          if (pos_ + 2 > s_.size() || !irtext::hex_decode("0x" + std::string(s_.substr(pos_, 2)), byte, &err))
            fail(pos_ - 2, "bad \\x escape in string (expected two hex digits)");
          pos_ += 2;
          out += byte;
          break;
        }
        default: fail(pos_ - 2, std::string("unknown escape '\\") + e + "' in string (use \\\" \\\\ \\n \\t \\xHH)");
      }
    }
  }

  int64_t int_lit(const std::string& what) {
    skip_ws();
    size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    int64_t v = 0;
    auto r = std::from_chars(s_.data() + start, s_.data() + pos_, v);
    if (r.ec == std::errc::result_out_of_range) fail(start, "integer out of range for int64");
    if (r.ec != std::errc() || r.ptr != s_.data() + pos_) {
      pos_ = start;
      expected(what);
    }
    return v;
  }

  // Scans a number ("-3", "0.5", "1e-07", "nan", "-inf", "nan(0x...)") and returns it as
  // an int or a float attribute.
  Attribute number() {
    skip_ws();
    size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    bool is_float = false;
    if (pos_ < s_.size() && is_ident_start(s_[pos_])) {
      while (pos_ < s_.size() && is_ident_char(s_[pos_])) ++pos_;
      if (s_.substr(start, pos_ - start) == "nan" && pos_ < s_.size() && s_[pos_] == '(') {
        while (pos_ < s_.size() && s_[pos_] != ')' && s_[pos_] != '\n') ++pos_;
        if (pos_ < s_.size() && s_[pos_] == ')') ++pos_;
      }
      is_float = true;
    } else {
      while (pos_ < s_.size()) {
        char c = s_[pos_];
        if (std::isdigit(static_cast<unsigned char>(c))) {
          ++pos_;
        } else if (c == '.' || c == 'e' || c == 'E') {
          is_float = true;
          ++pos_;
        } else if ((c == '+' || c == '-') && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E')) {
          ++pos_;
        } else {
          break;
        }
      }
    }
    std::string_view text = s_.substr(start, pos_ - start);
    if (is_float) {
      auto d = irtext::parse_float(text);
      if (!d) fail(start, "bad float literal " + irtext::quote(text) + " (expected 1.0, 1e-07, nan, inf, -inf)");
      return *d;
    }
    int64_t v = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec == std::errc::result_out_of_range) fail(start, "integer " + std::string(text) + " out of range for int64");
    if (r.ec != std::errc() || r.ptr != text.data() + text.size()) {
      pos_ = start;
      expected("a number");
    }
    return v;
  }

  // Reads "<...>" after a keyword such as tensor, shape or dense, returning the text inside.
  std::string_view angle_body(const std::string& what) {
    skip_ws();
    size_t start = pos_;
    if (pos_ >= s_.size() || s_[pos_] != '<') expected("'<' after " + what);
    size_t end = pos_ + 1;
    while (end < s_.size() && s_[end] != '>' && s_[end] != '\n') ++end;
    if (end >= s_.size() || s_[end] != '>') fail(start, "unterminated " + what + " (missing '>')");
    pos_ = end + 1;
    return s_.substr(start + 1, end - start - 1);
  }

  TensorType type(const std::string& what) {
    skip_ws();
    size_t start = pos_;
    if (!accept_keyword("tensor")) expected(what + " (a type like tensor<4x8xf32>)");
    std::string_view body = angle_body("tensor type");
    std::string err;
    auto t = irtext::parse_tensor_type("tensor<" + std::string(body) + ">", &err);
    if (!t) fail(start, err);
    return *t;
  }

  std::string_view text() const { return s_; }

 private:
  std::string_view s_;
  std::string what_;
  size_t pos_ = 0;
};

class TextParser {
 public:
  explicit TextParser(std::string_view s) : c_(s, "EvoXIR parse error") {}

  Graph parse() {
    c_.expect_keyword("module");
    c_.expect('@', "before the module name");
    std::string mname = c_.peek() == '"' ? c_.text_lit("a module name") : c_.ident("a module name");
    c_.expect_keyword("version");
    size_t vpos = c_.pos();
    int64_t version = c_.int_lit("a version number");
    if (version != kIrVersion)
      throw PersistenceError("EvoXIR text at " + c_.where(vpos) + " has format version " + std::to_string(version) +
                             ", but this build reads version " + std::to_string(kIrVersion) +
                             "; re-export the graph with a matching evoxc");
    std::optional<TreeDef> inputs, outputs;
    AttrMap statics;
    if (c_.accept_keyword("attributes")) module_attributes(inputs, outputs, statics);
    c_.expect('{', "to open the module body");
    std::vector<FuncAst> funcs;
    std::unordered_set<std::string> fnames;
    while (!c_.accept('}')) {
      if (c_.at_end()) c_.expected("'}' to close the module body");
      funcs.push_back(function());
      if (!fnames.insert(funcs.back().name).second)
        c_.fail(funcs.back().pos, "function @" + funcs.back().name + " is defined twice");
    }
    if (!c_.at_end()) c_.expected("end of input after the module");

    auto module = std::make_shared<Module>(mname, static_cast<int>(version));
    const FuncAst* main = nullptr;
    for (const auto& f : funcs) {
      build_function(f, module->add_function(f.name));
      if (f.name == "main") main = &f;
    }
    if (!inputs || !outputs) {
      // Hand-written text may leave the trees out: one leaf per argument / result.
      if (!main) c_.fail(0, "module has no @main, so 'inputs' and 'outputs' must be given as module attributes");
      if (!inputs) inputs = TreeDef::tuple(std::vector<TreeDef>(main->body.arg_types.size(), TreeDef(LeafMark{})));
      if (!outputs)
        outputs = main->results.size() == 1
                      ? TreeDef(LeafMark{})
                      : TreeDef::tuple(std::vector<TreeDef>(main->results.size(), TreeDef(LeafMark{})));
    }
    return Graph(std::move(module), std::move(*inputs), std::move(*outputs), std::move(statics));
  }

 private:
  void module_attributes(std::optional<TreeDef>& inputs, std::optional<TreeDef>& outputs, AttrMap& statics) {
    c_.expect('{', "to open the module attributes");
    if (c_.accept('}')) return;
    std::unordered_set<std::string> seen;
    do {
      size_t kpos = c_.pos();
      std::string key = dict_key();
      if (!seen.insert(key).second) c_.fail(kpos, "module attribute '" + key + "' is given twice");
      c_.expect('=', "after the attribute name");
      if (key == "inputs" || key == "outputs") {
        size_t vpos = c_.pos();
        std::string text = c_.text_lit("a quoted tree structure like \"(*, *)\"");
        try {
          (key == "inputs" ? inputs : outputs) = parse_tree_structure(text);
        } catch (const ParseError& e) {
          c_.fail(vpos, "bad " + key + " structure: " + e.what());
        }
      } else if (key == "statics") {
        statics = dict();
      } else {
        c_.fail(kpos, "unknown module attribute '" + key + "' (expected inputs, outputs or statics)");
      }
    } while (c_.accept(','));
    c_.expect('}', "to close the module attributes");
  }

  FuncAst function() {
    FuncAst f;
    f.pos = c_.pos();
    c_.expect_keyword("func");
    c_.expect('@', "before the function name");
    f.name = c_.peek() == '"' ? c_.text_lit("a function name") : c_.ident("a function name");
    c_.expect('(', "to open the argument list");
    block_args(f.body);
    if (!c_.accept("->")) c_.expected("'->' before the result types");
    f.results = result_types();
    c_.expect('{', "to open the function body");
    block_ops(f.body, 0);
    return f;
  }

  // After '(': "%a: T, %b: T)".
  void block_args(BlockAst& b) {
    if (c_.accept(')')) return;
    do {
      b.arg_pos.push_back(c_.pos());
      b.arg_names.push_back(value_name("an argument name like %arg0"));
      c_.expect(':', "after the argument name");
      b.arg_types.push_back(c_.type("an argument type"));
    } while (c_.accept(','));
    c_.expect(')', "to close the argument list");
  }

  std::vector<TensorType> result_types() {
    std::vector<TensorType> ts;
    if (!c_.accept('(')) {
      ts.push_back(c_.type("a result type"));
      return ts;
    }
    if (c_.accept(')')) return ts;
    do {
      ts.push_back(c_.type("a result type"));
    } while (c_.accept(','));
    c_.expect(')', "to close the result types");
    return ts;
  }

  std::string value_name(const std::string& what) {
    if (c_.peek() != '%') c_.expected(what);
    c_.accept('%');
    std::string_view s = c_.text();
    size_t start = c_.pos();
    size_t end = start;
    while (end < s.size() && (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_')) ++end;
    if (end == start) c_.expected("a value name after '%'");
    c_.set_pos(end);
    return "%" + std::string(s.substr(start, end - start));
  }

  // After '{': ops up to and including the closing '}'.
  void block_ops(BlockAst& b, int depth) {
    while (!c_.accept('}')) {
      if (c_.at_end()) c_.expected("'}' to close the block");
      b.ops.push_back(operation(depth));
    }
  }

  OpAst operation(int depth) {
    OpAst op;
    op.pos = c_.pos();
    if (c_.peek() == '%') {
      do {
        op.result_pos.push_back(c_.pos());
        op.results.push_back(value_name("a result name"));
      } while (c_.accept(','));
      c_.expect('=', "after the result names");
    }
    size_t npos = c_.pos();
    if (!c_.peek_ident()) c_.expected("an op name like evoxc.add");
    std::string full = c_.ident("an op name");
    if (full == "evoxc." && c_.text().substr(c_.pos(), 1) == "\"") {
      op.name = c_.text_lit("a quoted op name");
    } else if (full.size() > 6 && full.substr(0, 6) == "evoxc.") {
      op.name = full.substr(6);
    } else {
      c_.fail(npos, "expected an op name starting with 'evoxc.', found '" + full + "'");
    }
    c_.expect('(', "to open the operand list of evoxc." + op.name);
    if (!c_.accept(')')) {
      do {
        op.operand_pos.push_back(c_.pos());
        op.operands.push_back(value_name("an operand like %0"));
      } while (c_.accept(','));
      c_.expect(')', "to close the operand list of evoxc." + op.name);
    }
    if (c_.accept_keyword("attributes")) op.attrs = dict();
    if (c_.accept_keyword("regions")) {
      if (depth >= kMaxRegionDepth)
        c_.fail(npos, "regions nested more than " + std::to_string(kMaxRegionDepth) + " deep");
      c_.expect('{', "to open the regions of evoxc." + op.name);
      while (!c_.accept('}')) {
        BlockAst b;
        c_.expect('(', "to open the argument list of a region (or '}' to end the regions)");
        block_args(b);
        c_.expect('{', "to open the region body");
        block_ops(b, depth + 1);
        op.regions.push_back(std::move(b));
      }
    }
    if (c_.accept(':')) op.types = result_types();
    if (op.types.size() != op.results.size())
      c_.fail(op.pos, "evoxc." + op.name + " names " + std::to_string(op.results.size()) + " results but gives " +
                          std::to_string(op.types.size()) + " result types");
    if (c_.accept_keyword("loc")) {
      c_.expect('(', "after loc");
      op.loc.file = c_.text_lit("a quoted file name");
      c_.expect(':', "after the file name");
      op.loc.line = small_int("a line number");
      c_.expect(':', "after the line number");
      op.loc.column = small_int("a column number");
      c_.expect(')', "to close loc(...)");
    }
    return op;
  }

  int small_int(const std::string& what) {
    size_t p = c_.pos();
    int64_t v = c_.int_lit(what);
    if (v < INT32_MIN || v > INT32_MAX) c_.fail(p, what + " out of range");
    return static_cast<int>(v);
  }

  std::string dict_key() {
    if (c_.peek() == '"') return c_.text_lit("an attribute name");
    return c_.ident("an attribute name (an identifier or a quoted string)");
  }

  // {k = v, ...}; the opening '{' is still to be read.
  AttrMap dict() {
    AttrMap m;
    c_.expect('{', "to open the attribute dictionary");
    if (c_.accept('}')) return m;
    do {
      size_t kpos = c_.pos();
      std::string key = dict_key();
      c_.expect('=', "after attribute name '" + key + "'");
      Attribute v = value();
      if (!m.emplace(key, std::move(v)).second) c_.fail(kpos, "attribute '" + key + "' is given twice");
    } while (c_.accept(','));
    c_.expect('}', "',' or '}' in the attribute dictionary");
    return m;
  }

  Attribute value() {
    char c = c_.peek();
    if (c == '"') return c_.string_lit("a string");
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return c_.number();
    if (c == '[') return list();
    if (!c_.peek_ident()) c_.expected("an attribute value");
    size_t start = c_.pos();
    std::string id = c_.ident("an attribute value");
    if (id == "none") return std::monostate{};
    if (id == "true") return true;
    if (id == "false") return false;
    if (id == "nan" || id == "inf") {
      c_.set_pos(start);
      return c_.number();
    }
    if (id == "f64" && c_.peek() == '[') {
      c_.accept('[');
      c_.expect(']', "after f64[ (an empty float list is written f64[])");
      return std::vector<double>{};
    }
    if (id == "shape") {
      std::string_view body = c_.angle_body("shape");
      std::string err;
      auto s = irtext::parse_shape_dims(body, &err);
      if (!s) c_.fail(start, err);
      return std::move(*s);
    }
    if (id == "dense") {
      c_.expect('<', "after dense");
      TensorType t = c_.type("the dense tensor's type");
      c_.expect(',', "after the dense tensor's type");
      size_t hpos = c_.pos();
      std::string hex = c_.string_lit("the dense data as a quoted \"0x...\" hex string");
      c_.expect('>', "to close dense<...>");
      std::string err;
      auto tensor = irtext::make_dense_tensor(t, hex, &err);
      if (!tensor) c_.fail(hpos, err);
      return std::move(*tensor);
    }
    if (auto dt = parse_dtype(id)) return *dt;
    c_.fail(start, "unknown attribute value '" + id +
                       "' (expected none, true, false, a number, a string, a list, a dtype, shape<...> or dense<...>)");
  }

  Attribute list() {
    c_.expect('[', "to open the list");
    std::vector<int64_t> ints;
    std::vector<double> floats;
    bool any_float = false;
    bool any_int = false;
    if (!c_.accept(']')) {
      do {
        size_t p = c_.pos();
        char c = c_.peek();
        if (!(c == '-' || std::isdigit(static_cast<unsigned char>(c)) || c == 'n' || c == 'i'))
          c_.expected("a number in the list");
        Attribute v = c_.number();
        if (const auto* i = std::get_if<int64_t>(&v)) {
          any_int = true;
          ints.push_back(*i);
        } else {
          any_float = true;
          floats.push_back(std::get<double>(v));
        }
        if (any_int && any_float)
          c_.fail(p, "a list mixes ints and floats; write every element of a float list with a '.' (1.0)");
      } while (c_.accept(','));
      c_.expect(']', "',' or ']' in the list");
    }
    if (any_float) return floats;
    return ints;
  }

  // ---- Building IR from the syntax tree ----

  Value* lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return f->second;
    }
    return nullptr;
  }
  void define(const std::string& name, Value* v, size_t pos) {
    if (lookup(name)) c_.fail(pos, "value " + name + " is defined twice (names must be unique in a function)");
    scopes_.back()[name] = v;
  }

  void build_function(const FuncAst& f, Function& fn) {
    scopes_.clear();
    fn.result_types() = f.results;
    build_block(f.body, fn.entry());
  }

  void build_block(const BlockAst& a, Block& b) {
    scopes_.emplace_back();
    for (size_t i = 0; i < a.arg_names.size(); ++i)
      define(a.arg_names[i], b.add_argument(a.arg_types[i]), a.arg_pos[i]);
    for (const auto& op : a.ops) build_op(op, b);
    scopes_.pop_back();
  }

  void build_op(const OpAst& a, Block& b) {
    std::vector<Value*> operands;
    for (size_t i = 0; i < a.operands.size(); ++i) {
      Value* v = lookup(a.operands[i]);
      if (!v)
        c_.fail(a.operand_pos[i], "use of undefined value " + a.operands[i] + " in evoxc." + a.name +
                                      " (a value must be defined earlier in the same block or an enclosing one)");
      operands.push_back(v);
    }
    const OpInfo* info = find_op_info(a.name);
    if (!info) c_.fail(a.pos, "unknown op evoxc." + a.name + "; `evoxc ops` lists the ops this build knows");
    Operation* op = b.append(*info, std::move(operands), a.types, a.attrs, a.loc, a.regions.size());
    for (size_t i = 0; i < a.regions.size(); ++i) build_block(a.regions[i], op->region(i).block());
    for (size_t i = 0; i < a.results.size(); ++i) define(a.results[i], op->result(i), a.result_pos[i]);
  }

  Cursor c_;
  std::vector<std::unordered_map<std::string, Value*>> scopes_;
};

class TreeParser {
 public:
  explicit TreeParser(std::string_view s) : c_(s, "tree structure " + irtext::quote(s)) {}
  TreeDef parse() {
    TreeDef t = tree(0);
    if (!c_.at_end()) c_.expected("end of the tree structure");
    return t;
  }

 private:
  TreeDef tree(int depth) {
    // `depth` containers enclose this node; opening one more must stay within the budget.
    char next = c_.peek();
    if (depth >= kMaxTreeDepth && (next == '(' || next == '[' || next == '{'))
      c_.fail(c_.pos(), "containers nested more than " + std::to_string(kMaxTreeDepth) + " deep");
    if (c_.accept('*')) return TreeDef(LeafMark{});
    if (c_.accept_keyword("None")) return TreeDef::none();
    if (c_.accept('(')) {
      std::vector<TreeDef> items;
      bool trailing_comma = false;
      while (!c_.accept(')')) {
        items.push_back(tree(depth + 1));
        trailing_comma = c_.accept(',');
        if (!trailing_comma && c_.peek() != ')') c_.expected("',' or ')' in a tuple");
      }
      if (items.size() == 1 && !trailing_comma) c_.expected("a trailing comma in a one-element tuple, (*,)");
      return TreeDef::tuple(std::move(items));
    }
    if (c_.accept('[')) {
      std::vector<TreeDef> items;
      while (!c_.accept(']')) {
        items.push_back(tree(depth + 1));
        if (!c_.accept(',') && c_.peek() != ']') c_.expected("',' or ']' in a list");
      }
      return TreeDef::list(std::move(items));
    }
    if (c_.accept('{')) {
      std::map<std::string, TreeDef> items;
      while (!c_.accept('}')) {
        size_t kpos = c_.pos();
        std::string key = quoted_key();
        c_.expect(':', "after a dict key");
        if (!items.emplace(key, tree(depth + 1)).second) c_.fail(kpos, "dict key '" + key + "' appears twice");
        if (!c_.accept(',') && c_.peek() != '}') c_.expected("',' or '}' in a dict");
      }
      return TreeDef::dict(std::move(items));
    }
    c_.expected("'*', 'None', '(', '[' or '{'");
  }

  // 'key' as written by TreeDef::structure_string (no escapes: the key runs to the next quote).
  std::string quoted_key() {
    if (c_.peek() != '\'') c_.expected("a dict key in single quotes");
    size_t start = c_.pos() + 1;
    std::string_view s = c_.text();
    size_t end = s.find('\'', start);
    if (end == std::string_view::npos) c_.fail(start - 1, "unterminated dict key (missing closing quote)");
    c_.set_pos(end + 1);
    return std::string(s.substr(start, end - start));
  }

  Cursor c_;
};

}  // namespace

Graph Graph::parse(std::string_view text) { return TextParser(text).parse(); }

TreeDef parse_tree_structure(std::string_view text) { return TreeParser(text).parse(); }

}  // namespace evoxc
