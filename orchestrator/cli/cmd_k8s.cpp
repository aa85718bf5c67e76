#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

#include "orchestrator/app/cluster/k8s.hpp"
#include "orchestrator/cli/commands.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/process.hpp"

namespace orc::cli {

namespace {

constexpr const char* k_footer = R"(Prints batch/v1 Job manifests: per recipe of the tier, a build Job (the
plan's build image, the tool copied in from --tool-image, no GPU) and, for
the newest verified set in the local store, a smoke Job per compute
capability of the tier on a node GPU Feature Discovery labels with it
(nvidia.com/gpu.compute.major/minor, or the tier's kubernetes: selector),
with one nvidia.com/gpu and NVIDIA_REQUIRE_CUDA / NVIDIA_REQUIRE_ARCH from
the set's embedded archs, so the NVIDIA container toolkit refuses a node the
set cannot run on.

Build Jobs apply as rendered, or are not rendered. Their image is a registry
image: an offline image as `orchestrate images push NAME` pushed it to the
remote, by digest (never the engine's local tag; the host-mount image is
refused, a pod has no host CUDA), or an official tag. A recipe with a local
`source: {path: ...}` is built from a signed snapshot of that tree on the
remote (its tree hash names it; the Job checks digest, signature and tree
before it builds): --push ships the snapshots the remote lacks. An image
not pushed or a source not shipped is an error naming the command to run.

The Jobs expect, in their namespace: ConfigMap orchestrate-config (the
configuration), Secret orchestrate-registry with key `remote` (the remote's
URL with its credentials), Secret orchestrate-keys (signing keys). --apply
pipes the manifests to `kubectl apply -f -` (kubectl's current context).

Exit codes: 0 ok; 2 an unknown tier or recipe, an image not pushed, a
source not shipped; 3 the registry or kubectl (--apply) failed.)";

}  // namespace

void attach_k8s(CLI::App& sub, Io& io) {
  sub.require_subcommand(1);
  struct Options {
    std::string tier;
    std::vector<std::string> recipes;
    std::string file;
    std::string tool_image = "orchestrate:latest";
    std::string namespace_;
    std::string pull_secret;
    bool apply = false;
    bool push = false;
    std::string only;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* render = sub.add_subcommand("render", "Kubernetes Jobs that build a tier's recipes and smoke-test them");
  render->footer(k_footer);
  render->add_option("tier", opt->tier, "The tier")->required();
  render->add_option("-r,--recipe", opt->recipes, "Only this recipe (repeatable)");
  render->add_option("-f,--file", opt->file,
                     "Configuration file (default: ./orchestrate.yaml, else ./recipes/orchestrate.yaml)");
  render->add_option("--tool-image", opt->tool_image, "The orchestrate image (docker/Dockerfile) the cluster pulls");
  render->add_option("--namespace", opt->namespace_, "metadata.namespace of every Job");
  render->add_option("--pull-secret", opt->pull_secret, "imagePullSecrets of every Job");
  render->add_flag("--apply", opt->apply, "Apply them with kubectl (its current context)");
  render->add_option("--only", opt->only, "Only the build Jobs, or only the smoke Jobs")
      ->check(CLI::IsMember({"build", "smoke"}));
  render->add_flag("--push", opt->push,
                   "Ship the recipes' local sources the remote lacks, as signed snapshots the build Jobs fetch");
  render->callback([opt, &io] {
    const app::K8sRender out =
        app::k8s_render(app::K8sRenderRequest{.config = site::locate_config(opt->file),
                                              .tier = opt->tier,
                                              .recipes = opt->recipes,
                                              .store_root = {},
                                              .tool_image = opt->tool_image,
                                              .namespace_ = opt->namespace_,
                                              .pull_secret = opt->pull_secret,
                                              .push = opt->push,
                                              .only = opt->only == "build"   ? app::K8sOnly::build
                                                      : opt->only == "smoke" ? app::K8sOnly::smoke
                                                                             : app::K8sOnly::all});
    for (const auto& line : out.shipped) io.err << "orchestrate: " << line << "\n";
    if (!opt->apply) {
      io.out << out.yaml;
      return;
    }
    const auto dir = std::filesystem::temp_directory_path();
    const auto file = util::temp_name(dir, "orchestrate-k8s");
    if (auto wrote = util::write_file_atomic(file, out.yaml); !wrote)
      throw util::Failure(util::ExitCode::outside_failure, wrote.error().message);
    auto ran = util::run_process({.argv = {"kubectl", "apply", "-f", "-"}, .stdin_file = file, .merge_stderr = true});
    std::filesystem::remove(file);
    if (!ran) throw util::Failure(util::ExitCode::outside_failure, "kubectl: " + ran.error().message);
    io.out << ran->out;
    if (!ran->ok())
      throw util::Failure(util::ExitCode::outside_failure,
                          "kubectl apply failed (exit " + std::to_string(ran->status()) + ")");
  });
}

}  // namespace orc::cli
