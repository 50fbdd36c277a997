// Facts about op families that every backend's rule tables need: which reduction and running-scan ops fold with
// which combiner, and why eigh and svd run only where LAPACK runs. One list here, so a backend registers a family by
// walking it instead of spelling its members again.
#pragma once

#include <cstdint>

namespace evoxc {

// How a reduction or scan folds two elements (on bool: Sum is or, Prod is and, Max is or, Min is and).
enum class Combiner : uint8_t { Sum, Prod, Max, Min, Or, And };

struct CombinerOp {
  const char* op;
  Combiner combiner;
};

// reduce_mean, argmax/argmin and reduce_logsumexp are not here: they are more than one fold.
inline constexpr CombinerOp kReductionOps[] = {{"reduce_sum", Combiner::Sum}, {"reduce_prod", Combiner::Prod},
                                               {"reduce_max", Combiner::Max}, {"reduce_min", Combiner::Min},
                                               {"reduce_any", Combiner::Or},  {"reduce_all", Combiner::And}};
inline constexpr CombinerOp kScanOps[] = {
    {"cumsum", Combiner::Sum}, {"cumprod", Combiner::Prod}, {"cummax", Combiner::Max}, {"cummin", Combiner::Min}};

// The second half of a backend's deferral of eigh / svd: evoxc's vectors are LAPACK's (syevd, gesdd), signs
// included, and no other algorithm reproduces those signs.
inline constexpr const char* kEighDeferral =
    "the eigenvectors' signs are whatever LAPACK's syevd returns (semantics), which no other algorithm reproduces; "
    "run it on the interp backend";
inline constexpr const char* kSvdDeferral =
    "the singular vectors' signs are whatever LAPACK's gesdd returns (semantics), which no other algorithm "
    "reproduces; run it on the interp backend (matrix_rank and norm ord 2/-2/nuc, which need only the singular "
    "values, are decomposed into a Jacobi iteration)";

}  // namespace evoxc
