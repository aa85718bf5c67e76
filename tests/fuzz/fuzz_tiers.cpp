// libFuzzer target for `orchestrate tiers import` (issue 28): every format
// it reads, and what it writes. The first byte picks the reader: nvidia-smi
// CSV, `scontrol show node -o`, `kubectl get nodes -o json`, the format
// told from the content, or two inputs (split at the first NUL) merged as
// two files are; the next picks small bounds (bit 0), so the bounds'
// errors are reached too, and grouping by driver branch as well (bit 1). Whatever is read must be proposed, and
// the stanza written must parse back with the configuration's own parser
// to exactly the tiers proposed, no more. Slurm's job records (squeue's
// fields) ride along: a record of another job is refused.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "orchestrator/engine/slurm.hpp"
#include "orchestrator/inventory/inventory.hpp"
#include "orchestrator/recipe/config.hpp"

namespace {

using namespace orc;

// A broken promise aborts, so the fuzzer keeps the input.
void check(bool ok) {
  if (!ok) std::abort();
}

std::expected<inventory::Inventory, util::Diagnostic> read(int how, std::string_view text,
                                                           const inventory::Limits& limits) {
  inventory::TextSource source(text);
  const inventory::InputSpec input{.file = "f", .node = "node", .limits = limits, .held = 0};
  switch (how) {
    case 0:
      return inventory::parse_nvidia_smi_csv(source, input);
    case 1:
      return inventory::parse_scontrol_nodes(source, input);
    case 2:
      return inventory::parse_kubectl_nodes(source, input);
    default:
      return inventory::parse_inventory(source, input);
  }
}

// The stanza parses to the proposal's tiers, field by field.
void check_round_trip(const inventory::Proposal& proposal) {
  const std::string yaml = inventory::render_tiers_yaml(proposal);
  check(yaml.find('\x1b') == std::string::npos && yaml.find('\r') == std::string::npos);
  if (proposal.tiers.empty()) return;  // "tiers: {}", which no configuration may be
  const auto config = recipe::parse_config(yaml, "/fuzz/orchestrate.yaml");
  check(config.has_value());
  check(config->tiers.size() == proposal.tiers.size());
  for (std::size_t i = 0; i < proposal.tiers.size(); ++i) {
    const auto& want = proposal.tiers[i];
    const auto& got = config->tiers[i];
    check(got.name == want.name && got.gpus.size() == want.gpus.size() && got.driver == want.driver);
    for (std::size_t g = 0; g < want.gpus.size(); ++g)
      check(got.gpus[g].name == want.gpus[g].name && got.gpus[g].declared == want.gpus[g].declared.has_value() &&
            (!want.gpus[g].declared || got.gpus[g].cc == *want.gpus[g].declared));
    const bool slurm = !want.partition.empty() || !want.constraint.empty() || !want.gres.empty();
    check(got.slurm.has_value() == slurm);
    if (slurm)
      check(got.slurm->partition == want.partition && got.slurm->constraint == want.constraint &&
            got.slurm->gres == want.gres);
    check(got.kubernetes.has_value() == !want.selector.empty());
    if (got.kubernetes) check(got.kubernetes->selector == want.selector);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const int how = data[0] % 5;
  inventory::Limits limits;
  if (data[1] & 1) limits = {.input_bytes = 4096, .line_bytes = 256, .node_bytes = 64 << 10};
  const std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);
  std::expected<inventory::Inventory, util::Diagnostic> inv = std::unexpected(util::Diagnostic{});
  if (how == 4) {
    const auto cut = text.find('\0');
    inv = read(3, text.substr(0, cut), limits);
    if (inv && cut != std::string_view::npos)
      if (auto second = read(3, text.substr(cut + 1), limits)) inv->merge(std::move(*second));
  } else {
    inv = read(how, text, limits);
  }
  if (inv) {
    const auto group_by = (data[1] & 2) ? inventory::GroupBy::cc_driver : inventory::GroupBy::cc;
    if (const auto proposal = inventory::propose_tiers(*inv, group_by)) check_round_trip(*proposal);
  } else {
    check(!inv.error().message.empty() && inv.error().where.file == "f");
  }
  // Slurm's job records: only job 7's own line.
  if (const auto job = engine::slurm::parse_queue_record(text, "7")) check(job->id == "7" && !job->state.empty());
  return 0;
}
