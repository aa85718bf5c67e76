#pragma once
// Private to orchestrator/recipe: what every part of the configuration parser
// shares. yaml-cpp appears here and in the .cpp files beside it, never in a
// public header.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "orchestrator/util/diagnostic.hpp"

namespace orc::recipe::detail {

// Every diagnostic of one load_config/parse_config call, errors and warnings
// apart, because a Config carries warnings but only errors decide failure.
// Thrown by Diagnostics::add_error at k_max_errors: past that many, more
// errors help nobody (they are mostly one mistake repeated), and each can cost
// a did-you-mean search, so parse_config stops there and says so.
struct TooManyErrors {};

struct Diagnostics {
  std::vector<util::Diagnostic> errors;
  std::vector<util::Diagnostic> warnings;
  // Files in the order they were first read, so errors can be sorted by file
  // and then by position: the main file first, then each included file.
  std::vector<std::string> files;

  int file_rank(const std::string& name);
  // Records an error; throws TooManyErrors when the limit is reached.
  void add_error(util::Diagnostic d);
  // Errors ordered by file, line and column; the same line keeps discovery order.
  std::vector<util::Diagnostic> sorted_errors() const;
};

// One source file being read: its name as diagnostics print it, its text (for
// the source line under the caret) and the directory its relative paths
// resolve against.
class SourceFile {
 public:
  SourceFile(std::string name, std::string_view text, std::filesystem::path base_dir);

  const std::string& name() const { return m_name; }
  std::string_view text() const { return m_text; }
  // The directory of the file, as given (may be empty: the current directory).
  const std::filesystem::path& base_dir() const { return m_base_dir; }
  // 1-based line's text without its line break; empty when out of range.
  std::string line_text(int line) const;
  util::SourceLocation location(const YAML::Mark& mark) const;
  // An absolute, lexically normal path for `relative` (which may already be
  // absolute), anchored at this file's directory.
  std::filesystem::path resolve(const std::string& relative) const;

 private:
  std::string m_name;
  std::string_view m_text;
  std::vector<std::size_t> m_line_starts;
  std::filesystem::path m_base_dir;
};

// A mapping entry the schema allows: its key node (for "duplicate"/"unknown"
// locations) and its value.
struct Field {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

class Fields {
 public:
  const Field* find(std::string_view key) const;
  std::vector<Field>& entries() { return m_entries; }
  // Whether an unknown key was already answered with "did you mean 'key'",
  // so a typo is not reported a second time as a missing key.
  bool suggested(std::string_view key) const;
  void add_suggestion(std::string key) { m_suggested.push_back(std::move(key)); }

 private:
  std::vector<Field> m_entries;
  std::vector<std::string> m_suggested;
};

// Reads nodes of one file, reporting every problem into a shared sink and
// carrying on, so one run shows all the errors at once.
class Reader {
 public:
  Reader(const SourceFile& file, Diagnostics& out) : m_file(file), m_out(out) {}

  const SourceFile& file() const { return m_file; }
  util::SourceLocation where(const YAML::Node& node) const;
  util::Diagnostic diagnostic(const YAML::Mark& mark, std::string message, std::string suggestion = {}) const;

  void error(const YAML::Node& at, std::string message, std::string suggestion = {});
  void error(const YAML::Mark& at, std::string message, std::string suggestion = {});
  void warning(const YAML::Node& at, std::string message, std::string suggestion = {});

  // Type checks; each reports "expected a list for 'gpus', got a string"
  // (where `context` is "for 'gpus'") and returns false on a mismatch.
  bool expect_list(const YAML::Node& node, std::string_view context);
  bool expect_mapping(const YAML::Node& node, std::string_view context);
  std::optional<std::string> string(const YAML::Node& node, std::string_view context);

  // The entries of a mapping whose keys are in `allowed`; unknown keys (with
  // a did-you-mean among `allowed`), duplicate keys and non-string keys are
  // reported and left out.
  Fields fields(const YAML::Node& map, std::span<const std::string_view> allowed);
  // Reports "missing required key 'k'" at the mapping for each absent key
  // (unless a typo of it was already reported); false when any is absent.
  bool require(const Fields& fields, const YAML::Node& map, std::span<const std::string_view> keys);

 private:
  const SourceFile& m_file;
  Diagnostics& m_out;
};

// "a string", "a list", "a mapping" or "an empty value", for type errors.
std::string_view kind_name(const YAML::Node& node);

}  // namespace orc::recipe::detail
