// A fixture for the op-name check: the registry owns op names, so a comparison here is allowed.
bool is_add(std::string_view op) { return op == "add"; }
