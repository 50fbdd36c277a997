// CompiledArtifact: its lazily written payload and the .evoxcartifact file format, whose
// payload is read back by the backend named in the header.
#include <cstdint>
#include <cstdio>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>

#include "evoxc/core/error.h"
#include "evoxc/core/file_io.h"
#include "evoxc/core/limits.h"
#include "evoxc/pipeline/pipeline.h"

namespace evoxc {

struct CompiledArtifact::State {
  ArtifactHeader header;
  Graph graph;
  PayloadWriter write;
  std::once_flag payload_once;
  std::string payload;
  std::once_flag hash_once;
  std::string hash;
  std::vector<StageTime> stages;
  std::shared_ptr<const void> native;
};

namespace {

std::string fnv1a_hex(std::string_view data) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

constexpr std::string_view kArtifactMagic = "EVOXCARTIFACT\n";

}  // namespace

CompiledArtifact::CompiledArtifact(ArtifactHeader header, Graph graph, PayloadWriter write,
                                   std::vector<StageTime> stages, std::shared_ptr<const void> native)
    : state_(std::make_shared<State>()) {
  state_->stages = std::move(stages);
  state_->native = std::move(native);
  if (!write) throw InternalError("CompiledArtifact: backend '" + header.backend + "' gave no payload writer");
  state_->header = std::move(header);
  state_->graph = std::move(graph);
  state_->write = std::move(write);
}

CompiledArtifact::CompiledArtifact(ArtifactHeader header, Graph graph, std::string payload)
    : state_(std::make_shared<State>()) {
  state_->header = std::move(header);
  state_->graph = std::move(graph);
  std::call_once(state_->payload_once, [&] { state_->payload = std::move(payload); });
}

const std::string& CompiledArtifact::backend() const { return state_->header.backend; }
const std::string& CompiledArtifact::target() const { return state_->header.target; }
const std::string& CompiledArtifact::options() const { return state_->header.options; }
const ArtifactHeader& CompiledArtifact::header() const { return state_->header; }
const Graph& CompiledArtifact::graph() const { return state_->graph; }
const std::vector<StageTime>& CompiledArtifact::stage_times() const { return state_->stages; }
const std::shared_ptr<const void>& CompiledArtifact::native() const { return state_->native; }

const std::string& CompiledArtifact::payload() const {
  State& s = *state_;
  std::call_once(s.payload_once, [&] { s.payload = s.write(s.graph); });
  return s.payload;
}

const std::string& CompiledArtifact::content_hash() const {
  State& s = *state_;
  std::call_once(s.hash_once, [&] { s.hash = fnv1a_hex(payload()); });
  return s.hash;
}

std::string CompiledArtifact::to_bytes() const {
  const std::string& p = payload();
  nlohmann::json h = {{"format_version", kFormatVersion},
                      {"abi", kAbi},
                      {"backend", backend()},
                      {"target", target()},
                      {"options", options()},
                      {"cpu", header().cpu},
                      {"cpu_features", header().cpu_features},
                      {"content_hash", content_hash()},
                      {"payload_bytes", p.size()}};
  std::string data(kArtifactMagic);
  // A flag that is not UTF-8 must not make an artifact unsavable; it is recorded, not interpreted.
  data += h.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  data += "\n";
  data += p;
  return data;
}

void CompiledArtifact::save(const std::string& path) const { write_file_atomic(path, to_bytes()); }

// read_file refuses non-regular files and files over max_file_bytes() (EVOXC_MAX_FILE_BYTES).
CompiledArtifact CompiledArtifact::load(const std::string& path) { return from_bytes(read_file(path), path); }

CompiledArtifact CompiledArtifact::from_bytes(std::string_view data, std::string_view where) {
  auto fail = [&](const std::string& why) -> PersistenceError {
    return PersistenceError("'" + std::string(where) + "' is not a loadable .evoxcartifact: " + why);
  };
  if (data.substr(0, kArtifactMagic.size()) != kArtifactMagic) throw fail("bad magic (not an evoxc artifact)");
  size_t eol = data.find('\n', kArtifactMagic.size());
  if (eol == std::string_view::npos) throw fail("truncated header");
  ArtifactHeader header;
  std::string hash;
  size_t bytes = 0;
  std::string_view header_text = data.substr(kArtifactMagic.size(), eol - kArtifactMagic.size());
  // The header is one flat object: anything nested deeper is corruption, refused before nlohmann recurses on it.
  if (find_excess_json_nesting(header_text, 8)) throw fail("malformed header: JSON nested too deep");
  try {
    nlohmann::json h = nlohmann::json::parse(header_text);
    // Integers only, range-checked before narrowing: a float or a huge number is corruption,
    // never a silently truncated value.
    auto integer = [&](const char* key, int64_t max) {
      const nlohmann::json& v = h.at(key);
      if (!v.is_number_integer()) throw fail(std::string("malformed header: '") + key + "' is not an integer");
      if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(max) : v.get<int64_t>() < 0)
        throw fail(std::string("malformed header: '") + key + "' is out of range");
      return v.get<int64_t>();
    };
    int64_t version = integer("format_version", 1 << 20);
    if (version != kFormatVersion)
      throw fail("format version " + std::to_string(version) + ", this build reads " + std::to_string(kFormatVersion) +
                 "; compile the graph again with this build");
    int64_t abi = integer("abi", 1 << 20);
    if (abi != kAbi) throw fail("ABI " + std::to_string(abi) + ", this build has " + std::to_string(kAbi));
    header.backend = h.at("backend").get<std::string>();
    header.target = h.at("target").get<std::string>();
    header.options = h.at("options").get<std::string>();
    header.cpu = h.at("cpu").get<std::string>();
    header.cpu_features = h.at("cpu_features").get<std::string>();
    hash = h.at("content_hash").get<std::string>();
    bytes = static_cast<size_t>(integer("payload_bytes", std::numeric_limits<int64_t>::max()));
  } catch (const nlohmann::json::exception& e) {
    throw fail(std::string("malformed header: ") + e.what());
  }
  std::string_view payload = data.substr(eol + 1);
  if (payload.size() != bytes)
    throw fail("payload is " + std::to_string(payload.size()) + " bytes, header says " + std::to_string(bytes) +
               " (truncated or corrupted)");
  if (fnv1a_hex(payload) != hash) throw fail("content hash mismatch (corrupted)");
  const Backend* backend = find_backend(header.backend);
  if (!backend) {
    std::string names;
    for (const auto& n : backend_names()) names += (names.empty() ? "" : ", ") + n;
    throw fail("it was compiled for backend '" + header.backend +
               "', which this build does not have (it has: " + (names.empty() ? std::string("none") : names) + ")");
  }
  try {
    return backend->deserialize(header, std::string(payload));
  } catch (const PersistenceError& e) {
    throw fail(e.what());
  } catch (const InternalError&) {
    throw;
  } catch (const Error& e) {  // a backend's reader found a payload it cannot use
    throw fail(e.what());
  }
}

}  // namespace evoxc
