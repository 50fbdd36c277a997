// A fixture for the op-name check: the IR printer owns op names, so a comparison here is allowed.
bool is_return(const Operation& op) { return op.name() == "return"; }
