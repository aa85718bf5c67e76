// The `tiers` and `toolkits` sections: groups of devices, and the toolkits
// builds may choose from.
#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "orchestrator/arch/gpu_db.hpp"
#include "orchestrator/recipe/parse.hpp"
#include "orchestrator/recipe/schema.hpp"
#include "orchestrator/util/outside_names.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::recipe::detail {

namespace {

// Tier names are identifiers on command lines and in cache indexes.
bool valid_tier_name(std::string_view name) {
  if (name.empty() || !std::isalnum(static_cast<unsigned char>(name.front()))) return false;
  return std::ranges::all_of(
      name, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'; });
}

bool looks_like_cc(std::string_view text) {
  text = util::trim(text);
  return !text.empty() && (std::isdigit(static_cast<unsigned char>(text.front())) ||
                           util::starts_with_ci(text, "sm_") || util::starts_with_ci(text, "compute_"));
}

// "7.0 or 7.2" for nearest_ccs' answer.
std::string either(const std::vector<arch::ComputeCapability>& ccs) {
  std::string out;
  for (std::size_t i = 0; i < ccs.size(); ++i) out += (i == 0 ? "" : " or ") + ccs[i].dotted();
  return out;
}

// A CC no GPU has is an error (a typo, or a toolkit's version where a CC
// belongs); one only nvcc knows is a warning: nothing confirms a device.
bool check_standing(Reader& reader, const YAML::Node& node, arch::ComputeCapability cc) {
  switch (arch::cc_standing(cc)) {
    case arch::CcStanding::product:
      return true;
    case arch::CcStanding::compiler_only:
      reader.warning(node, "no known GPU has compute capability " + cc.dotted() + " (nvcc accepts " + cc.sm() +
                               "; the tables confirm no product)");
      return true;
    case arch::CcStanding::none:
      break;
  }
  reader.error(node,
               cc.dotted() + " is not a compute capability (did you mean " + either(arch::nearest_ccs(cc)) + "?)");
  return false;
}

// The CC of a tier device as written: a plain CC, not a compilation target.
std::optional<arch::ComputeCapability> device_cc(Reader& reader, const YAML::Node& node, const std::string& text) {
  const auto cc = arch::ComputeCapability::parse(text);
  if (!cc) {
    reader.error(node, "'" + text +
                           "' is not a compute capability: a tier takes one as major.minor (\"9.0\", \"8.6\") "
                           "or a GPU name (\"H100\")");
    return std::nullopt;
  }
  if (cc->variant() != arch::Variant::none) {
    reader.error(node, "'" + text + "' is a compilation target, not a device: a tier lists GPUs", cc->base().dotted());
    return std::nullopt;
  }
  if (!check_standing(reader, node, *cc)) return std::nullopt;
  return *cc;
}

// `{name: "Lab Card X", cc: 8.6}`: a device the tables lack, with its CC.
// A name the tables know must agree with them.
std::optional<TierGpu> parse_declared_gpu(Reader& reader, const YAML::Node& node) {
  const Fields fields = reader.fields(node, k_gpu_keys);
  if (!reader.require(fields, node, k_gpu_keys)) return std::nullopt;
  const auto name = reader.string(fields.find("name")->value, "for a GPU's 'name'");
  const YAML::Node& cc_node = fields.find("cc")->value;
  const auto cc_text = reader.string(cc_node, "for a GPU's 'cc'");
  if (!name || !cc_text) return std::nullopt;
  const auto cc = device_cc(reader, cc_node, *cc_text);
  if (!cc) return std::nullopt;
  if (const auto known = arch::find_gpu(*name); known && known->cc != *cc) {
    reader.error(cc_node, "the tables give " + std::string(known->name) + " compute capability " + known->cc.dotted() +
                              ", not " + cc->dotted() + ": drop 'cc' or the GPU's name");
    return std::nullopt;
  }
  return TierGpu{.name = *name, .cc = *cc, .given_as_cc = false, .declared = true, .where = reader.where(node)};
}

// A tier lists devices, and a device is a product, a plain compute
// capability, or a declared device; `a`/`f` variants are compilation
// targets, which the planner chooses, not the user.
std::optional<TierGpu> parse_gpu(Reader& reader, const YAML::Node& node) {
  if (node.IsMap()) return parse_declared_gpu(reader, node);
  const auto text = reader.string(node, "in 'gpus'");
  if (!text) return std::nullopt;
  const auto where = reader.where(node);
  const auto gpu = arch::find_gpu(*text);
  if (gpu) return TierGpu{.name = std::string(gpu->name), .cc = gpu->cc, .given_as_cc = false, .where = where};
  if (!looks_like_cc(*text)) {
    std::string message = "unknown GPU '" + *text + "'";
    if (gpu.error().suggestion.empty())
      message +=
          "; a device the tables lack is declared with its compute capability: {name: \"" + *text + "\", cc: \"8.6\"}";
    reader.error(node, std::move(message), gpu.error().suggestion);
    return std::nullopt;
  }
  const auto cc = device_cc(reader, node, *text);
  if (!cc) return std::nullopt;
  return TierGpu{.name = *text, .cc = *cc, .given_as_cc = true, .where = where};
}

std::optional<PtxPolicy> parse_ptx(Reader& reader, const YAML::Node& node) {
  const auto text = reader.string(node, "for 'ptx'");
  if (!text) return std::nullopt;
  for (PtxPolicy p : {PtxPolicy::none, PtxPolicy::highest, PtxPolicy::all})
    if (ptx_policy_name(p) == *text) return p;
  std::string suggestion = util::did_you_mean(*text, k_ptx_names);
  std::string message = "unknown ptx policy '" + *text + "'";
  if (suggestion.empty()) message += " (expected none, highest or all)";
  reader.error(node, std::move(message), std::move(suggestion));
  return std::nullopt;
}

TierSlurm parse_tier_slurm(Reader& reader, const YAML::Node& node) {
  TierSlurm out{.where = reader.where(node)};
  if (!reader.expect_mapping(node, "for 'slurm' (partition, constraint, gres, account, qos, time)")) return out;
  const Fields fields = reader.fields(node, k_tier_slurm_keys);
  const auto word = [&](const char* key, std::string& into) {
    const Field* f = fields.find(key);
    if (!f) return;
    const auto text = reader.string(f->value, std::string("for '") + key + "'");
    if (!text) return;
    if (!util::sbatch_word(*text))
      reader.error(f->value, std::string("invalid slurm '") + key + "' '" + *text +
                                 "': one word of letters, digits and _-.:,&|[]*=()! as sbatch takes it");
    else
      into = *text;
  };
  word("partition", out.partition);
  word("constraint", out.constraint);
  word("gres", out.gres);
  word("account", out.account);
  word("qos", out.qos);
  word("time", out.time);
  return out;
}

TierKubernetes parse_tier_kubernetes(Reader& reader, const YAML::Node& node) {
  TierKubernetes out{.where = reader.where(node)};
  if (!reader.expect_mapping(node, "for 'kubernetes' (with 'selector')")) return out;
  const Fields fields = reader.fields(node, k_tier_kubernetes_keys);
  const Field* f = fields.find("selector");
  if (!f || !reader.expect_mapping(f->value, "for 'selector' (node labels: {nvidia.com/gpu.product: ...})")) return out;
  for (auto it = f->value.begin(); it != f->value.end(); ++it) {
    const auto key = reader.string(it->first, "as a node label");
    const auto value = reader.string(it->second, "as a label value");
    if (!key || !value) continue;
    if (!util::label_key(*key))
      reader.error(it->first,
                   "invalid node label '" + *key + "': [prefix/]name, name up to 63 of letters, digits, -_.");
    else if (!util::label_value(*value))
      reader.error(it->second, "invalid label value '" + *value + "': up to 63 of letters, digits, -_.");
    else
      out.selector[*key] = *value;
  }
  return out;
}

Tier parse_tier(Reader& reader, std::string name, const YAML::Node& key, const YAML::Node& value) {
  Tier tier{.name = std::move(name), .where = reader.where(key)};
  if (!reader.expect_mapping(value, "for tier '" + tier.name + "' (with 'gpus')")) return tier;
  const Fields fields = reader.fields(value, k_tier_keys);
  reader.require(fields, value, k_tier_required);
  if (const Field* gpus = fields.find("gpus"); gpus && reader.expect_list(gpus->value, "for 'gpus'")) {
    if (gpus->value.size() == 0) reader.error(gpus->value, "tier '" + tier.name + "' lists no GPUs");
    for (const auto& item : gpus->value)
      if (auto gpu = parse_gpu(reader, item)) tier.gpus.push_back(std::move(*gpu));
  }
  if (const Field* ptx = fields.find("ptx"))
    if (auto policy = parse_ptx(reader, ptx->value)) tier.ptx = *policy;
  if (const Field* driver = fields.find("driver")) {
    if (const auto text = reader.string(driver->value, "for 'driver'")) {
      if (auto version = util::Version::parse(*text))
        tier.driver = std::move(*version);
      else
        reader.error(driver->value, "invalid driver version: " + version.error());
    }
  }
  if (const Field* f = fields.find("slurm")) tier.slurm = parse_tier_slurm(reader, f->value);
  if (const Field* f = fields.find("kubernetes")) tier.kubernetes = parse_tier_kubernetes(reader, f->value);
  if (const Field* f = fields.find("env")) tier.env = parse_env(reader, f->value);
  return tier;
}

}  // namespace

std::vector<Tier> parse_tiers(Reader& reader, const YAML::Node& tiers) {
  std::vector<Tier> out;
  // Name -> index in `out`: a configuration may declare very many tiers, and
  // a search of `out` per tier made 125,000 of them take half a minute.
  std::unordered_map<std::string, std::size_t> declared;
  for (auto it = tiers.begin(); it != tiers.end(); ++it) {
    const YAML::Node key = it->first;
    const auto name = reader.string(key, "as a tier name");
    if (!name) continue;
    if (!valid_tier_name(*name)) {
      reader.error(key, "invalid tier name '" + *name +
                            "': use letters, digits, '.', '_' and '-', starting with a letter or digit");
      continue;
    }
    if (const auto [first, inserted] = declared.try_emplace(*name, out.size()); !inserted) {
      reader.error(key, "duplicate tier '" + *name + "' (first declared at line " +
                            std::to_string(out[first->second].where.line) + ")");
      continue;
    }
    out.push_back(parse_tier(reader, *name, key, it->second));
  }
  if (out.empty() && tiers.size() == 0) reader.error(tiers, "no tiers declared");
  return out;
}

std::vector<util::Version> parse_toolkits(Reader& reader, const YAML::Node& toolkits) {
  std::vector<util::Version> out;
  if (!reader.expect_list(toolkits, "for 'toolkits'")) return out;
  for (const auto& item : toolkits) {
    const auto text = reader.string(item, "in 'toolkits'");
    if (!text) continue;
    auto version = util::Version::parse(*text);
    if (!version) {
      reader.error(item, "invalid toolkit version: " + version.error());
    } else if (version->size() != 2) {
      // "12" would silently mean 12.0, and "12.4.1" is an update the
      // toolkit table does not track: toolkits are named major.minor.
      reader.error(item, "toolkit '" + *text + "' must be written major.minor, like 12.4");
    } else if (std::ranges::find(out, *version) == out.end()) {
      out.push_back(std::move(*version));
    }
  }
  return out;
}

}  // namespace orc::recipe::detail
