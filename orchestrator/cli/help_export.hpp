#pragma once
// Bash and zsh completion and the man page, generated from the one command
// table (the CLI11 tree cli::run builds from it), so a new command, flag or
// help line reaches all three without an edit here.
#include <string>

namespace CLI {
class App;
}

namespace orc::cli {

// A script for `source` (bash) or an fpath _orchestrate file (zsh).
std::string bash_completion(const CLI::App& root);
std::string zsh_completion(const CLI::App& root);
// orchestrate(1) in roff (man -l, groff -man).
std::string man_page(const CLI::App& root, const std::string& version);

}  // namespace orc::cli
