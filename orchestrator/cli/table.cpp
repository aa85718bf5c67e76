#include "orchestrator/cli/table.hpp"

#include <algorithm>
#include <stdexcept>

namespace orc::cli {

namespace {

constexpr std::size_t k_gap = 2;
// The last column is never wrapped narrower than this, even when the
// columns before it leave less: a table wider than the terminal beats one
// word per line.
constexpr std::size_t k_min_last = 24;

void pad_to(std::string& line, std::size_t width) {
  const std::size_t have = display_width(line);
  if (have < width) line.append(width - have, ' ');
}

void trim_right(std::string& line) { line.erase(line.find_last_not_of(' ') + 1); }

}  // namespace

std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::ranges::count_if(text, [](char c) { return (c & 0xC0) != 0x80; }));
}

std::vector<std::string> wrap_hanging(const std::string& text, const std::string& first, const std::string& rest,
                                      std::size_t width) {
  std::vector<std::string> lines{first};
  bool bare = true;  // the last line holds no word yet
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t space = text.find(' ', at);
    const std::string word = text.substr(at, space == std::string::npos ? std::string::npos : space - at);
    at = space == std::string::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    if (!bare && display_width(lines.back()) + 1 + display_width(word) > width) {
      lines.push_back(rest);
      bare = true;
    }
    lines.back() += (bare ? "" : " ") + word;
    bare = false;
  }
  return lines;
}

std::vector<std::string> wrap_words(const std::string& text, std::size_t width) {
  return wrap_hanging(text, "", "", width);
}

Table::Table(std::vector<std::string> headers) : m_columns(headers.size()) {
  if (!headers.empty()) m_lines.push_back({std::move(headers), {}});
}

void Table::add_row(std::vector<std::string> cells) {
  if (m_columns == 0) m_columns = cells.size();  // no headers: the first row decides
  if (cells.size() > m_columns) throw std::logic_error("table row has more cells than the table has columns");
  cells.resize(m_columns);
  m_lines.push_back({std::move(cells), {}});
}

void Table::add_note(std::string line) { m_lines.push_back({{}, std::move(line)}); }

std::string Table::render(std::size_t indent, std::size_t width) const {
  if (m_columns == 0) return {};
  std::vector<std::size_t> widths(m_columns, 0);
  for (const auto& line : m_lines)
    for (std::size_t i = 0; i < line.cells.size(); ++i) widths[i] = std::max(widths[i], display_width(line.cells[i]));
  // Where the last column starts, and how wide it may be.
  std::size_t start = indent;
  for (std::size_t i = 0; i + 1 < m_columns; ++i) start += widths[i] + k_gap;
  const std::size_t last = std::max(width > start ? width - start : 0, k_min_last);
  const std::string margin(indent, ' ');

  std::string out;
  for (const auto& line : m_lines) {
    if (line.cells.empty()) {
      out += margin + line.note + '\n';
      continue;
    }
    std::string text = margin;
    std::size_t column = indent;
    for (std::size_t i = 0; i + 1 < m_columns; ++i) {
      text += line.cells[i];
      column += widths[i] + k_gap;
      pad_to(text, column);
    }
    // The last column wraps; its continuation lines hang two columns in.
    const std::string& cell = line.cells.back();
    const auto parts = display_width(cell) <= last ? std::vector<std::string>{cell} : wrap_words(cell, last - k_gap);
    for (std::size_t p = 0; p < parts.size(); ++p) {
      if (p > 0) text = std::string(start + k_gap, ' ');
      text += parts[p];
      trim_right(text);
      out += text + '\n';
    }
  }
  return out;
}

}  // namespace orc::cli
