// A fixture for the layering check: a private header of ir by its src/-relative path is as wrong as a public one.
#include "ir/verify_impl.h"
