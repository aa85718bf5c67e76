#pragma once
// CLI11's help laid out for the output's width (table.hpp's output_width):
// an option's or a command's description wraps at spaces under its own
// column, so no help line passes the width (CLI11 2.1 prints each
// description on one line, however long).
#include <cstddef>
#include <memory>
#include <string>

namespace CLI {
class Formatter;
}

namespace orc::cli {

std::shared_ptr<CLI::Formatter> wrapping_formatter();

// A command's footer (its prose, examples and tables, written for about 80
// columns) laid out for `width`: a run of prose lines (no indent) with a
// line wider than `width` is joined and wrapped at spaces; an indented line
// wider than `width` wraps under its second column ("  NAME    what it
// is": under "what"), else under its own indent. Lines that fit stay as
// written; no word is cut.
std::string reflow_footer(const std::string& text, std::size_t width);

}  // namespace orc::cli
