// One recipe mapping: what to build, from where, against which versions, for
// which tiers, and what comes out.
#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "orchestrator/recipe/parse.hpp"
#include "orchestrator/recipe/schema.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::recipe::detail {

namespace {

// Recipe names become cache keys, registry tags and directory names, so they
// are restricted to what all of those accept.
bool valid_recipe_name(std::string_view name) {
  const auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (name.empty() || !lower_or_digit(name.front())) return false;
  return std::ranges::all_of(name, [&](char c) { return lower_or_digit(c) || c == '.' || c == '_' || c == '-'; });
}

std::optional<Framework> parse_framework(Reader& reader, const YAML::Node& node) {
  const auto text = reader.string(node, "for 'framework'");
  if (!text) return std::nullopt;
  if (const flags::FrameworkInfo* f = flags::find_framework(*text)) return f->id;
  std::vector<std::string_view> names;
  for (const auto& f : flags::framework_table()) names.push_back(f.framework);
  std::string suggestion = util::did_you_mean(*text, names);
  std::string message = "unknown framework '" + *text + "'";
  if (suggestion.empty()) {
    message += " (expected ";
    for (std::size_t i = 0; i < names.size(); ++i)
      message += std::string(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
    message += ")";
  }
  reader.error(node, std::move(message), std::move(suggestion));
  return std::nullopt;
}

std::optional<Source> parse_source(Reader& reader, const YAML::Node& node) {
  if (!reader.expect_mapping(node, "for 'source' (with 'path', or 'git' and 'ref')")) return std::nullopt;
  const Fields fields = reader.fields(node, k_source_keys);
  Source source{.where = reader.where(node)};
  const Field* path = fields.find("path");
  const Field* git = fields.find("git");
  const Field* ref = fields.find("ref");
  if (path && git) {
    reader.error(git->key_node, "a source has either 'path' or 'git', not both");
    return std::nullopt;
  }
  if (path) {
    if (ref) reader.error(ref->key_node, "'ref' applies to a git source only");
    const auto text = reader.string(path->value, "for 'path'");
    if (!text) return std::nullopt;
    if (text->empty()) {
      reader.error(path->value, "empty source path");
      return std::nullopt;
    }
    // Resolved now, against the file that names it; whether it exists is the
    // build's business (plans are made on machines without the sources).
    source.kind = Source::Kind::path;
    source.path = reader.file().resolve(*text);
    return ref ? std::nullopt : std::optional(source);
  }
  if (git) {
    source.kind = Source::Kind::git;
    auto url = reader.string(git->value, "for 'git'");
    if (url && url->empty()) reader.error(git->value, "empty git URL");
    if (!ref) {
      reader.error(node, "missing required key 'ref' (a git source names a branch, tag or commit)");
      return std::nullopt;
    }
    auto rev = reader.string(ref->value, "for 'ref'");
    if (rev && rev->empty()) reader.error(ref->value, "empty git ref");
    if (!url || !rev || url->empty() || rev->empty()) return std::nullopt;
    source.url = std::move(*url);
    source.ref = std::move(*rev);
    return source;
  }
  if (!fields.suggested("path") && !fields.suggested("git")) reader.error(node, "missing required key 'path' or 'git'");
  return std::nullopt;
}

std::optional<Requirement> parse_requirement(Reader& reader, const std::string& key, const YAML::Node& value) {
  const auto text = reader.string(value, "for '" + key + "'");
  if (!text) return std::nullopt;
  auto range = util::VersionRange::parse(*text);
  if (!range) {
    reader.error(value, "invalid version range for '" + key + "': " + range.error());
    return std::nullopt;
  }
  if (!range->satisfiable()) {
    reader.error(value, "impossible range '" + range->text() + "' for '" + key + "': no version satisfies it");
    return std::nullopt;
  }
  return Requirement{.range = std::move(*range), .where = reader.where(value)};
}

// `framework` is empty when the recipe's framework is unknown; framework keys
// are then not judged, since the framework error already explains.
Requirements parse_requires(Reader& reader, const YAML::Node& node, std::optional<Framework> framework) {
  Requirements out;
  if (!reader.expect_mapping(node, "for 'requires'")) return out;
  std::vector<std::string_view> allowed(k_requirement_keys.begin(), k_requirement_keys.end());
  const std::string_view own_key = framework ? flags::framework_info(*framework).requirement_key : std::string_view{};
  if (!own_key.empty()) allowed.push_back(own_key);
  std::vector<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key = it->first;
    const auto name = reader.string(key, "as a requirement name");
    if (!name) continue;
    const bool names_framework = std::ranges::any_of(flags::framework_table(), [&](const flags::FrameworkInfo& f) {
      return f.framework == *name || f.requirement_key == *name;
    });
    if (std::ranges::find(allowed, *name) == allowed.end()) {
      if (!names_framework)
        reader.error(key, "unknown key '" + *name + "'", util::did_you_mean(*name, allowed));
      else if (framework)
        reader.error(key, "requirement '" + *name + "' does not apply to a " + std::string(framework_name(*framework)) +
                              " recipe");
      continue;
    }
    if (std::ranges::find(seen, *name) != seen.end()) {
      reader.error(key, "duplicate key '" + *name + "'");
      continue;
    }
    seen.push_back(*name);
    if (*name == "cudnn" && it->second.IsScalar() && it->second.Scalar() == "none") {
      if (framework == Framework::tensorflow)
        reader.error(it->second,
                     "'cudnn: none' does not apply to a tensorflow recipe: its GPU build needs cuDNN (give a range, "
                     "\">=9\", or leave cudnn out)");
      out.without_cudnn = true;
      continue;
    }
    auto requirement = parse_requirement(reader, *name, it->second);
    if (*name == "cuda")
      out.cuda = std::move(requirement);
    else if (*name == "cudnn")
      out.cudnn = std::move(requirement);
    else if (*name == "gcc")
      out.gcc = std::move(requirement);
    else
      out.framework = std::move(requirement);
  }
  return out;
}

std::vector<std::string> parse_recipe_tiers(Reader& reader, const YAML::Node& node, const TierNames* tiers) {
  std::vector<std::string> out;
  if (!reader.expect_list(node, "of tier names for 'tiers'")) return out;
  if (node.size() == 0) reader.error(node, "a recipe must name at least one tier");
  std::unordered_set<std::string> seen;
  for (const auto& item : node) {
    auto name = reader.string(item, "in 'tiers'");
    if (!name) continue;
    if (tiers && !tiers->contains(*name)) {
      reader.error(item, "unknown tier '" + *name + "'", util::did_you_mean(*name, tiers->in_order()));
      continue;
    }
    if (seen.insert(*name).second) out.push_back(std::move(*name));
  }
  return out;
}

// Artifact patterns are copied out of a build tree; one that climbs out of it
// would copy whatever the pattern names on the build host.
std::optional<std::string> parse_artifact(Reader& reader, const YAML::Node& node) {
  auto text = reader.string(node, "in 'artifacts'");
  if (!text) return std::nullopt;
  if (text->empty()) {
    reader.error(node, "empty artifact pattern");
    return std::nullopt;
  }
  const std::filesystem::path p(*text);
  const bool climbs = std::ranges::any_of(p, [](const std::filesystem::path& part) { return part == ".."; });
  if (p.is_absolute() || climbs) {
    reader.error(node, "artifact pattern '" + *text + "' must stay inside the build tree (relative, without '..')");
    return std::nullopt;
  }
  return text;
}

}  // namespace

TierNames::TierNames(const std::vector<Tier>& tiers) {
  m_order.reserve(tiers.size());
  for (const Tier& t : tiers) m_order.push_back(t.name);
  m_set.insert(m_order.begin(), m_order.end());
}

std::optional<Recipe> parse_recipe(Reader& reader, const YAML::Node& node, const TierNames* tiers) {
  if (!reader.expect_mapping(node, "for a recipe")) return std::nullopt;
  const Fields fields = reader.fields(node, k_recipe_keys);
  reader.require(fields, node, k_recipe_required);
  Recipe recipe{.file = std::filesystem::path(reader.file().name()), .where = reader.where(node)};

  if (const Field* f = fields.find("name")) {
    if (auto name = reader.string(f->value, "for 'name'")) {
      if (valid_recipe_name(*name))
        recipe.name = std::move(*name);
      else
        reader.error(f->value,
                     "invalid recipe name '" + *name +
                         "': use lower-case letters, digits, '.', '_' and '-', starting with a letter or digit");
    }
  }
  std::optional<Framework> framework;
  if (const Field* f = fields.find("framework")) {
    framework = parse_framework(reader, f->value);
    if (framework) recipe.framework = *framework;
  }
  if (const Field* f = fields.find("source"))
    if (auto source = parse_source(reader, f->value)) recipe.source = std::move(*source);
  if (const Field* f = fields.find("requires")) recipe.requires_ = parse_requires(reader, f->value, framework);
  if (const Field* f = fields.find("needs")) recipe.needs = parse_needs(reader, f->value);
  if (const Field* f = fields.find("tiers")) recipe.tiers = parse_recipe_tiers(reader, f->value, tiers);
  if (const Field* f = fields.find("build"); f && reader.expect_list(f->value, "of steps for 'build'")) {
    for (const auto& item : f->value)
      if (auto step = parse_build_step(reader, item)) recipe.build.push_back(std::move(*step));
  }
  if (const Field* f = fields.find("artifacts"); f && reader.expect_list(f->value, "of patterns for 'artifacts'")) {
    for (const auto& item : f->value)
      if (auto pattern = parse_artifact(reader, item)) recipe.artifacts.push_back(std::move(*pattern));
  }
  if (const Field* f = fields.find("watch")) recipe.watch = parse_watch_policy(reader, f->value);
  if (const Field* f = fields.find("image")) {
    if (auto image = reader.string(f->value, "for 'image'")) {
      // A repository as the engine names it: lower-case path components,
      // an optional registry host; the tag is the tier's.
      const bool valid =
          !image->empty() && image->find_first_of(" @") == std::string::npos &&
          image->find(':', image->rfind('/') == std::string::npos ? 0 : image->rfind('/')) == std::string::npos;
      if (valid)
        recipe.image = std::move(*image);
      else
        reader.error(f->value, "invalid image repository '" + *image +
                                   "': give REPO or HOST[:PORT]/REPO without a tag (the tag is the tier)");
    }
  }
  if (const Field* f = fields.find("env")) recipe.env = parse_env(reader, f->value);
  if (const Field* f = fields.find("nvcc"))
    if (auto policy = parse_nvcc_policy(reader, f->value)) recipe.nvcc = *policy;
  if (const Field* f = fields.find("stamp")) {
    const auto text = reader.string(f->value, "for 'stamp'");
    if (text && *text != "true" && *text != "false")
      reader.error(f->value, "'stamp' is true or false, not '" + *text + "'");
    else if (text)
      recipe.stamp = *text == "true";
    if (recipe.stamp && !fields.find("image"))
      reader.error(f->value, "'stamp: true' needs 'image:' (the repository of the image the build makes)");
  }
  return recipe;
}

}  // namespace orc::recipe::detail
