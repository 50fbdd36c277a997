// A function of this process that compiled code calls by name (through a C ABI), for a JIT linker's symbol table.
#pragma once

namespace evoxc {

struct RuntimeSymbol {
  const char* name;
  void* address;
};

}  // namespace evoxc
