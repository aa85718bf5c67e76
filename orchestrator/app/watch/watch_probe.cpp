// Probing a toolkit image before the watcher builds in it (watch/probe.hpp):
// `nvcc --version` and `nvcc --list-gpu-code` in a container of the image,
// no network, removed after; the answer kept by the image's registry digest.
#include <ctime>
#include <ostream>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/app/watch/watch_detail.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app::detail {

namespace {

// Sink for a probe's output.
class Collect final : public engine::LogSink {
 public:
  void on_output(engine::OutputStream, std::string_view bytes) override {
    if (m_text.size() < (1u << 20)) m_text.append(bytes);
  }
  const std::string& text() const { return m_text; }

 private:
  std::string m_text;
};

std::string utc_now() { return cache::utc_rfc3339(std::time(nullptr)); }

// `nvcc --version` and `nvcc --list-gpu-code` in a container of the image
// (no network, removed after).
std::expected<watch::Probe, std::string> run_probe(engine::DockerEngine& engine, const std::string& image,
                                                   const std::string& digest) {
  const auto nvcc = [&](const char* option) -> std::expected<std::string, std::string> {
    Collect out;
    const engine::BuildSpec spec{.image = image,
                                 .argv = {std::string(compat::k_default_host_cuda) + "/bin/nvcc", option},
                                 .labels = {{std::string(engine::k_managed_label), "probe"}},
                                 .network = "none"};
    auto ran = engine.run(spec, out);
    if (!ran)
      return std::unexpected("running nvcc " + std::string(option) + " in " + image + ": " + ran.error().message);
    if (ran->exit_code != 0)
      return std::unexpected("nvcc " + std::string(option) + " in " + image + " exited " +
                             std::to_string(ran->exit_code) + ": " +
                             std::string(util::trim(out.text())).substr(0, 300));
    return out.text();
  };
  auto version_text = nvcc("--version");
  if (!version_text) return std::unexpected(version_text.error());
  const auto version = compat::parse_nvcc_version(*version_text);
  if (!version) return std::unexpected("nvcc --version in " + image + " said no release we can read");
  auto list_text = nvcc("--list-gpu-code");
  if (!list_text) return std::unexpected(list_text.error());
  auto sass = watch::parse_gpu_code_list(*list_text);
  if (!sass) return std::unexpected("nvcc --list-gpu-code in " + image + ": " + sass.error());
  return watch::Probe{.image = image, .digest = digest, .nvcc = *version, .sass = *sass, .probed_at = utc_now()};
}

}  // namespace

std::string describe(const watch::Probe& probe) {
  std::vector<std::string> names;
  for (const auto& cc : probe.sass) names.push_back(cc.sm());
  return "nvcc " + probe.nvcc.str() + ": " + util::join(names, " ");
}

std::expected<watch::Probe, std::string> probe_image(const WatchRequest& request, engine::DockerEngine& engine,
                                                     const std::string& image, const std::string& digest,
                                                     std::vector<watch::Probe>& probes) {
  if (const watch::Probe* known = watch::find_probe(probes, digest)) return *known;
  if (request.progress) *request.progress << "watch: probing nvcc in " << image << "\n";
  auto probe = run_probe(engine, image, digest);
  if (!probe) return probe;
  probes.push_back(*probe);
  if (auto recorded = watch::record_probe(probes_path(), *probe); !recorded && request.progress)
    *request.progress << "watch: warning: the probe of " << image << " is not kept: " << recorded.error() << "\n";
  return probe;
}

}  // namespace orc::app::detail
