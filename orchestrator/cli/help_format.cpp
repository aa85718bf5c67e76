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

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t newline = std::min(text.find('\n', at), text.size());
    out.push_back(text.substr(at, newline - at));
    at = newline + 1;
  }
  return out;
}

bool prose(const std::string& line) { return !line.empty() && line[0] != ' '; }

// Where an indented row's wrapped lines start: its second column (after
// the first gap of two spaces or more past its first word), else its indent.
std::size_t hanging_column(const std::string& line) {
  const std::size_t indent = line.find_first_not_of(' ');
  const std::size_t gap = line.find("  ", indent);
  if (gap == std::string::npos) return indent;
  const std::size_t second = line.find_first_not_of(' ', gap);
  return second == std::string::npos ? indent : second;
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
  std::string make_footer(const CLI::App* app) const override {
    const std::string footer = app->get_footer();
    return footer.empty() ? footer : reflow_footer(footer, output_width()) + "\n";
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    return help_row(sub->get_display_name(true), sub->get_description(), get_column_width());
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> wrapping_formatter() { return std::make_shared<WrappingFormatter>(); }

std::string reflow_footer(const std::string& text, std::size_t width) {
  const std::vector<std::string> lines = lines_of(text);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lines.size();) {
    if (prose(lines[i])) {
      // The run of prose lines: a heading ("Checks:") ends it.
      std::size_t end = i + 1;
      while (end < lines.size() && prose(lines[end]) && !lines[end - 1].ends_with(':')) ++end;
      const bool fits =
          std::all_of(lines.begin() + static_cast<std::ptrdiff_t>(i), lines.begin() + static_cast<std::ptrdiff_t>(end),
                      [&](const std::string& l) { return display_width(l) <= width; });
      if (fits) {
        out.insert(out.end(), lines.begin() + static_cast<std::ptrdiff_t>(i),
                   lines.begin() + static_cast<std::ptrdiff_t>(end));
      } else {
        std::string joined;
        for (std::size_t k = i; k < end; ++k) joined += (joined.empty() ? "" : " ") + lines[k];
        for (auto& l : wrap_words(joined, width)) out.push_back(std::move(l));
      }
      i = end;
      continue;
    }
    const std::string& line = lines[i++];
    if (display_width(line) <= width) {
      out.push_back(line);
      continue;
    }
    // The first column stays as written, its padding included.
    const std::size_t hang = hanging_column(line);
    for (auto& l : wrap_hanging(line.substr(hang), line.substr(0, hang), std::string(hang, ' '), width))
      out.push_back(std::move(l));
  }
  std::string joined;
  for (std::size_t k = 0; k < out.size(); ++k) joined += (k ? "\n" : "") + out[k];
  return joined;
}

}  // namespace orc::cli
