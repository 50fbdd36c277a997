// Builds the interpreter's kernel table once, from every family's installer, and exposes it for the coverage matrix.
#include "kernel_table.h"

namespace evoxc::interp {

namespace {

// The table and its filling, so one function-local static builds both exactly once.
struct BuiltTable {
  KernelTable table{"interp"};
  BuiltTable() {
    install_elementwise_unary_kernels(table);
    install_elementwise_binary_kernels(table);
    install_elementwise_convert_kernels(table);
    install_reduce_kernels(table);
    install_linalg_kernels(table);
    install_structure_kernels(table);
    install_creation_kernels(table);
    install_scan_kernels(table);
    install_decomposition_kernels(table);
    install_conv_kernels(table);
    install_layout_kernels(table);
    install_random_kernels(table);
    install_indexing_kernels(table);
    install_sort_kernels(table);
    install_row_switch_kernels(table);
    install_postfix_kernels(table);
    install_control_kernels(table);
    install_extension_kernels(table);
    install_sparse_kernels(table);
  }
};

}  // namespace

const KernelTable& kernel_table() {
  static const BuiltTable built;
  return built.table;
}

const RuleTableBase& kernels() { return kernel_table(); }

}  // namespace evoxc::interp
