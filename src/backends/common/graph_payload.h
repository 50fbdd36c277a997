// The payload of a compiled backend's artifact: the verified graph (graph_codec) followed by the backend's own
// compiled bytes (object code, a plugin's serialised executable), and reading it back strictly.
#pragma once

#include <string>
#include <string_view>

#include "evoxc/ir/graph.h"
#include "evoxc/pipeline/pipeline.h"

namespace evoxc::graph_payload {

// u64 length of the graph encoding, the graph encoding, `blob`.
std::string encode(const Graph& graph, std::string_view blob);

// The blob of a payload encode() wrote (whose length was checked by read()).
std::string_view blob(const std::string& payload);

// The artifact of `payload` for `backend`: its graph decoded, verified and checked against the backend's
// capabilities. PersistenceError "<backend name>: ..." for a truncated payload, a graph length out of range or a
// graph that does not verify.
CompiledArtifact read(const Backend& backend, const ArtifactHeader& header, std::string payload);

}  // namespace evoxc::graph_payload
