// A fixture for the op-name check: tools are scanned, so the comparison below must be reported.
bool ends_block(const Operation* op) { return op->name() == "return"; }  // bad: rule 1
