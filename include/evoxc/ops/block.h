// Implementations of custom ops (block_call, evoxc.block) registered out of band, by the block's name and a backend.
// A graph carries a block's name and its portable body, so it runs in a process that registered nothing; where an
// implementation is registered for the backend that loads the graph, that backend runs it instead of the body
// (decided once, at load).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "evoxc/core/tensor.h"

namespace evoxc {

// Computes a block's results into `outputs` (host tensors already of the result types, written in place) from
// `inputs` (host tensors of the operand types, read only). An implementation must compute what the portable body
// computes; it may throw an evoxc error, which the run reports as is.
using BlockImpl = std::function<void(std::span<const Tensor> inputs, std::span<Tensor> outputs)>;

// Registers (or replaces) the implementation of the block `name` on `backend` ("interp" is the one backend that
// dispatches to host implementations today). Executables loaded before keep what they found at load.
void register_block_impl(const std::string& name, const std::string& backend, BlockImpl impl);
// Removes it; true when one was registered.
bool unregister_block_impl(const std::string& name, const std::string& backend);
// The registered implementation, or nullptr.
std::shared_ptr<const BlockImpl> find_block_impl(std::string_view name, std::string_view backend);
// Names with an implementation on `backend`, sorted.
std::vector<std::string> registered_blocks(std::string_view backend);

}  // namespace evoxc
