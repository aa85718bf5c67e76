// orchestrate.yaml from text to Config: the top-level mapping, included
// recipe files, cross-checks between recipes and tiers, and the promise that
// no input, however broken, throws or crashes.
#include "orchestrator/recipe/config.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "orchestrator/recipe/parse.hpp"
#include "orchestrator/recipe/schema.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::recipe {

std::string_view framework_name(Framework f) { return flags::framework_info(f).framework; }

std::string_view nvcc_policy_name(NvccPolicy p) { return p == NvccPolicy::enforce ? "enforce" : "verify"; }

std::string_view ptx_policy_name(PtxPolicy p) {
  switch (p) {
    case PtxPolicy::none:
      return "none";
    case PtxPolicy::highest:
      return "highest";
    case PtxPolicy::all:
      return "all";
  }
  return "highest";
}

bool framework_uses_cudnn(Framework f) { return flags::framework_info(f).uses_cudnn; }

const Tier* Config::find_tier(std::string_view name) const {
  const auto it = std::ranges::find(tiers, name, &Tier::name);
  return it == tiers.end() ? nullptr : &*it;
}

const Recipe* Config::find_recipe(std::string_view name) const {
  const auto it = std::ranges::find(recipes, name, &Recipe::name);
  return it == recipes.end() ? nullptr : &*it;
}

namespace {

using detail::Diagnostics;
using detail::Reader;
using detail::SourceFile;

// Where parsed recipes go: the configuration's list, with the names indexed
// (a duplicate is found at once however many recipes there are), the tiers
// they are checked against (null: the tiers section was unusable), and the
// included files read so far.
struct RecipeSink {
  std::vector<Recipe>& recipes;
  const detail::TierNames* tiers = nullptr;
  std::unordered_map<std::string, std::size_t> by_name;
  std::vector<std::filesystem::path> included;

  // Parses the recipe at `node` and adds it, reporting a name already taken
  // where the second one is written (with its source line, which only the
  // reader of that file has).
  void add(Reader& reader, const YAML::Node& node) {
    auto recipe = detail::parse_recipe(reader, node, tiers);
    if (!recipe) return;
    if (!recipe->name.empty()) {
      const auto [first, inserted] = by_name.try_emplace(recipe->name, recipes.size());
      if (!inserted) {
        const auto& w = recipes[first->second].where;
        reader.error(node, "duplicate recipe name '" + recipe->name + "' (first defined at " + w.file + ":" +
                               std::to_string(w.line) + ":" + std::to_string(w.col) + ")");
        return;
      }
    }
    recipes.push_back(std::move(*recipe));
  }
};

// Why a document is not a file of the schema whose keys are `allowed`; empty
// when it is one. It is one when it is a mapping and one of its keys is an
// allowed key or a near miss of one (did-you-mean's rule), so a recipe full
// of typos still gets its diagnostics, while /etc/shadow (a string) or a
// credentials file (unrelated keys) is named, never quoted.
std::string not_of_schema(const YAML::Node& root, std::span<const std::string_view> allowed) {
  if (root.IsNull()) return "it is empty";
  if (!root.IsMap()) return "it holds " + std::string(detail::kind_name(root)) + ", not a mapping";
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (!it->first.IsScalar()) continue;
    const std::string& key = it->first.Scalar();
    if (std::ranges::find(allowed, key) != allowed.end() || !util::did_you_mean(key, allowed).empty()) return {};
  }
  return "none of its keys is one the schema knows";
}

// The document of an included file when it is a recipe file; otherwise an
// error at the include entry that names the file and says what it is
// instead, without a line of it (include: may name any readable file).
std::optional<YAML::Node> included_document(Reader& including, const YAML::Node& pattern_node, const SourceFile& file) {
  auto root = detail::parse_document(file.text());
  std::string reason;
  if (!root) {
    const YAML::Mark& m = root.error().mark;
    reason = root.error().without_input() + " at line " + std::to_string(m.line + 1) + ", column " +
             std::to_string(m.column + 1);
  } else {
    reason = not_of_schema(*root, detail::k_recipe_keys);
    if (reason.empty()) return std::move(*root);
  }
  including.error(pattern_node, "included file " + file.name() + " is not a recipe file: " + reason +
                                    " (a recipe file is one mapping with name, framework, source and tiers)");
  return std::nullopt;
}

// Each included file holds one recipe mapping. Included files may not include
// (the recipe schema has no 'include'), so there are no cycles to guard.
void read_included(Reader& including, const YAML::Node& pattern_node, const std::filesystem::path& main_file,
                   RecipeSink& sink, Diagnostics& out) {
  const auto pattern = including.string(pattern_node, "in 'include'");
  if (!pattern) return;
  auto files = detail::expand_include(including.file(), *pattern);
  if (!files) {
    including.error(pattern_node, files.error());
    return;
  }
  std::error_code ec;
  // A pattern like "*.yaml" beside orchestrate.yaml matches the file itself.
  std::erase_if(*files, [&](const std::filesystem::path& p) { return std::filesystem::equivalent(p, main_file, ec); });
  if (files->empty()) {
    including.error(pattern_node, "include '" + *pattern + "' matches no file");
    return;
  }
  for (const auto& path : *files) {
    // Patterns may overlap ("recipes/*.yaml" and "recipes/gpu.yaml"); a file
    // is read once, where it first matched.
    if (std::ranges::find(sink.included, path) != sink.included.end()) continue;
    sink.included.push_back(path);
    if (sink.included.size() > detail::k_max_included_files) {
      including.error(pattern_node, "more than " + std::to_string(detail::k_max_included_files) + " included files");
      return;
    }
    auto text = detail::read_file(path);
    if (!text) {
      including.error(pattern_node, "cannot read " + path.string() + ": " + text.error());
      continue;
    }
    const SourceFile file(path.string(), *text, path.parent_path());
    const auto root = included_document(including, pattern_node, file);
    if (!root) continue;
    out.file_rank(file.name());
    Reader reader(file, out);
    sink.add(reader, *root);
  }
}

void warn_unused_tiers(const Config& config, const SourceFile& file, Diagnostics& out) {
  std::unordered_set<std::string_view> used;
  for (const Recipe& r : config.recipes) used.insert(r.tiers.begin(), r.tiers.end());
  for (const Tier& tier : config.tiers) {
    if (used.contains(tier.name)) continue;
    out.warnings.push_back(util::Diagnostic{.severity = util::Severity::warning,
                                            .where = tier.where,
                                            .message = "tier '" + tier.name + "' is not used by any recipe",
                                            .source_line = file.line_text(tier.where.line)});
  }
}

void parse_main(std::string_view text, const std::filesystem::path& path, Config& config, Diagnostics& out) {
  const SourceFile file(path.string(), text, path.parent_path());
  out.file_rank(file.name());
  Reader reader(file, out);
  const auto root = detail::load_document(file, out);
  if (!root) return;
  if (root->IsNull()) {
    out.add_error(util::Diagnostic{.where = {.file = file.name()},
                                   .message = "empty configuration: expected a mapping with 'tiers'"});
    return;
  }
  // The file -f names may be any file: what is not a configuration is named,
  // not quoted (a syntax error is, where the file is most likely the user's).
  if (!root->IsMap()) {
    out.add_error(util::Diagnostic{
        .where = reader.where(*root),
        .message = "expected a mapping at the top level (with 'tiers'), got " + std::string(detail::kind_name(*root))});
    return;
  }
  if (const std::string reason = not_of_schema(*root, detail::k_top_keys); !reason.empty()) {
    out.add_error(util::Diagnostic{.where = {.file = file.name()},
                                   .message = "not an orchestrate configuration: " + reason +
                                              " (expected a mapping with 'tiers', and 'recipes' or 'include')"});
    return;
  }
  const auto fields = reader.fields(*root, detail::k_top_keys);
  reader.require(fields, *root, detail::k_top_required);

  // Tiers first, whatever the order in the file, since recipes refer to them.
  std::optional<detail::TierNames> tier_names;
  if (const auto* f = fields.find("tiers"); f && reader.expect_mapping(f->value, "of tier names for 'tiers'")) {
    config.tiers = detail::parse_tiers(reader, f->value);
    tier_names.emplace(config.tiers);
  }
  RecipeSink sink{.recipes = config.recipes, .tiers = tier_names ? &*tier_names : nullptr};
  if (const auto* f = fields.find("toolkits")) config.toolkits = detail::parse_toolkits(reader, f->value);
  if (const auto* f = fields.find("remote")) {
    config.remote = detail::parse_remote(reader, f->value);
    config.remote_where = reader.where(f->value);
  }
  if (const auto* f = fields.find("trusted_keys")) config.trusted_keys = detail::parse_trusted_keys(reader, f->value);
  if (const auto* f = fields.find("watch")) config.watch = detail::parse_watch(reader, f->value);
  if (const auto* f = fields.find("recipes"); f && reader.expect_list(f->value, "of recipes for 'recipes'")) {
    for (const auto& item : f->value) sink.add(reader, item);
  }
  if (const auto* f = fields.find("include"); f && reader.expect_list(f->value, "of paths for 'include'")) {
    for (const auto& item : f->value) read_included(reader, item, path, sink, out);
  }
  if (out.errors.empty()) warn_unused_tiers(config, file, out);
}

}  // namespace

std::expected<Config, std::vector<util::Diagnostic>> parse_config(std::string_view text,
                                                                  const std::filesystem::path& file) {
  Diagnostics out;
  Config config;
  config.file = file;
  bool stopped = false;
  try {
    parse_main(text, file, config, out);
  } catch (const detail::TooManyErrors&) {
    stopped = true;
  } catch (const std::exception& e) {
    // Every yaml-cpp call above is guarded by the type checks before it, so
    // this is a bug of ours; the user still gets a diagnostic, not a crash.
    out.errors.push_back(
        util::Diagnostic{.where = {.file = file.string()}, .message = std::string("internal error: ") + e.what()});
  } catch (...) {
    out.errors.push_back(util::Diagnostic{.where = {.file = file.string()}, .message = "internal error"});
  }
  if (!out.errors.empty()) {
    auto errors = out.sorted_errors();
    if (stopped)
      errors.push_back(util::Diagnostic{
          .where = {.file = file.string()},
          .message = "too many errors; stopped after the first " + std::to_string(detail::k_max_errors)});
    return std::unexpected(std::move(errors));
  }
  config.warnings = std::move(out.warnings);
  return config;
}

std::expected<Config, std::vector<util::Diagnostic>> load_config(const std::filesystem::path& file) {
  auto text = detail::read_file(file);
  if (!text)
    return std::unexpected(
        std::vector{util::Diagnostic{.message = "cannot read " + file.string() + ": " + text.error()}});
  return parse_config(*text, file);
}

}  // namespace orc::recipe
