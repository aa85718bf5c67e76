#include "orchestrator/cli/help_format.hpp"

#include <CLI/CLI.hpp>

#include "orchestrator/cli/table.hpp"

namespace orc::cli {

namespace {

// The left column as CLI11 makes it (two spaces, the name, padding to the
// column), then the description wrapped at the width under the column; a
// name wider than the column puts the description on the next line, as
// CLI11 does.
std::string help_row(const std::string& name, const std::string& description, std::size_t column) {
  std::string out = "  " + name;
  if (description.empty()) return out + "\n";
  const std::size_t width = output_width();
  const std::size_t room = width > column + 20 ? width - column : 20;
  const std::string indent(column, ' ');
  if (display_width(out) >= column)
    out += "\n" + indent;
  else
    out.append(column - display_width(out), ' ');
  bool first = true;
  std::size_t at = 0;
  while (at <= description.size()) {  // the description's own lines stay lines
    const std::size_t newline = std::min(description.find('\n', at), description.size());
    for (const auto& line : wrap_words(description.substr(at, newline - at), room)) {
      out += (first ? "" : "\n" + indent) + line;
      first = false;
    }
    at = newline + 1;
  }
  return out + "\n";
}

class WrappingFormatter : public CLI::Formatter {
 public:
  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    return help_row(make_option_name(opt, is_positional) + make_option_opts(opt), make_option_desc(opt),
                    get_column_width());
  }
  // The first lines of the help: the command's summary, wrapped.
  std::string make_description(const CLI::App* app) const override {
    const std::string text = CLI::Formatter::make_description(app);
    std::string out;
    std::size_t at = 0;
    while (at < text.size()) {
      const std::size_t newline = std::min(text.find('\n', at), text.size());
      for (const auto& line : wrap_words(text.substr(at, newline - at), output_width())) out += line + "\n";
      at = newline + 1;
    }
    return out;
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    return help_row(sub->get_display_name(true), sub->get_description(), get_column_width());
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> wrapping_formatter() { return std::make_shared<WrappingFormatter>(); }

}  // namespace orc::cli
