#include "orchestrator/cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <array>
#include <memory>
#include <ostream>
#include <vector>

#include "orchestrator/cli/commands.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/strings.hpp"
#include "orchestrator/version.hpp"

namespace orc::cli {

namespace {

using util::ExitCode;

constexpr std::array<Command, 13> k_commands{{
    {"plan", "Resolve every recipe x tier: toolkit, cuDNN, archs and the framework's arch variables", attach_plan},
    {"gpus", "List the GPU database, or look up one GPU by product name", attach_gpus},
    {"toolkits", "List the CUDA toolkit table (archs, driver, host compilers) or, with --cudnn, the cuDNN table",
     attach_toolkits},
    {"inspect",
     "List the SASS and PTX that binaries, archives and packages embed; with --gpu/--cc/--tier, where they run",
     attach_inspect},
    {"build",
     "Build recipes for a tier in a container engine (or on the host), verify the archs they embed, and store them",
     attach_build},
    {"images", "List the build-image catalog, or build an offline image (Debian packages, no registry)", attach_images},
    {"key", "Generate, export and trust the Ed25519 keys that sign and verify manifests", attach_key},
    {"cache", "The local store: list artifact sets, verify every blob, collect garbage", attach_cache},
    {"push", "Push artifact sets from the local store to the OCI registry remote (blobs, manifest, signature, tags)",
     attach_push},
    {"pull", "Pull an artifact set from the remote into the local store: digests, signature and archs checked",
     attach_pull},
    {"fetch",
     "Fetch the newest verified artifact set of a recipe for a tier (or a digest), verify it, unpack it safely",
     attach_fetch},
    {"smoke",
     "Build the smoke kernels for a tier and run them on this machine's GPUs: native, jit or none, and results",
     attach_smoke},
    {"doctor", "This node's GPUs, driver, toolkit, and whether installed frameworks have kernels for its GPUs",
     attach_doctor},
}};

int report(std::ostream& err, const util::Failure& failure) {
  for (const auto& d : failure.diagnostics()) err << d.render();
  return static_cast<int>(failure.code());
}

int usage_error(std::ostream& err, const std::string& message, const std::string& suggestion = {}) {
  err << util::Diagnostic{.message = suggestion.empty() ? message + " (see 'orchestrate --help')" : message,
                          .suggestion = suggestion}
             .render();
  return static_cast<int>(ExitCode::bad_input);
}

}  // namespace

std::span<const Command> command_table() { return k_commands; }

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  Io io{out, err};
  CLI::App app{"Orchestrate: builds CUDA software for every GPU generation of a cluster, and proves what it built.",
               "orchestrate"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "orchestrate " + std::string(k_version));
  std::vector<std::string> names;
  for (const auto& c : k_commands) {
    CLI::App* sub = app.add_subcommand(std::string(c.name), std::string(c.summary));
    c.attach(*sub, io);
    names.emplace_back(c.name);
  }
  // An unknown subcommand gets a did-you-mean, which CLI11 does not offer.
  if (argc > 1 && argv[1][0] != '-' && std::ranges::find(names, argv[1]) == names.end())
    return usage_error(err, "unknown command '" + std::string(argv[1]) + "'", util::did_you_mean(argv[1], names));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    // Help for the subcommand that was asked about, when one was.
    const auto subs = app.get_subcommands();
    out << (subs.empty() ? app.help() : subs.front()->help());
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion& v) {
    out << v.what() << '\n';
    return 0;
  } catch (const CLI::ParseError& e) {
    return usage_error(err, e.what());
  } catch (const util::Failure& f) {
    return report(err, f);
  } catch (const std::exception& e) {
    err << util::Diagnostic{.message = std::string("internal error: ") + e.what()}.render();
    return static_cast<int>(ExitCode::outside_failure);
  }
  return io.exit_code;
}

}  // namespace orc::cli
