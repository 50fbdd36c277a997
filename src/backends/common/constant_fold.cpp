// Operand-less ops run through the interpreter's pipeline once (see constant_fold.h).
#include "backends/common/constant_fold.h"

#include <memory>
#include <vector>

#include "evoxc/ops/op_def.h"
#include "evoxc/pipeline/pipeline.h"

namespace evoxc::backends {

Tensor fold_on_interp(const OpInfo& def, const TensorType& type, const AttrMap& attrs) {
  auto module = std::make_shared<Module>();
  Function& f = module->add_function("main");
  Operation* c = f.entry().append(def, {}, {type}, attrs);
  f.entry().append(get_op("return"), {c->result(0)}, {});
  f.result_types() = {type};
  Graph g(module, TreeDef::tuple({}), TreeDef::tuple({TreeDef(LeafMark{})}));
  Executable exe = load(compile(lower(g, "interp")));
  std::vector<Tensor> outs(1);
  exe.execute({}, outs);
  return outs[0];
}

}  // namespace evoxc::backends
