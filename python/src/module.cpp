// The evoxc._core extension module: registers every binding file in dependency order.
#include "bind.h"

NB_MODULE(_core, m) {
  m.doc() = "evoxc's C++ core. Use the evoxc package, which re-exports this with the Python sugar.";
  using namespace evoxc::py;
  // Objects still reachable at interpreter exit (a module global holding a Graph, a DEAP
  // primitive set whose closures reference evoxc) are not leaks of ours; nanobind's exit check
  // would report them as such to every user.
  nb::set_leak_warnings(false);
  bind_core(m);
  bind_tensor(m);
  bind_trace(m);
  bind_pipeline(m);
  bind_transforms(m);
  bind_batch(m);
  bind_control(m);
  bind_ops_elementwise(m);
  bind_ops_reduce_linalg(m);
  bind_ops_structure(m);
  bind_ops_indexing(m);
  bind_gp(m);
  bind_xla(m);
  bind_io(m);
  bind_external(m);
  bind_random(m);
  bind_block(m);
  bind_external_call(m);
  bind_sparse(m);
}
