#pragma once
// Private to orchestrator/recipe: the parts of the configuration parser, one
// per file, that config.cpp strings together.
#include <yaml-cpp/yaml.h>

#include <expected>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "orchestrator/recipe/config.hpp"
#include "orchestrator/recipe/reader.hpp"

namespace orc::recipe::detail {

// document.cpp: why a text is not one YAML document: a syntax error, nesting
// deeper than k_max_nesting, or a second document.
struct DocumentError {
  YAML::Mark mark;
  std::string message;  // ours: "YAML syntax error"
  std::string detail;   // yaml-cpp's, which may end in a piece of the input
  std::string full() const;
  // The message without any piece of the input, for a file that may not be
  // the user's (an include naming /etc/shadow).
  std::string without_input() const;
};
// The one YAML document of a text; an empty text gives a null node.
std::expected<YAML::Node, DocumentError> parse_document(std::string_view text);
// The same for a file, reporting the error at its position.
std::optional<YAML::Node> load_document(const SourceFile& file, Diagnostics& out);

// files.cpp: a whole file, at most k_max_file_bytes, without ever blocking
// (an include pattern may name a FIFO or a device); the error is strerror's
// text or a sentence saying what the file is instead.
std::expected<std::string, std::string> read_file(const std::filesystem::path& path);
// The files an include entry names, sorted, as paths relative to where the
// including file was opened (so diagnostics print them the way users wrote
// them). Any component may hold wildcards, `**` included (util/glob.hpp).
std::expected<std::vector<std::filesystem::path>, std::string> expand_include(const SourceFile& including,
                                                                              const std::string& pattern);

// tiers.cpp: every tier that has a usable name, even one with errors inside,
// so recipes naming it do not report it unknown as well.
std::vector<Tier> parse_tiers(Reader& reader, const YAML::Node& tiers);
std::vector<util::Version> parse_toolkits(Reader& reader, const YAML::Node& toolkits);

// remote.cpp: `remote:` (an http(s) URL with a repository path) and
// `trusted_keys:` (PEM file paths, resolved against the file, or inline PEM).
std::string parse_remote(Reader& reader, const YAML::Node& remote);
std::vector<std::string> parse_trusted_keys(Reader& reader, const YAML::Node& keys);
WatchSettings parse_watch(Reader& reader, const YAML::Node& watch);
// A policy name of k_watch_policies, else an error at `node`.
std::optional<std::string> parse_watch_policy(Reader& reader, const YAML::Node& node);

// env.cpp: `env:` of a tier or recipe (NAME: value; names the build sets
// from the plan are refused), and a recipe's `nvcc:` policy.
std::vector<EnvSetting> parse_env(Reader& reader, const YAML::Node& node);
std::optional<NvccPolicy> parse_nvcc_policy(Reader& reader, const YAML::Node& node);

// recipe_parse.cpp: the declared tier names recipes are checked against, in
// a set (a configuration may declare very many) and in declaration order
// (for did-you-mean, which must answer the same way every run).
class TierNames {
 public:
  explicit TierNames(const std::vector<Tier>& tiers);
  bool contains(const std::string& name) const { return m_set.contains(name); }
  std::span<const std::string> in_order() const { return m_order; }

 private:
  std::vector<std::string> m_order;
  std::unordered_set<std::string> m_set;
};

// One recipe mapping. `tiers` is null when the tiers section was itself
// unusable, and tier names are then not checked.
std::optional<Recipe> parse_recipe(Reader& reader, const YAML::Node& node, const TierNames* tiers);

// needs.cpp: `needs: [cublas, nccl]`, each name a declarable row of
// compat's part table, once.
std::vector<Need> parse_needs(Reader& reader, const YAML::Node& node);

// build_steps.cpp
// Splits a command line into argv on blanks, honouring '...' and "..."
// (no escapes, no variables, no globbing: nothing else a shell would do).
std::expected<std::vector<std::string>, std::string> split_command(std::string_view line);
std::optional<BuildStep> parse_build_step(Reader& reader, const YAML::Node& node);

}  // namespace orc::recipe::detail
