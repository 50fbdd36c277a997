// StableHLO lowering rules: the extension ops. stablehlo_call places the functions of the module it carries beside
// @main of the exported module, with every symbol and alias renamed apart, and calls the module's @main.
#include <cctype>
#include <set>
#include <string>
#include <string_view>

#include "backends/stablehlo/emitter.h"

namespace evoxc::stablehlo {

namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; }

// The end of the string literal that starts at s[i] ('"'), past its closing quote.
size_t string_end(std::string_view s, size_t i) {
  for (++i; i < s.size() && s[i] != '"'; ++i)
    if (s[i] == '\\') ++i;
  return std::min(i + 1, s.size());
}

// The end of the balanced group that opens at s[i] ('{' or '('), strings skipped.
size_t group_end(std::string_view s, size_t i) {
  int depth = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '"') {
      i = string_end(s, i);
      continue;
    }
    if (c == '{' || c == '(') ++depth;
    if (c == '}' || c == ')') {
      if (--depth == 0) return i + 1;
    }
    ++i;
  }
  throw BackendError("stablehlo: stablehlo_call: the module text has an unclosed bracket");
}

using NameSet = std::set<std::string, std::less<>>;

// The symbols the module defines: the names of its functions (`func.func [visibility] @name`) and meshes
// (`sdy.mesh @name`). Other @names (a custom call's target: `stablehlo.custom_call @lapack_spotrf_ffi`) are not
// symbols of the module and keep their names.
NameSet defined_symbols(std::string_view text) {
  NameSet out;
  for (std::string_view kw : {std::string_view("func.func"), std::string_view("sdy.mesh")}) {
    for (size_t at = text.find(kw); at != std::string_view::npos; at = text.find(kw, at + 1)) {
      size_t i = at + kw.size();
      for (;;) {  // visibility words between the keyword and the name
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
        if (i < text.size() && text[i] == '@') break;
        size_t e = i;
        while (e < text.size() && std::isalpha(static_cast<unsigned char>(text[e]))) ++e;
        if (e == i) break;
        i = e;
      }
      if (i >= text.size() || text[i] != '@') continue;
      size_t b = ++i;
      if (i < text.size() && text[i] == '"') {
        size_t e = string_end(text, i);
        out.emplace(text.substr(b + 1, e - b - 2));
      } else {
        while (i < text.size() && ident_char(text[i])) ++i;
        out.emplace(text.substr(b, i - b));
      }
    }
  }
  return out;
}

// `text` with every reference to a symbol of `symbols` (@name, @"name") and every alias of `aliases` (#name, !name)
// prefixed, and public functions made private; string literals are left alone.
std::string rename(std::string_view text, const std::string& prefix, const NameSet& symbols, const NameSet& aliases) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '"') {
      size_t e = string_end(text, i);
      out.append(text.substr(i, e - i));
      i = e;
    } else if (c == '@' && i + 1 < text.size() && text[i + 1] == '"') {
      size_t e = string_end(text, i + 1);
      std::string_view name = text.substr(i + 2, e - i - 3);
      out += symbols.count(name) ? "@\"" + prefix : std::string("@\"");
      out.append(text.substr(i + 2, e - i - 2));
      i = e;
    } else if (c == '@' || ((c == '#' || c == '!') && i + 1 < text.size() && ident_char(text[i + 1]))) {
      size_t e = i + 1;
      while (e < text.size() && ident_char(text[e])) ++e;
      std::string_view name = text.substr(i + 1, e - i - 1);
      if (c == '@' ? symbols.count(name) > 0 : aliases.count(name) > 0) {
        out += c;
        out += prefix;
      } else {
        out += c;
      }
      out.append(name);
      i = e;
    } else if (text.substr(i, 16) == "func.func public") {
      out += "func.func private";
      i += 16;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

// Splits module text into the body of its (one) module, between the braces, and its top-level alias definitions
// (`#a = ...`, `!t = ...`): those before the module and those after it. The order matters: MLIR resolves an alias
// used later in the text only where a location is the whole `loc(#a)`; one nested in another location or attribute
// must be defined above its use, and printers put those before the module.
void split_module(std::string_view text, std::string_view* body, std::vector<std::string_view>* before,
                  std::vector<std::string_view>* after) {
  size_t i = 0;
  bool seen_module = false;
  while (i < text.size()) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '/' && text.substr(i, 2) == "//") {
      size_t e = text.find('\n', i);
      i = e == std::string_view::npos ? text.size() : e + 1;
    } else if (c == '#' || c == '!') {
      // An alias definition runs to the end of its line, or further while brackets are open.
      size_t e = i;
      int depth = 0;
      while (e < text.size() && (depth > 0 || text[e] != '\n')) {
        if (text[e] == '"') {
          e = string_end(text, e);
          continue;
        }
        if (text[e] == '(' || text[e] == '{' || text[e] == '<' || text[e] == '[') ++depth;
        if (text[e] == ')' || text[e] == '}' || text[e] == '>' || text[e] == ']') --depth;
        ++e;
      }
      (seen_module ? after : before)->push_back(text.substr(i, e - i));
      i = e;
    } else if (!seen_module && text.substr(i, 6) == "module") {
      seen_module = true;
      size_t j = i + 6;
      // module [@name] [attributes {...}] { body } [loc(...)]
      while (j < text.size() && text[j] != '{') {
        if (text.substr(j, 10) == "attributes") {
          j = text.find('{', j);
          if (j == std::string_view::npos) break;
          j = group_end(text, j);
          continue;
        }
        if (text[j] == '"') {
          j = string_end(text, j);
          continue;
        }
        ++j;
      }
      if (j >= text.size()) throw BackendError("stablehlo: stablehlo_call: the module has no body");
      size_t e = group_end(text, j);
      *body = text.substr(j + 1, e - j - 2);
      i = e;
      while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
      if (text.substr(i, 4) == "loc(") i = group_end(text, i + 3);
    } else {
      throw BackendError("stablehlo: stablehlo_call: unexpected text at the top level of the module: '" +
                         std::string(text.substr(i, 24)) + "'");
    }
  }
  if (!seen_module) throw BackendError("stablehlo: stablehlo_call: the text has no `module`");
}

std::vector<Val> stablehlo_call_rule(Emitter& e, const Operation& op, std::span<const Val> in) {
  const std::string& text = attr_string(op.attributes(), "module", op.name());
  std::string callee = e.embed(text, [&](const std::string& prefix, std::string* functions, std::string* aliases_before,
                                         std::string* aliases_after) {
    std::string_view body;
    std::vector<std::string_view> before, after;
    split_module(text, &body, &before, &after);
    std::vector<std::string_view> alias_lines(before);
    alias_lines.insert(alias_lines.end(), after.begin(), after.end());
    NameSet names;
    for (std::string_view a : alias_lines) {
      size_t e2 = 1;
      while (e2 < a.size() && ident_char(a[e2])) ++e2;
      names.emplace(a.substr(1, e2 - 1));
    }
    NameSet symbols = defined_symbols(body);
    if (!symbols.count("main"))
      throw BackendError("stablehlo: stablehlo_call: the module defines no `func.func public @main`");
    *functions += rename(body, prefix, symbols, names);
    *functions += '\n';
    for (std::string_view a : before) *aliases_before += rename(a, prefix, symbols, names) + "\n";
    for (std::string_view a : after) *aliases_after += rename(a, prefix, symbols, names) + "\n";
    return "@" + prefix + "main";
  });
  std::vector<TensorType> results;
  for (const auto& r : op.results()) results.push_back(r->type());
  return e.op("func.call", in, "{callee = " + callee + "}", results);
}

}  // namespace

void add_extension_rules(Table& t) { t.set("stablehlo_call", stablehlo_call_rule); }

}  // namespace evoxc::stablehlo
