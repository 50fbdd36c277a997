// A fixture for the op-name check: string comparisons that are not op names, which the check must accept.
#include <string>

namespace fixture {

int fine(const Function& f, const Dim& e, const AttrMap& attrs, const std::string& mode, const std::string& key,
         const std::string& name) {
  // if (op.name() == "add") in a comment is not code
  if (mode == "add") return 1;            // scatter's mode: an attribute value, not an op name
  if (f.name() == "main") return 2;       // a function name
  if (e.name().find('x') != 0) return 3;  // a symbol name, searched for a character
  if (attrs.count(name)) return 4;        // an attribute name
  if (key == "inputs") return 5;          // not an op name
  if (name.starts_with("ab")) return 6;   // too short a prefix to name an op
  return 0;
}

}  // namespace fixture
