// libFuzzer target for what clusters and archives report, all untrusted
// text: nvidia-smi CSV, `scontrol show node -o` lines, squeue's job fields,
// `kubectl get nodes -o json`, a Debian Packages index (plain or
// compressed), dpkg version strings and image layer names. Each parser must
// return (a value or an error) for every input, never throw, crash or hang;
// what the inventory accepts proposes tiers whose stanza renders; dpkg's
// order is antisymmetric; a layer name that normalizes stays normalized.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "orchestrator/engine/slurm.hpp"
#include "orchestrator/inspect/layers.hpp"
#include "orchestrator/inventory/inventory.hpp"
#include "orchestrator/watch/debian.hpp"

using orc::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto inv = orc::inventory::parse_inventory(text, "f", "node"); inv) {
    if (const auto proposal = orc::inventory::propose_tiers(*inv))
      check(orc::inventory::render_tiers_yaml(*proposal).starts_with("# orchestrate tiers import:"));
  } else {
    check(!inv.error().message.empty());
  }
  (void)orc::engine::slurm::parse_queue_record(text, "1");
  for (const auto& p : orc::watch::parse_packages_index(text)) check(!p.name.empty() && !p.version.empty());
  if (auto plain = orc::watch::decompress_index(text); plain) (void)orc::watch::parse_packages_index(*plain);
  // Two halves as two versions.
  const std::string_view a = text.substr(0, size / 2), b = text.substr(size / 2);
  const auto ab = orc::watch::compare_debian_versions(a, b);
  const auto ba = orc::watch::compare_debian_versions(b, a);
  check((ab < 0) == (ba > 0) && (ab == 0) == (ba == 0));
  (void)orc::watch::cuda_release_of(text);
  if (auto path = orc::inspect::LayerMerge::normalize(text); path) {
    const auto again = orc::inspect::LayerMerge::normalize(*path);
    check(again.has_value() && *again == *path);
  }
  return 0;
}
