// Build steps: an argv list, a command line split like a shell splits words
// (quotes only), or a script file. Nothing here ever reaches a shell, so a
// step can carry recipe text without quoting hazards.
#include <algorithm>
#include <array>

#include "orchestrator/recipe/parse.hpp"
#include "orchestrator/recipe/schema.hpp"

namespace orc::recipe::detail {

namespace {

// Words a user expects a shell to interpret; as argv they become literal
// arguments, which is almost never what was meant.
constexpr std::array<std::string_view, 9> k_shell_operators = {"&&", "||", "|", ";", ">", ">>", "<", "2>&1", "&"};

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

std::expected<std::vector<std::string>, std::string> split_command(std::string_view line) {
  std::vector<std::string> argv;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : line) {
    if (quote != 0) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      // Quotes join the word they touch: --name="a b" is one argument.
      quote = c;
      in_word = true;
    } else if (is_blank(c)) {
      if (in_word) argv.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) return std::unexpected(std::string("unterminated ") + quote + " in build step");
  if (in_word) argv.push_back(std::move(word));
  return argv;
}

std::optional<BuildStep> parse_build_step(Reader& reader, const YAML::Node& node) {
  BuildStep step{.where = reader.where(node)};
  if (node.IsSequence()) {
    bool ok = true;
    for (const auto& arg : node) {
      if (auto text = reader.string(arg, "in a build step's arguments"))
        step.argv.push_back(std::move(*text));
      else
        ok = false;
    }
    if (ok && step.argv.empty()) reader.error(node, "empty build step");
    if (!ok || step.argv.empty()) return std::nullopt;
    return step;
  }
  if (node.IsScalar()) {
    auto argv = split_command(node.Scalar());
    if (!argv) {
      reader.error(node, argv.error());
      return std::nullopt;
    }
    if (argv->empty()) {
      reader.error(node, "empty build step");
      return std::nullopt;
    }
    for (const std::string& word : *argv) {
      if (std::ranges::find(k_shell_operators, word) != k_shell_operators.end()) {
        reader.warning(node, "build step passes '" + word +
                                 "' to the program as an argument; steps are not run by a shell (use {script: FILE})");
        break;
      }
    }
    step.argv = std::move(*argv);
    return step;
  }
  if (node.IsMap()) {
    const Fields fields = reader.fields(node, k_step_keys);
    if (!reader.require(fields, node, k_step_keys)) return std::nullopt;
    const Field* script = fields.find("script");
    const auto path = reader.string(script->value, "for 'script'");
    if (!path) return std::nullopt;
    if (path->empty()) {
      reader.error(script->value, "empty script path");
      return std::nullopt;
    }
    step.script = reader.file().resolve(*path);
    return step;
  }
  reader.error(node, "expected a build step (a list of arguments, a command line, or {script: FILE}), got " +
                         std::string(kind_name(node)));
  return std::nullopt;
}

}  // namespace orc::recipe::detail
