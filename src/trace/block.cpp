// block_call (include/evoxc/trace/block.h): a custom op whose one region is its portable body.
#include "evoxc/trace/block.h"

#include "emit.h"
#include "evoxc/core/error.h"
#include "evoxc/trace/control.h"

namespace evoxc {

std::vector<SymbolicTensor> block_call(const std::string& name, const BlockBody& body,
                                       const std::vector<SymbolicTensor>& operands, SrcLoc loc) {
  if (name.empty()) throw TraceError("block: a block needs a name");
  control_detail::RegionSpec region{control_detail::types_of(operands), [&](const std::vector<SymbolicTensor>& args) {
                                      std::vector<SymbolicTensor> outs = body(args);
                                      if (outs.empty())
                                        throw TraceError("block '" + name + "': the body returns no values");
                                      std::vector<Tree<SymbolicTensor>> kids(outs.begin(), outs.end());
                                      return Tree<SymbolicTensor>::tuple(std::move(kids));
                                    }};
  return control_detail::emit_control(
      EVOXC_OP("block_call"), operands, {{"block", name}}, {region}, [](const std::vector<Tree<SymbolicTensor>>&) {},
      loc);
}

}  // namespace evoxc
