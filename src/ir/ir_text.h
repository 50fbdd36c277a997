// Private helpers shared by the EvoXIR printer, parser, JSON persistence and verifier.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "evoxc/ir/ir.h"

namespace evoxc::irtext {

// Printed names of the values of one function, in print order: block arguments (entry
// and every nested region) are %arg0, %arg1, ...; op results are %0, %1, ...; an op's
// results are numbered before the contents of its regions. VerifyError when regions nest
// deeper than kMaxNestingDepth (core/limits.h).
using ValueNames = std::unordered_map<const Value*, std::string>;
void name_function_values(const Function& f, ValueNames& names);
// The name of v, or "%<unknown>" when v does not belong to the named function.
std::string value_name(const ValueNames& names, const Value* v);

// Shortest text that reads back to the same bits and always looks like a float:
// "1.0", "0.5", "1e-07", "-0.0", "nan", "-nan", "inf", "-inf", and "nan(0x7FF8000000000001)"
// for a NaN with a non-default payload.
std::string format_float(double v);
// Reads the forms format_float writes (and any decimal float/int text); nullopt on bad text.
std::optional<double> parse_float(std::string_view s);

// The printed form of an attribute value (docs/ir.md), e.g. "[1, 2]", "shape<4xB>".
std::string attr_text(const Attribute& a);

// A double-quoted string with \" \\ \n \t and \xHH escapes; every byte outside printable
// ASCII is escaped, so the text stays ASCII and reads back byte for byte.
std::string quote(std::string_view s);
// True when s is valid UTF-8 by the rule of nlohmann's strict dump (no overlong forms, no
// surrogates, at most U+10FFFF): what a JSON string in .evoxcgraph can hold.
bool valid_utf8(std::string_view s);
// True when s is [A-Za-z_][A-Za-z0-9_]*, so it may print without quotes.
bool is_identifier(std::string_view s);

// "0x" followed by the bytes in uppercase hex.
std::string hex_encode(const void* data, size_t n);
// Decodes "0x..." into out; false with *err set on bad text.
bool hex_decode(std::string_view s, std::string& out, std::string* err);

// Parses the dims of "4x8", "Bx(2*B+1)", "" (rank 0) split on 'x' outside parentheses.
std::optional<Shape> parse_shape_dims(std::string_view s, std::string* err);
// Parses "tensor<4x8xf32>"; nullopt with *err set on bad text.
std::optional<TensorType> parse_tensor_type(std::string_view s, std::string* err);

// A host tensor of the given static type holding the decoded bytes of `hex`; nullopt with
// *err set when the type is symbolic, too large, or the byte count does not match.
std::optional<Tensor> make_dense_tensor(const TensorType& type, std::string_view hex, std::string* err);

}  // namespace evoxc::irtext
