// Build steps: an argv list, a command line split like a shell splits words
// (quotes only), or a script file. Nothing here ever reaches a shell, so a
// step can carry recipe text without quoting hazards.
#include <algorithm>
#include <array>

#include "orchestrator/recipe/parse.hpp"
#include "orchestrator/recipe/schema.hpp"

namespace orc::recipe::detail {

namespace {

// What users write when they expect a shell, which reaches the program as
// literal text (recipes/schema.md, "build", states the same rules).
// Operators and redirections as a word of their own:
constexpr std::array<std::string_view, 9> k_shell_words = {"&&", "||", "|", ";", "&", ">", ">>", "<", "2>&1"};
// Anywhere in an argument: no program takes these literally.
constexpr std::array<std::string_view, 4> k_shell_anywhere = {"&&", "||", "`", "$("};
// At the start of an argument: a redirection glued to its file (">log").
constexpr std::array<std::string_view, 4> k_redirect_prefixes = {">", "<", "&>", "2>"};
// At either end of an argument or beside a blank in it ("make; make
// install", "ls | head"); between other characters they are left alone,
// since CMake lists are written "80;90".
constexpr std::string_view k_separators = ";|";

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The separator of `arg` that sits at an end of it or beside a blank; 0 if none.
char loose_separator(std::string_view arg) {
  for (std::size_t i = 0; i < arg.size(); ++i) {
    if (k_separators.find(arg[i]) == std::string_view::npos) continue;
    const bool at_end = i == 0 || i + 1 == arg.size();
    if (at_end || is_blank(arg[i - 1]) || is_blank(arg[i + 1])) return arg[i];
  }
  return 0;
}

// The shell syntax in one argument, or empty when it has none.
std::string shell_syntax(std::string_view arg) {
  if (std::ranges::find(k_shell_words, arg) != k_shell_words.end()) return std::string(arg);
  for (std::string_view token : k_shell_anywhere)
    if (arg.find(token) != std::string_view::npos) return std::string(token);
  for (std::string_view prefix : k_redirect_prefixes)
    if (arg.starts_with(prefix)) return std::string(prefix);
  if (const char c = loose_separator(arg)) return std::string(1, c);
  return {};
}

// Warns once per step, at the first argument holding shell syntax. The code
// argument of `-c`/`-e` (sh -c, python -c, perl -e) is the program's own
// syntax and is not judged.
void warn_shell_syntax(Reader& reader, std::span<const std::string> argv, std::span<const YAML::Node> nodes) {
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (i > 0 && (argv[i - 1] == "-c" || argv[i - 1] == "-e")) continue;
    const std::string found = shell_syntax(argv[i]);
    if (found.empty()) continue;
    reader.warning(nodes[std::min(i, nodes.size() - 1)],
                   "build step argument holds '" + found +
                       "', but no shell runs build steps: the program gets it as literal text; split it into "
                       "separate arguments, or run a shell explicitly ([sh, -c, \"...\"] or {script: FILE})");
    return;
  }
}

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
    std::vector<YAML::Node> nodes;
    for (const auto& arg : node) {
      if (auto text = reader.string(arg, "in a build step's arguments"))
        step.argv.push_back(std::move(*text));
      else
        ok = false;
      nodes.push_back(arg);
    }
    if (ok && step.argv.empty()) reader.error(node, "empty build step");
    if (!ok || step.argv.empty()) return std::nullopt;
    warn_shell_syntax(reader, step.argv, nodes);
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
    // The words of a command line have no nodes of their own: the line's.
    const std::array<YAML::Node, 1> line{node};
    warn_shell_syntax(reader, *argv, line);
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
