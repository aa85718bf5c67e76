// libFuzzer target for what clusters and images report, all untrusted
// text: nvidia-smi CSV (as pdsh, clush, dshbak and clubak print it too),
// `scontrol show node -o` lines, squeue's job fields,
// `kubectl get nodes -o json` and image layer names (Debian's Packages
// indexes have fuzz_debian_index). Each parser must return (a value or an
// error) for every input, never throw, crash or hang; what the inventory
// accepts proposes tiers whose stanza renders; a layer name that normalizes
// stays normalized.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "orchestrator/engine/slurm.hpp"
#include "orchestrator/inspect/layers.hpp"
#include "orchestrator/inventory/inventory.hpp"

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
  if (auto path = orc::inspect::LayerMerge::normalize(text); path) {
    const auto again = orc::inspect::LayerMerge::normalize(*path);
    check(again.has_value() && *again == *path);
  }
  return 0;
}
