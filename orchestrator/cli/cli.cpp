#include "orchestrator/cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <ostream>
#include <span>
#include <vector>

#include "orchestrator/cli/commands.hpp"
#include "orchestrator/cli/help_format.hpp"
#include "orchestrator/cli/table.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/strings.hpp"
#include "orchestrator/version.hpp"

namespace orc::cli {

namespace {

using util::ExitCode;

constexpr std::array<Command, 21> k_commands{{
    {"plan", "Resolve every recipe x tier: toolkit, cuDNN, archs and the framework's arch variables", attach_plan},
    {"gpus", "List the GPU database, or look up one GPU by product name", attach_gpus},
    {"toolkits", "List the CUDA toolkit table (archs, driver, host compilers) or, with --cudnn, the cuDNN table",
     attach_toolkits},
    {"inspect",
     "List the SASS and PTX that binaries, archives and packages embed; with --gpu/--cc/--tier, where they run",
     attach_inspect},
    {"stamp",
     "Write NVIDIA_REQUIRE_CUDA and NVIDIA_REQUIRE_ARCH into an image's config, so a node that cannot run it refuses "
     "it",
     attach_stamp},
    {"build",
     "Build recipes for a tier in a container engine (or on the host), verify the archs they embed, and store them",
     attach_build},
    {"images", "List the build-image catalog, build an offline image (Debian packages), push it", attach_images},
    {"key", "Generate, export and trust the Ed25519 keys that sign and verify manifests", attach_key},
    {"cache", "The local store: list artifact sets, verify every blob, collect garbage", attach_cache},
    {"push", "Push artifact sets from the local store to the OCI registry remote (blobs, manifest, signature, tags)",
     attach_push},
    {"promote",
     "Make a given artifact set the current one of a recipe x tier, in the local store and on the remote (its tag)",
     attach_promote},
    {"pull", "Pull an artifact set from the remote into the local store: digests, signature and archs checked",
     attach_pull},
    {"fetch",
     "Fetch the newest verified artifact set of a recipe for a tier (or a digest), verify it, unpack it safely",
     attach_fetch},
    {"watch",
     "Poll the configuration's base-image registries, NVIDIA's indexes and Debian's archive, and rebuild each recipe x "
     "tier a newer "
     "toolkit or a rebuilt base makes stale (--once, or --interval D as a service)",
     attach_watch},
    {"schedule", "Print systemd service and timer units (--systemd) or a crontab line (--cron) that run the watcher",
     attach_schedule},
    {"tiers", "Propose tiers from the cluster's inventory: nvidia-smi CSV, Slurm node records, GFD node labels",
     attach_tiers},
    {"k8s", "Render Kubernetes Jobs that build a tier's recipes and smoke-test them on its GPUs (GFD labels)",
     attach_k8s},
    {"smoke",
     "Build the smoke kernels for a tier and run them on this machine's GPUs: native, jit or none, and results",
     attach_smoke},
    {"doctor", "This node's GPUs, driver, toolkits and frameworks; the site's engine, images, remote, keys and Slurm",
     attach_doctor},
    {"completion", "Print the bash or zsh completion script (generated from this command table)", attach_completion},
    {"man", "Print the orchestrate(1) man page in roff (generated from the same help as --help)", attach_man},
}};

const std::string k_version_line = "orchestrate " + std::string(orc::k_version);

ExitCode report(std::ostream& err, const util::Failure& failure) {
  for (const auto& d : failure.diagnostics()) err << d.render();
  return failure.code();
}

ExitCode usage_error(std::ostream& err, const std::string& message, const std::string& suggestion = {}) {
  err << util::Diagnostic{.message = suggestion.empty() ? message + " (see 'orchestrate --help')" : message,
                          .suggestion = suggestion}
             .render();
  return ExitCode::bad_input;
}

// One value per flag occurrence, as docker and pip take them: `--tier a
// --tier b`, never `--tier a b`, so a flag cannot swallow the positionals
// after it (`inspect --tier new a.so b.so`). Set here, once, for every
// command's repeatable options.
void one_value_per_occurrence(CLI::App& app) {
  for (CLI::Option* option : app.get_options())
    if (option->nonpositional() && option->get_items_expected_max() > 1) option->allow_extra_args(false);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) one_value_per_occurrence(*sub);
}

// A command of subcommands (key, cache, images) run bare prints its own
// help on stderr and exits 2, as git does, instead of CLI11's one line.
void help_when_bare(CLI::App& sub, Io& io) {
  if (sub.get_subcommands([](CLI::App*) { return true; }).empty()) return;
  sub.require_subcommand(0, 1);
  sub.callback([&sub, &io] {
    if (!sub.get_subcommands().empty()) return;
    std::vector<std::string> names;
    for (const CLI::App* s : sub.get_subcommands([](CLI::App*) { return true; })) names.push_back(s->get_name());
    io.err << sub.help("orchestrate");
    throw util::Failure(ExitCode::bad_input, "orchestrate " + sub.get_name() +
                                                 " needs a subcommand: " + util::join(names, ", ") +
                                                 " (see 'orchestrate " + sub.get_name() + " --help')");
  });
}

}  // namespace

std::span<const Command> command_table() { return k_commands; }

namespace {

ExitCode parse_and_run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"Orchestrate: builds CUDA software for every GPU generation of a cluster, and proves what it built.",
               "orchestrate"};
  Io io{.out = out, .err = err, .exit_code = ExitCode::ok, .root = &app, .version = k_version_line};
  app.formatter(wrapping_formatter());  // before the subcommands, which copy it
  app.require_subcommand(1);
  app.set_version_flag("--version", k_version_line);
  std::vector<std::string> names;
  // Start-up time: only a subcommand the command line names gets its options
  // (building all thirteen took 0.25 of --version's 1.5 ms, bench/startup.sh);
  // the others are there by name and summary for the top-level help and
  // did-you-mean.
  const std::span<const char* const> words(argv + 1, argc > 1 ? static_cast<std::size_t>(argc - 1) : 0);
  // The completion scripts and the man page describe every command's options.
  const bool all = std::ranges::any_of(
      words, [](const char* w) { return std::string_view(w) == "completion" || std::string_view(w) == "man"; });
  for (const auto& c : k_commands) {
    CLI::App* sub = app.add_subcommand(std::string(c.name), std::string(c.summary));
    if (all || std::ranges::any_of(words, [&](const char* w) { return c.name == w; })) {
      c.attach(*sub, io);
      help_when_bare(*sub, io);
    }
    names.emplace_back(c.name);
  }
  // What a Slurm job of `build/smoke --engine slurm` runs on its node
  // (cmd_job.cpp): hidden from the help, the completion and the man page.
  CLI::App* job = app.add_subcommand("job", "Run one Slurm job's work on this node (written by --engine slurm)");
  job->group("");
  if (argc > 1 && std::string_view(argv[1]) == "job") {
    attach_job(*job, io);
    help_when_bare(*job, io);
  }
  names.emplace_back("job");
  app.footer(util::render_environment_help(output_width()));
  one_value_per_occurrence(app);
  // An unknown subcommand gets a did-you-mean, which CLI11 does not offer.
  if (argc > 1 && argv[1][0] != '-' && std::ranges::find(names, argv[1]) == names.end())
    return usage_error(err, "unknown command '" + std::string(argv[1]) + "'", util::did_you_mean(argv[1], names));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    // Help for the (sub)subcommand that was asked about, when one was.
    const CLI::App* asked = &app;
    std::string prefix;
    while (!asked->get_subcommands().empty()) {
      prefix += (prefix.empty() ? "" : " ") + asked->get_name();
      asked = asked->get_subcommands().front();
    }
    out << (asked == &app ? app.help() : asked->help(prefix));
    return ExitCode::ok;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return ExitCode::ok;
  } catch (const CLI::CallForVersion& v) {
    out << v.what() << '\n';
    return ExitCode::ok;
  } catch (const CLI::ParseError& e) {
    return usage_error(err, e.what());
  } catch (const util::Failure& f) {
    return report(err, f);
  } catch (const std::exception& e) {
    err << util::Diagnostic{.message = std::string("internal error: ") + e.what()}.render();
    return ExitCode::outside_failure;
  }
  return io.exit_code;
}

}  // namespace

ExitCode run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  errno = 0;
  const ExitCode code = parse_and_run(argc, argv, out, err);
  // Output that could not be written (a full disk, a closed pipe) is the
  // world's failure, whatever the command found: a script must not read a
  // truncated report as a complete one.
  if (!out.flush()) {
    const int why = errno;
    err << util::Diagnostic{.message = "could not write the output to stdout" +
                                       (why != 0 ? ": " + std::string(std::strerror(why)) : std::string())}
               .render();
    return ExitCode::outside_failure;
  }
  return code;
}

}  // namespace orc::cli
