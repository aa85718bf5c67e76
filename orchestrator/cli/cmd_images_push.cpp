#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

#include "orchestrator/app/images/images_push.hpp"
#include "orchestrator/cli/commands.hpp"
#include "orchestrator/site/config_path.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(Pushes build images made by `images build` from the engine to the remote
(ORCHESTRATE_REMOTE, else `remote:` of the configuration) as OCI images,
under the remote's repository: with the remote http://HOST/team/artifacts,
orchestrate/cuda:12.4-trixie becomes HOST/team/artifacts/orchestrate/cuda.
The pushed reference and its manifest digest are recorded with the image
(images list --json shows them as "pushed"); `k8s render` names build
images by that digest. Layers go uncompressed (the engine's own bytes, so a
layer's digest is its diff ID); an image recorded as pushed that the remote
still has is not read again. A rebuilt image must be pushed again.

Exit codes: 0 ok; 2 an unknown image, one not built here, no remote;
3 the engine or the registry failed.)";

std::string render_text(const app::ImagePushReport& report) {
  std::string out;
  for (const auto& i : report.images) {
    if (i.up_to_date) {
      out += i.name + ": up to date at " + report.remote + "\n";
    } else {
      out += i.name + ": pushed to " + report.remote + " (" + std::to_string(i.uploaded) + " blobs sent, " +
             std::to_string(i.skipped) + " already there; " + std::to_string(i.bytes / (1 << 20)) + " MiB)\n";
    }
    out += "  " + i.pushed + "\n";
  }
  return out;
}

nlohmann::ordered_json render_json(const app::ImagePushReport& report) {
  nlohmann::ordered_json images = nlohmann::ordered_json::array();
  for (const auto& i : report.images)
    images.push_back({{"name", i.name},
                      {"reference", i.reference},
                      {"pushed", i.pushed},
                      {"up_to_date", i.up_to_date},
                      {"bytes", i.bytes},
                      {"uploaded", i.uploaded},
                      {"skipped", i.skipped}});
  return {{"remote", report.remote}, {"images", images}};
}

}  // namespace

void attach_images_push(CLI::App& images, Io& io) {
  struct Options {
    std::vector<std::string> names;
    bool all = false;
    std::string file;
    std::string socket;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* push = images.add_subcommand("push", "Push built images to the remote, for a cluster to pull");
  push->footer(k_footer);
  push->add_option("name", opt->names, "Images to push: names or references (images list)");
  push->add_flag("--all", opt->all, "Every image built here");
  push->add_option("-f,--file", opt->file,
                   "Configuration file with `remote:` (default: ./orchestrate.yaml, else ./recipes/orchestrate.yaml)");
  push->add_option("--engine-socket", opt->socket, "The engine's API socket (default: discovered)");
  push->add_flag("--json", opt->json, "Print {\"remote\", \"images\": [...]} as JSON");
  push->callback([opt, &io] {
    app::ImagePushRequest request{.names = opt->names, .all = opt->all, .config = site::locate_config(opt->file)};
    if (!opt->socket.empty()) request.engine_socket = opt->socket;
    const app::ImagePushReport report = app::push_images(request, io.err);
    io.out << (opt->json ? render_json(report).dump(2) + "\n" : render_text(report));
    io.exit_code = report.exit_code;
  });
}

}  // namespace orc::cli
