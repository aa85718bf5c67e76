#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

#include "orchestrator/app/cache/cache_cmd.hpp"
#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/cli/commands.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/site/config_path.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(The store is $ORCHESTRATE_CACHE_DIR, else $XDG_CACHE_HOME/orchestrate, else
~/.cache/orchestrate.

A store whose index is missing, damaged or of another version is refused by
every command (gc above all: the index says which blobs are wanted) until
'orchestrate cache verify --rebuild-index' makes a new one from the manifests
in the store (the old one is kept in quarantine.v1/).

gc removes the scratch trees of builds that are gone (their owner lock is
free), and works on a full file system. ls and verify read a store on a
read-only or full file system without writing (verify then moves nothing).

Exit codes: 0 ok; 1 verify found corrupt or missing blobs (moved to
quarantine.v1/, their artifact sets dropped); 2 bad usage, or the store's
index is missing, damaged or of another version; 3 the file system failed
(full, or read-only for a command that must write, gc included; gc --keep
on a disk still full after gc's removals).)";

}  // namespace

void attach_cache(CLI::App& sub, Io& io) {
  auto request = std::make_shared<app::CacheRequest>();
  sub.require_subcommand(1);
  sub.footer(k_footer);

  CLI::App* ls = sub.add_subcommand("ls", "List the artifact sets in the local store, newest first");
  ls->add_option("-r,--recipe", request->recipe, "Only this recipe");
  ls->add_option("-t,--tier", request->tier, "Only this tier");
  ls->add_flag("--json", request->json, "Print {\"store\", \"sets\": [...]} as JSON on stdout, nothing else");
  ls->callback([request, &io] { emit(io, app::cache_ls(*request), request->json ? Format::json : Format::text); });

  CLI::App* verify =
      sub.add_subcommand("verify", "Re-hash every blob; quarantine corrupt ones and drop the sets that name them");
  verify->add_flag("--json", request->json, "Print the report as JSON on stdout, nothing else");
  verify->add_flag("--rebuild-index", request->rebuild_index,
                   "First make a new index from the manifests, signatures and packs among the blobs (the old one "
                   "is kept in quarantine.v1/); a set is verified when a trusted key signed it");
  auto file = std::make_shared<std::string>();
  verify->add_option("-f,--file", *file,
                     "Configuration whose trusted_keys count for --rebuild-index (default: ./orchestrate.yaml, "
                     "else ./recipes/orchestrate.yaml)");
  verify->callback([request, file, &io] {
    if (request->rebuild_index) request->config = site::locate_config(*file);
    emit(io, app::cache_verify(*request), request->json ? Format::json : Format::text);
  });

  CLI::App* gc = sub.add_subcommand("gc", "Remove blobs no artifact set names and temporaries left by crashes");
  auto keep_value = std::make_shared<std::size_t>(0);
  auto* keep = gc->add_option("--keep", *keep_value, "Keep only the N newest artifact sets per recipe x tier")
                   ->check(CLI::Validator(
                       [](std::string& text) -> std::string {
                         if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) return "";
                         return "expected a number of artifact sets (0 or more), not '" + text + "'";
                       },
                       "N"));
  gc->add_flag("--json", request->json, "Print the report as JSON on stdout, nothing else");
  auto remote = std::make_shared<bool>(false);
  gc->add_flag("--remote", *remote,
               "With --keep N: also delete the older sets of each recipe x tier from the remote (its manifests, "
               "tags and signatures; the registry must allow deletes)");
  auto gc_file = std::make_shared<std::string>();
  gc->add_option("-f,--file", *gc_file, "Configuration naming the remote and its recipes x tiers (with --remote)");
  gc->callback([request, keep, keep_value, remote, gc_file, &io] {
    if (keep->count() > 0) request->keep = *keep_value;
    if (*remote && (!request->keep || *request->keep == 0))
      throw util::Failure(util::ExitCode::bad_input, "--remote needs --keep N (1 or more)");
    emit(io, app::cache_gc(*request), request->json ? Format::json : Format::text);
    if (!*remote || io.exit_code != util::ExitCode::ok) return;
    const app::PruneReport pruned = app::prune_remote(site::locate_config(*gc_file), *request->keep);
    for (const auto& r : pruned.removed)
      io.err << "orchestrate: remote: removed " << r.recipe << " for " << r.tier << " " << r.artifact.to_string()
             << " (" << r.created << ")\n";
    io.err << "orchestrate: remote " << pruned.remote << ": " << pruned.removed.size() << " sets removed, "
           << pruned.kept << " kept\n";
    if (!pruned.error.empty()) io.err << "orchestrate: error: " << pruned.error << "\n";
    io.exit_code = std::max(io.exit_code, pruned.exit_code);
  });
}

}  // namespace orc::cli
