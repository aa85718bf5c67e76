#pragma once
// The one table renderer of the command line: columns as wide as their
// widest cell, two spaces between them (so they never run together), and a
// last column that wraps at word boundaries, with a hanging indent, when the
// row would pass the width. When the other columns leave the last too little
// room, the widest of them wrap too (at spaces or after a path's '/', never
// mid-word, and never narrower than their longest word); a table with
// headers that cannot fit so is printed as a block per row, each cell under
// its header. Every command that prints a table uses it, at output_width().
#include <cstddef>
#include <string>
#include <vector>

namespace orc::cli {

inline constexpr std::size_t k_table_width = 100;

// The width output is laid out for: $COLUMNS when it is a number (40 to
// 1000), else the terminal's on stdout, else k_table_width. Read once.
std::size_t output_width();

class Table {
 public:
  // No headers: rows only, as many columns as the first row has (notes may
  // come before it).
  explicit Table(std::vector<std::string> headers = {});

  // Cells beyond the headers' count are an error of the caller; fewer are
  // padded with empty cells.
  void add_row(std::vector<std::string> cells);
  // A line of its own under the last row (a note such as damage), printed
  // as given after the table's indent.
  void add_note(std::string line);

  // Every line starts with `indent` spaces; trailing spaces are trimmed.
  std::string render(std::size_t indent = 0, std::size_t width = output_width()) const;

 private:
  struct Line {
    std::vector<std::string> cells;
    std::string note;  // set for a note line; cells empty
  };
  std::string render_blocks(std::size_t indent, std::size_t width) const;

  std::size_t m_columns = 0;
  std::vector<std::string> m_headers;
  std::vector<Line> m_lines;
};

// The display width of UTF-8 text: its code points (the tables print names,
// versions and messages; no wide characters).
std::size_t display_width(const std::string& text);

// `text` broken at spaces into lines of at most `width` columns (a word
// longer than `width` stays whole on its own line).
std::vector<std::string> wrap_words(const std::string& text, std::size_t width);
// The same with a hanging indent: the first line starts with `first`, the
// others with `rest`, each line at most `width` columns with its prefix.
std::vector<std::string> wrap_hanging(const std::string& text, const std::string& first, const std::string& rest,
                                      std::size_t width);

}  // namespace orc::cli
