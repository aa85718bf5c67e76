#include "orchestrator/cli/table.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "orchestrator/util/env.hpp"

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

// A word a cell may break after besides at spaces: a path's '/'.
std::vector<std::string> path_parts(const std::string& word) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  while (at < word.size()) {
    const std::size_t slash = word.find('/', at);
    const std::size_t end = slash == std::string::npos ? word.size() : slash + 1;
    parts.push_back(word.substr(at, end - at));
    at = end;
  }
  return parts;
}

// The widest unbreakable piece of a cell: the narrowest it can wrap to.
std::size_t longest_word(const std::string& cell) {
  std::size_t longest = 0;
  for (std::size_t at = 0; at <= cell.size();) {
    const std::size_t space = std::min(cell.find(' ', at), cell.size());
    for (const auto& part : path_parts(cell.substr(at, space - at))) longest = std::max(longest, display_width(part));
    at = space + 1;
  }
  return longest;
}

// A cell in lines of at most `width`: at spaces, and after a '/' where a
// word is wider than the column.
std::vector<std::string> wrap_cell(const std::string& cell, std::size_t width) {
  std::vector<std::string> out;
  for (const auto& line : wrap_words(cell, width)) {
    if (display_width(line) <= width || line.find('/') == std::string::npos) {
      out.push_back(line);
      continue;
    }
    std::string piece;
    for (const auto& part : path_parts(line)) {
      if (!piece.empty() && display_width(piece) + display_width(part) > width) {
        out.push_back(std::move(piece));
        piece.clear();
      }
      piece += part;
    }
    if (!piece.empty()) out.push_back(std::move(piece));
  }
  return out;
}

}  // namespace

std::size_t output_width() {
  static const std::size_t width = [] {
    if (const auto columns = util::env_get("COLUMNS")) {
      std::size_t n = 0;
      const auto [end, ec] = std::from_chars(columns->data(), columns->data() + columns->size(), n);
      if (ec == std::errc() && end == columns->data() + columns->size() && n >= 40 && n <= 1000) return n;
    }
    winsize size{};
    if (::isatty(STDOUT_FILENO) == 1 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 40)
      return static_cast<std::size_t>(size.ws_col);
    return k_table_width;
  }();
  return width;
}

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

Table::Table(std::vector<std::string> headers) : m_columns(headers.size()), m_headers(headers) {
  if (!headers.empty()) m_lines.push_back({std::move(headers), {}});
}

std::string Table::render_blocks(std::size_t indent, std::size_t width) const {
  std::size_t label = 0;
  for (const auto& h : m_headers) label = std::max(label, display_width(h));
  const std::string margin(indent, ' ');
  const std::string under(indent + 2 + label + k_gap, ' ');
  const std::size_t room = width > under.size() + 8 ? width - under.size() : 8;
  std::string out;
  for (std::size_t l = 1; l < m_lines.size(); ++l) {  // the first line is the headers
    const Line& line = m_lines[l];
    if (line.cells.empty()) {
      out += margin + line.note + '\n';
      continue;
    }
    for (std::size_t i = 0; i < m_columns; ++i) {
      if (line.cells[i].empty()) continue;
      std::string head = margin + "  " + m_headers[i];
      if (i == 0) head = margin + m_headers[i];
      pad_to(head, under.size());
      const auto parts = wrap_cell(line.cells[i], room);
      for (std::size_t p = 0; p < parts.size(); ++p) {
        std::string text = (p == 0 ? head : under) + parts[p];
        trim_right(text);
        out += text + '\n';
      }
    }
  }
  return out;
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
  std::vector<std::size_t> floors(m_columns, 0);  // the longest word: no narrower
  for (const auto& line : m_lines)
    for (std::size_t i = 0; i < line.cells.size(); ++i) {
      widths[i] = std::max(widths[i], display_width(line.cells[i]));
      floors[i] = std::max(floors[i], longest_word(line.cells[i]));
    }
  // The columns before the last give way, widest first, until the last has
  // k_min_last (or the table fits), or none can wrap further.
  const auto start_of_last = [&] {
    std::size_t start = indent;
    for (std::size_t i = 0; i + 1 < m_columns; ++i) start += widths[i] + k_gap;
    return start;
  };
  const std::size_t wanted = std::min(widths.back(), k_min_last);
  while (start_of_last() + wanted > width) {
    std::size_t widest = m_columns;
    for (std::size_t i = 0; i + 1 < m_columns; ++i)
      if (widths[i] > floors[i] && (widest == m_columns || widths[i] > widths[widest])) widest = i;
    if (widest == m_columns) break;
    --widths[widest];
  }
  const std::size_t start = start_of_last();
  const std::string margin(indent, ' ');
  // Too narrow for the columns side by side, whatever wraps: a block per
  // row, its cells under their headers.
  if (start + floors.back() + k_gap > width && !m_headers.empty()) return render_blocks(indent, width);
  const std::size_t last = std::max(width > start ? width - start : 0, floors.back() + k_gap);

  std::string out;
  for (const auto& line : m_lines) {
    if (line.cells.empty()) {
      out += margin + line.note + '\n';
      continue;
    }
    // Each cell as its lines; the last column's continuation lines hang two
    // columns in.
    std::vector<std::vector<std::string>> parts(m_columns);
    std::size_t height = 1;
    for (std::size_t i = 0; i < m_columns; ++i) {
      const std::string& cell = line.cells[i];
      const bool is_last = i + 1 == m_columns;
      const std::size_t room = is_last ? last : widths[i];
      parts[i] =
          display_width(cell) <= room ? std::vector<std::string>{cell} : wrap_cell(cell, is_last ? room - k_gap : room);
      height = std::max(height, parts[i].size());
    }
    for (std::size_t row = 0; row < height; ++row) {
      std::string text = margin;
      std::size_t column = indent;
      for (std::size_t i = 0; i < m_columns; ++i) {
        const bool is_last = i + 1 == m_columns;
        if (is_last && row > 0) pad_to(text, column + k_gap);
        if (row < parts[i].size()) text += parts[i][row];
        if (is_last) break;
        column += widths[i] + k_gap;
        pad_to(text, column);
      }
      trim_right(text);
      out += text + '\n';
    }
  }
  return out;
}

}  // namespace orc::cli
