// A fixture for the op-name check: tests are not scanned, so a comparison here is allowed.
bool is_add(const Operation& op) { return op.name() == "add"; }
