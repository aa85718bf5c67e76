// libFuzzer target for stored manifests and signature documents: both parsers
// must return (a value or an error) for every input, never throw, crash or
// hang, and a manifest they accept must survive its canonical form unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_support.hpp"
#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/cache/signing.hpp"

using orc::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using orc::cache::ManifestError;
  if (const auto manifest = orc::cache::parse_manifest(text); manifest) {
    const std::string canonical = orc::cache::canonical_json(*manifest);
    const auto again = orc::cache::parse_manifest(canonical);
    check(again.has_value());
    check(*again == *manifest);
    check(orc::cache::canonical_json(*again) == canonical);
  } else {
    check(!manifest.error().message.empty());
    check(manifest.error().kind == ManifestError::Kind::not_ours ||
          manifest.error().kind == ManifestError::Kind::malformed);
  }
  if (const auto signature = orc::cache::parse_signature(text); signature) {
    check(signature->signature.size() == 64);
    check(signature->key_id.size() == 16);
    check(orc::cache::parse_signature(orc::cache::signature_json(*signature)).has_value());
  }
  return 0;
}
