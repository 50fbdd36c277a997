// A fixture for the layering check: core must not include ir, so the check must fail on this tree.
#include "evoxc/ir/ir.h"
