#pragma once
// CLI11's help laid out for the output's width (table.hpp's output_width):
// an option's or a command's description wraps at spaces under its own
// column, so no help line passes the width (CLI11 2.1 prints each
// description on one line, however long).
#include <memory>

namespace CLI {
class Formatter;
}

namespace orc::cli {

std::shared_ptr<CLI::Formatter> wrapping_formatter();

}  // namespace orc::cli
