// The registry of custom-op implementations (include/evoxc/ops/block.h): one mutex-guarded map, read at load.
#include "evoxc/ops/block.h"

#include <map>
#include <mutex>
#include <utility>

#include "evoxc/core/error.h"

namespace evoxc {

namespace {

struct Registry {
  std::mutex mu;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<const BlockImpl>, std::less<>> impls;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_block_impl(const std::string& name, const std::string& backend, BlockImpl impl) {
  if (name.empty()) throw ValidationError("register_block_impl: the block's name must not be empty");
  if (!impl) throw ValidationError("register_block_impl: no implementation given for block '" + name + "'");
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  r.impls[{name, backend}] = std::make_shared<const BlockImpl>(std::move(impl));
}

bool unregister_block_impl(const std::string& name, const std::string& backend) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  return r.impls.erase({name, backend}) != 0;
}

std::shared_ptr<const BlockImpl> find_block_impl(std::string_view name, std::string_view backend) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = r.impls.find(std::pair<std::string, std::string>(name, backend));
  return it == r.impls.end() ? nullptr : it->second;
}

std::vector<std::string> registered_blocks(std::string_view backend) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  std::vector<std::string> out;
  for (const auto& [k, v] : r.impls)
    if (k.second == backend) out.push_back(k.first);
  return out;
}

}  // namespace evoxc
