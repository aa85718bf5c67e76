#pragma once
// The cache key of one recipe x tier build: SHA-256 over typed, delimited
// fields, so no two different field lists hash the same bytes ("ab"+"c" is
// not "a"+"bc"), and the same inputs always hash the same. Every field is
// also kept as text: `--explain` prints one "name: value" line per field, so
// two runs' explanations can be diffed to see why a key changed.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace orc::recipe {
struct Recipe;
}

namespace orc::app {

// Bumped when the meaning of a field changes, so old entries miss.
// v2: the tier's GPU names and PTX policy left out (the resolved arch set
// says what they mean), the version from project(VERSION).
// v3: steps as argv lists (each argument length-delimited), every variable
// of the fixed environment (PATH included), the recipe's nvcc policy.
inline constexpr std::string_view k_key_schema = "orchestrate-build-key.v3";

class KeyHasher {
 public:
  // Each field is hashed as  name NUL type NUL length NUL value NUL; a list
  // as  name NUL "list" NUL count NUL, then each element length-prefixed.
  void text(std::string_view name, std::string_view value);
  void list(std::string_view name, const std::vector<std::string>& values);
  // A list of lists (argv per step): name NUL "lists" NUL count NUL, then
  // each list as count NUL and its elements length-prefixed.
  void lists(std::string_view name, const std::vector<std::vector<std::string>>& values);

  // The hex SHA-256 of every field added, in order.
  std::string hex() const;
  // One line per field ("name: value"; a list as "name[i]: value").
  std::string explain() const;

 private:
  std::string m_bytes;
  std::vector<std::pair<std::string, std::string>> m_lines;
};

// Everything a build's outcome depends on, as text. Not the tier's GPUs or
// its PTX policy: what they resolve to (the toolkit, the SASS and PTX
// sets, the framework's variables) is here, so a GPU of an arch the tier
// already has changes no key. The tier's name stays: artifact sets are
// indexed by recipe and tier.
struct KeyInputs {
  std::string tool_version;  // orchestrate's own version
  std::string recipe_text;   // canonical_recipe()
  std::string tier;
  std::string source_kind;      // "path" | "git"
  std::string source_revision;  // commit, or "tree:<sha256>"
  std::string engine;
  std::string image;
  std::string image_digest;  // "" when unknown
  std::string toolkit;
  std::string cudnn;
  std::vector<std::string> sass;
  std::vector<std::string> ptx;
  std::vector<std::string> env;                 // NAME=VALUE, sorted; parallelism variables left out
  std::vector<std::vector<std::string>> steps;  // each step's argv, in order
};

// The recipe's own fields as stable text: name, framework, source (git URL
// without credentials, and ref; a local path's location is left out: its
// content is the tree hash),
// requirement ranges, steps (a script step by file name and content digest),
// artifact globs, the nvcc policy, `env:` (tier's and recipe's, as the
// build's environment holds them, are keyed there).
std::string canonical_recipe(const recipe::Recipe& recipe);

KeyHasher hash_key(const KeyInputs& inputs);

}  // namespace orc::app
