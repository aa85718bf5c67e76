// `image: REPO` and `stamp: true` on a recipe: after a container engine's
// build (or a cache hit), the image REPO:TIER is made through the engine's
// POST /build: the build image, the artifact set's files under
// /opt/orchestrate/RECIPE/, labels naming the set; with `stamp: true` also
// NVIDIA_REQUIRE_CUDA and NVIDIA_REQUIRE_ARCH of the verified artifacts
// (app/stamp/stamp.hpp), which the build's verification judged on the tier.
#include <fstream>

#include "orchestrator/app/build/build_job.hpp"
#include "orchestrator/app/stamp/stamp.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/inspect/inspection.hpp"

namespace orc::app::detail {

namespace fs = std::filesystem;

namespace {

class Discard final : public engine::LogSink {
 public:
  void on_output(engine::OutputStream, std::string_view bytes) override {
    m_tail += bytes;
    if (m_tail.size() > 4096) m_tail.erase(0, m_tail.size() - 4096);
  }
  std::string m_tail;  // the builder's last words, for an error
};

std::string dockerfile_string(const std::string& value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

void make_image(BuildJob& job, const engine::Discovery& discovery) {
  const recipe::Recipe& recipe = *job.plan.recipe;
  BuildResult& result = job.result;
  if (recipe.image.empty() || result.exit_code != util::ExitCode::ok || result.status == BuildStatus::failed) return;
  if (discovery.kind == engine::EngineKind::host) {
    result.warnings.push_back("image: " + recipe.image +
                              " is made only in a container engine; this build ran on the host");
    return;
  }
  const std::string tag = recipe.image + ":" + result.tier;
  const auto failed = [&](const std::string& why) {
    result.status = BuildStatus::failed;
    result.exit_code = util::ExitCode::outside_failure;
    result.errors.push_back("making the image " + tag + ": " + why);
  };

  std::error_code ec;
  const fs::path context = fs::temp_directory_path() / ("orchestrate-image-" + result.recipe + "-" + result.tier + "-" +
                                                        std::to_string(::getpid()));
  fs::remove_all(context, ec);
  fs::create_directories(context / "files", ec);
  std::vector<fs::path> copies;
  for (const auto& a : result.artifacts) {
    const fs::path into = context / "files" / fs::path(a.name).lexically_normal();
    fs::create_directories(into.parent_path(), ec);
    if (!fs::copy_file(a.path, into, fs::copy_options::overwrite_existing, ec)) {
      fs::remove_all(context, ec);
      return failed("cannot copy " + a.name + ": " + ec.message());
    }
    fs::permissions(into,
                    fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                        fs::perms::others_exec,
                    ec);
    copies.push_back(into);
  }
  std::string dockerfile = "FROM " + job.image.reference + "\nCOPY files/ /opt/orchestrate/" + result.recipe + "/\n";
  dockerfile += "LABEL org.orchestrate.recipe=" + dockerfile_string(result.recipe) +
                " org.orchestrate.tier=" + dockerfile_string(result.tier);
  if (result.manifest) dockerfile += " org.orchestrate.set=" + dockerfile_string(result.manifest->to_string());
  dockerfile += "\n";
  if (recipe.stamp) {
    const StampValues values = stamp_values(inspect::inspect_files(copies, {.modules = true}), false);
    if (values.runs_nowhere) {
      fs::remove_all(context, ec);
      result.status = BuildStatus::failed;
      result.exit_code = util::ExitCode::check_failed;
      result.errors.push_back("stamp: the artifacts share no GPU they all run on");
      return;
    }
    std::string env;
    if (!values.require_cuda.empty()) env += " NVIDIA_REQUIRE_CUDA=" + dockerfile_string(values.require_cuda);
    if (!values.require_arch.empty()) env += " NVIDIA_REQUIRE_ARCH=" + dockerfile_string(values.require_arch);
    if (!env.empty()) dockerfile += "ENV" + env + "\n";
    result.image_env.clear();
    if (!values.require_cuda.empty()) result.image_env.push_back("NVIDIA_REQUIRE_CUDA=" + values.require_cuda);
    if (!values.require_arch.empty()) result.image_env.push_back("NVIDIA_REQUIRE_ARCH=" + values.require_arch);
  }
  {
    std::ofstream out(context / "Dockerfile");
    out << dockerfile;
  }
  auto engine = engine::DockerEngine::connect(discovery.socket);
  if (!engine) {
    fs::remove_all(context, ec);
    return failed(engine.error().message);
  }
  Discard log;
  auto built = engine->build_image(context, tag, engine::ImageBuildOptions{}, log);
  fs::remove_all(context, ec);
  if (!built) return failed(built.error().message + (log.m_tail.empty() ? "" : "; the builder said: " + log.m_tail));
  result.image_made = tag + " (" + built->id + ")";
}

}  // namespace orc::app::detail
