// A fixture for the op-name check: public headers are scanned, so the comparison below must be reported.
#pragma once
inline bool is_dot(std::string_view op) { return op == "dot"; }  // bad: rule 1
