#include "orchestrator/recipe/reader.hpp"

#include <algorithm>
#include <tuple>

#include "orchestrator/recipe/schema.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::recipe::detail {

int Diagnostics::file_rank(const std::string& name) {
  const auto it = std::ranges::find(files, name);
  if (it != files.end()) return static_cast<int>(it - files.begin());
  files.push_back(name);
  return static_cast<int>(files.size() - 1);
}

void Diagnostics::add_error(util::Diagnostic d) {
  errors.push_back(std::move(d));
  if (errors.size() >= k_max_errors) throw TooManyErrors{};
}

std::vector<util::Diagnostic> Diagnostics::sorted_errors() const {
  auto rank = [this](const std::string& name) {
    const auto it = std::ranges::find(files, name);
    return it == files.end() ? static_cast<long>(files.size()) : static_cast<long>(it - files.begin());
  };
  // Sorting indices with the index as the last key keeps discovery order for
  // equal positions without std::stable_sort (whose libstdc++ 12 buffer
  // helper is deprecated under clang's C++23).
  std::vector<std::size_t> order(errors.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto key = [&](std::size_t i) {
    const auto& w = errors[i].where;
    return std::tuple(rank(w.file), w.line, w.col, i);
  };
  std::ranges::sort(order, [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  std::vector<util::Diagnostic> out;
  out.reserve(errors.size());
  for (std::size_t i : order) out.push_back(errors[i]);
  return out;
}

SourceFile::SourceFile(std::string name, std::string_view text, std::filesystem::path base_dir)
    : m_name(std::move(name)), m_text(text), m_base_dir(std::move(base_dir)) {
  m_line_starts.push_back(0);
  for (std::size_t i = 0; i < m_text.size(); ++i)
    if (m_text[i] == '\n') m_line_starts.push_back(i + 1);
}

std::string SourceFile::line_text(int line) const {
  if (line < 1 || static_cast<std::size_t>(line) > m_line_starts.size()) return {};
  const std::size_t start = m_line_starts[static_cast<std::size_t>(line - 1)];
  std::size_t end = m_text.find('\n', start);
  if (end == std::string_view::npos) end = m_text.size();
  std::string_view out = m_text.substr(start, end - start);
  if (out.ends_with('\r')) out.remove_suffix(1);
  // A caret under a line of binary junk or a minified megabyte helps nobody.
  if (out.size() > 200 || out.find('\0') != std::string_view::npos) return {};
  return std::string(out);
}

util::SourceLocation SourceFile::location(const YAML::Mark& mark) const {
  util::SourceLocation loc{.file = m_name};
  if (!mark.is_null() && mark.line >= 0 && mark.column >= 0) {
    // yaml-cpp counts from 0; people and editors count from 1.
    loc.line = mark.line + 1;
    loc.col = mark.column + 1;
  }
  return loc;
}

std::filesystem::path SourceFile::resolve(const std::string& relative) const {
  std::filesystem::path p(relative);
  if (p.is_relative()) p = m_base_dir / p;
  std::error_code ec;
  auto absolute = std::filesystem::absolute(p, ec);
  return (ec ? p : absolute).lexically_normal();
}

const Field* Fields::find(std::string_view key) const {
  const auto it = std::ranges::find(m_entries, key, &Field::key);
  return it == m_entries.end() ? nullptr : &*it;
}

bool Fields::suggested(std::string_view key) const { return std::ranges::find(m_suggested, key) != m_suggested.end(); }

std::string_view kind_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return "a string";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Null:
      return "an empty value";
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

util::SourceLocation Reader::where(const YAML::Node& node) const { return m_file.location(node.Mark()); }

util::Diagnostic Reader::diagnostic(const YAML::Mark& mark, std::string message, std::string suggestion) const {
  util::Diagnostic d{
      .where = m_file.location(mark), .message = std::move(message), .suggestion = std::move(suggestion)};
  d.source_line = m_file.line_text(d.where.line);
  return d;
}

void Reader::error(const YAML::Mark& at, std::string message, std::string suggestion) {
  m_out.add_error(diagnostic(at, std::move(message), std::move(suggestion)));
}

void Reader::error(const YAML::Node& at, std::string message, std::string suggestion) {
  error(at.Mark(), std::move(message), std::move(suggestion));
}

void Reader::warning(const YAML::Node& at, std::string message, std::string suggestion) {
  auto d = diagnostic(at.Mark(), std::move(message), std::move(suggestion));
  d.severity = util::Severity::warning;
  m_out.warnings.push_back(std::move(d));
}

bool Reader::expect_list(const YAML::Node& node, std::string_view context) {
  if (node.IsSequence()) return true;
  error(node, "expected a list " + std::string(context) + ", got " + std::string(kind_name(node)));
  return false;
}

bool Reader::expect_mapping(const YAML::Node& node, std::string_view context) {
  if (node.IsMap()) return true;
  error(node, "expected a mapping " + std::string(context) + ", got " + std::string(kind_name(node)));
  return false;
}

std::optional<std::string> Reader::string(const YAML::Node& node, std::string_view context) {
  // Scalar() is the text as written, so 8.6 stays "8.6" and 12.10 is not 12.1.
  if (node.IsScalar()) return node.Scalar();
  error(node, "expected a string " + std::string(context) + ", got " + std::string(kind_name(node)));
  return std::nullopt;
}

Fields Reader::fields(const YAML::Node& map, std::span<const std::string_view> allowed) {
  Fields out;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const YAML::Node key = it->first;
    if (!key.IsScalar()) {
      error(key, "expected a string key, got " + std::string(kind_name(key)));
      continue;
    }
    std::string name = key.Scalar();
    if (std::ranges::find(allowed, std::string_view(name)) == allowed.end()) {
      std::string suggestion = util::did_you_mean(name, allowed);
      if (!suggestion.empty()) out.add_suggestion(suggestion);
      error(key, "unknown key '" + name + "'", std::move(suggestion));
      continue;
    }
    if (out.find(name) != nullptr) {
      error(key, "duplicate key '" + name + "'");
      continue;
    }
    out.entries().push_back(Field{.key = std::move(name), .key_node = key, .value = it->second});
  }
  return out;
}

bool Reader::require(const Fields& fields, const YAML::Node& map, std::span<const std::string_view> keys) {
  bool ok = true;
  for (std::string_view key : keys) {
    if (fields.find(key) != nullptr) continue;
    ok = false;
    if (!fields.suggested(key)) error(map, "missing required key '" + std::string(key) + "'");
  }
  return ok;
}

}  // namespace orc::recipe::detail
