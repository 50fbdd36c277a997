// Artifact payloads of the compiled backends: the graph, then the backend's compiled bytes.
#include "backends/common/graph_payload.h"

#include <cstdint>
#include <cstring>

#include "evoxc/core/error.h"
#include "evoxc/ops/op_def.h"
#include "ir/graph_codec.h"

namespace evoxc::graph_payload {

std::string encode(const Graph& graph, std::string_view blob) {
  std::string g = graph_codec::encode(graph);
  uint64_t n = g.size();
  std::string p(sizeof n, '\0');
  std::memcpy(p.data(), &n, sizeof n);
  p += g;
  p += blob;
  return p;
}

std::string_view blob(const std::string& payload) {
  uint64_t n = 0;
  std::memcpy(&n, payload.data(), sizeof n);
  return std::string_view(payload).substr(sizeof n + n);
}

CompiledArtifact read(const Backend& backend, const ArtifactHeader& header, std::string payload) {
  const std::string& name = backend.name();
  uint64_t n = 0;
  if (payload.size() < sizeof n) throw PersistenceError(name + ": the payload is truncated");
  std::memcpy(&n, payload.data(), sizeof n);
  if (n > payload.size() - sizeof n) throw PersistenceError(name + ": the payload's graph length is out of range");
  Graph g = graph_codec::decode(std::string_view(payload).substr(sizeof n, n));
  try {
    verify(g);
    backend.check_supported(g);
  } catch (const Error& e) {
    throw PersistenceError(name + ": the payload's graph does not verify: " + e.what());
  }
  return CompiledArtifact(header, std::move(g), std::move(payload));
}

}  // namespace evoxc::graph_payload
