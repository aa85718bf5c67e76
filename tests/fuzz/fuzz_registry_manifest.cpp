// libFuzzer target for the OCI manifest and index parsers of
// orchestrator/registry (a registry's JSON is untrusted input): they must
// return a value or an Error for every input, never throw, crash or hang, and
// what they accept must survive being written out and read back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/registry/layout.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void check_descriptor(const orc::registry::Descriptor& d) {
  // The parser made a Digest: its text form parses back to it.
  check(orc::digest::Digest::parse(d.digest.to_string()) == d.digest);
  check(!d.media_type.empty() && d.media_type.size() <= 255);
  check(d.annotations.size() <= orc::registry::k_max_annotations);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace orc::registry;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (const auto manifest = parse_manifest(text)) {
    check_descriptor(manifest->config);
    check(manifest->layers.size() <= k_max_descriptors);
    for (const auto& layer : manifest->layers) check_descriptor(layer);
    if (manifest->subject) check_descriptor(*manifest->subject);
    if (const auto info = read_artifact(*manifest)) check(!info->tier.empty() && !info->recipe.empty());
    if (manifest->subject) {
      if (const auto signature = read_signature(*manifest, manifest->subject->digest)) check(signature->size <= 4096);
    }
  } else {
    check(manifest.error().kind == ErrorKind::protocol && !manifest.error().message.empty());
  }
  if (const auto index = parse_index(text)) {
    for (const auto& d : index->manifests) check_descriptor(d);
    // Round trip: what we write from a parsed index parses to the same entries.
    const auto again = parse_index(index_json(*index));
    check(again && again->manifests == index->manifests);
  } else {
    check(index.error().kind == ErrorKind::protocol && !index.error().message.empty());
  }
  return 0;
}
