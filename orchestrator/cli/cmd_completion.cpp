#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

#include "orchestrator/cli/commands.hpp"
#include "orchestrator/cli/help_export.hpp"

namespace orc::cli {

void attach_completion(CLI::App& sub, Io& io) {
  auto shell = std::make_shared<std::string>();
  sub.add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  sub.footer(R"(bash: source <(orchestrate completion bash), or save it as
/etc/bash_completion.d/orchestrate. zsh: save it as _orchestrate in a
directory of $fpath, or source <(orchestrate completion zsh) after compinit.)");
  sub.callback([shell, &io] { io.out << (*shell == "bash" ? bash_completion(*io.root) : zsh_completion(*io.root)); });
}

void attach_man(CLI::App& sub, Io& io) {
  sub.footer("Read it with: orchestrate man > orchestrate.1 && man -l orchestrate.1");
  sub.callback([&io] { io.out << man_page(*io.root, std::string(io.version)); });
}

}  // namespace orc::cli
