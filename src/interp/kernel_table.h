// The interpreter's one kernel rule table: op id -> kernel factory, filled once by one installer per family file.
#pragma once

#include "evoxc/core/error.h"
#include "evoxc/ops/rule_table.h"
#include "program.h"

namespace evoxc::interp {

// Builds one op's instruction at prepare: validates its types and attributes (BackendError
// naming the op), records run-time checks and returns the kernel. Zero-copy ops return
// nullptr and set ctx.alias_operand0; constant returns nullptr and sets ctx.constant.
using KernelFactory = KernelPtr (*)(PrepareCtx& ctx);
using KernelTable = RuleTable<KernelFactory, BackendError>;

// The table "interp", built on first use by the installers below; read-only afterwards,
// so any thread may look up in it. get(op) raises "interp: evoxc.<op> at <loc> has no
// interp rule[: <deferral reason>]".
const KernelTable& kernel_table();

// One installer per family file; each sets the rows of the ops its file implements.
void install_elementwise_unary_kernels(KernelTable& t);    // elementwise_unary.cpp
void install_elementwise_binary_kernels(KernelTable& t);   // elementwise_binary.cpp (and comparisons, select, clamp)
void install_elementwise_convert_kernels(KernelTable& t);  // elementwise_convert.cpp (convert, bitcast_convert)
void install_reduce_kernels(KernelTable& t);               // reduce.cpp (reduce_*, argmax, argmin)
void install_linalg_kernels(KernelTable& t);               // linalg.cpp (dot)
void install_structure_kernels(KernelTable& t);            // structure.cpp (transpose, ..., reshape views)
void install_creation_kernels(KernelTable& t);             // creation.cpp (iota, full, constant)
void install_scan_kernels(KernelTable& t);                 // scan.cpp (cumsum, ..., reduce_logsumexp)
void install_decomposition_kernels(KernelTable& t);        // decomposition.cpp
void install_conv_kernels(KernelTable& t);                 // conv.cpp
void install_layout_kernels(KernelTable& t);               // layout.cpp
void install_indexing_kernels(KernelTable& t);             // indexing.cpp
void install_sort_kernels(KernelTable& t);                 // sort.cpp
void install_postfix_kernels(KernelTable& t);              // postfix.cpp (postfix_eval)
void install_row_switch_kernels(KernelTable& t);           // row_switch.cpp
void install_random_kernels(KernelTable& t);               // random.cpp (random_bits, random_split, random_fold_in)
void install_control_kernels(KernelTable& t);              // control.cpp (cond, while_loop, scan, return)
void install_extension_kernels(KernelTable& t);            // extension.cpp (external_call, stablehlo_call)
void install_sparse_kernels(KernelTable& t);               // sparse.cpp (sparse_validate, sparse_csr_matmul)

}  // namespace evoxc::interp
