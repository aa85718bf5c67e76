#pragma once
// The subcommand table. Each subcommand lives in its own cmd_*.cpp: it turns
// options into a request, calls app/, and writes the result; no logic here.
#include <functional>
#include <iosfwd>
#include <span>
#include <string_view>

#include "orchestrator/util/diagnostic.hpp"

namespace CLI {
class App;
}

namespace orc::cli {

struct Io {
  std::ostream& out;
  std::ostream& err;
  util::ExitCode exit_code = util::ExitCode::ok;  // set by the command that ran
  // The whole command tree and the version, for what is generated from
  // them (completion, the man page).
  const CLI::App* root = nullptr;
  std::string_view version;
};

struct Command {
  std::string_view name;
  std::string_view summary;
  // Adds the subcommand's options to `sub` and sets its callback.
  void (*attach)(CLI::App& sub, Io& io);
};

std::span<const Command> command_table();

void attach_plan(CLI::App& sub, Io& io);
void attach_gpus(CLI::App& sub, Io& io);
void attach_toolkits(CLI::App& sub, Io& io);
void attach_inspect(CLI::App& sub, Io& io);
void attach_stamp(CLI::App& sub, Io& io);
void attach_images(CLI::App& sub, Io& io);
// `images push` (cmd_images_push.cpp), attached by attach_images.
void attach_images_push(CLI::App& images, Io& io);
void attach_build(CLI::App& sub, Io& io);
void attach_key(CLI::App& sub, Io& io);
void attach_cache(CLI::App& sub, Io& io);
void attach_watch(CLI::App& sub, Io& io);
void attach_schedule(CLI::App& sub, Io& io);
void attach_tiers(CLI::App& sub, Io& io);
void attach_job(CLI::App& sub, Io& io);
void attach_k8s(CLI::App& sub, Io& io);
void attach_push(CLI::App& sub, Io& io);
void attach_promote(CLI::App& sub, Io& io);
void attach_pull(CLI::App& sub, Io& io);
void attach_fetch(CLI::App& sub, Io& io);
void attach_smoke(CLI::App& sub, Io& io);
void attach_doctor(CLI::App& sub, Io& io);
void attach_completion(CLI::App& sub, Io& io);
void attach_man(CLI::App& sub, Io& io);

}  // namespace orc::cli
