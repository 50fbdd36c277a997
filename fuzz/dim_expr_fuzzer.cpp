// Fuzz target: the extent-expression parser (parse_dim_expr). An accepted expression must print
// and parse back to an equal expression with the same text and hash, and evaluate (with every
// symbol bound) to a value or a typed error.
#include <unordered_map>

#include "evoxc/evoxc.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace evoxc;
  if (size < 1) return 0;
  // The first byte picks the symbol values, the rest is the expression.
  const uint8_t seed = data[0];
  std::string_view text = fuzz::as_text(data + 1, size - 1);
  return fuzz::guarded([&] {
    std::optional<DimExpr> e = parse_dim_expr(text);
    if (!e) return;
    std::string printed;
    fuzz::must_succeed("extent print/parse round trip", [&] {
      printed = e->to_string();
      std::optional<DimExpr> back = parse_dim_expr(printed);
      if (!back) fuzz::finding("parse_dim_expr rejects its own print '" + printed + "'");
      if (!(*back == *e)) fuzz::finding("parse(print(e)) != e for '" + printed + "'");
      if (back->hash() != e->hash()) fuzz::finding("equal extents hash differently: '" + printed + "'");
      if (back->to_string() != printed) fuzz::finding("'" + printed + "' prints back as '" + back->to_string() + "'");
    });
    std::vector<std::string> syms;
    e->collect_symbols(syms);
    DimBindings b;
    for (size_t i = 0; i < syms.size(); ++i) b[syms[i]] = static_cast<int64_t>((seed >> (i % 8)) & 7) - 1;
    (void)e->evaluate(b);  // a value, or ValidationError on division by zero or overflow
  });
}
