#pragma once
// The Engine over the Docker Engine API (Docker, or Podman's compatible
// service): one container per run, created, started, followed, waited for,
// copied from and removed.
#include <filesystem>
#include <string>
#include <string_view>

#include "orchestrator/engine/docker.hpp"
#include "orchestrator/engine/engine.hpp"

namespace orc::engine {

class DockerEngine final : public Engine {
 public:
  // `cancel`, when given, is polled during every run: once set, the run
  // stops following, kills and removes its container, and returns a
  // cancelled Error.
  DockerEngine(DockerClient client, const CancelFlag* cancel = nullptr);

  // Connects to the engine at a unix socket (see DockerClient::connect).
  static std::expected<DockerEngine, Error> connect(const std::filesystem::path& socket,
                                                    const CancelFlag* cancel = nullptr);

  std::string_view name() const override { return m_client.engine().podman ? "podman" : "docker"; }
  std::expected<RunResult, Error> run(const BuildSpec& spec, LogSink& log) override;
  std::expected<ExtractStats, Error> copy_out(std::string_view container, std::string_view path,
                                              const std::filesystem::path& dest) override;

  std::expected<ImageInfo, Error> import_image(const std::filesystem::path& rootfs_tar, std::string_view repo,
                                               std::string_view tag) {
    return m_client.import_image(rootfs_tar, repo, tag);
  }
  std::expected<ImageInfo, Error> build_image(const std::filesystem::path& context_dir, std::string_view tag,
                                              const ImageBuildOptions& options, LogSink& log) {
    return m_client.build_image(context_dir, tag, options, log);
  }
  std::expected<ImageInfo, Error> inspect_image(std::string_view ref) { return m_client.inspect_image(ref); }

  DockerClient& client() { return m_client; }

 private:
  DockerClient m_client;
  const CancelFlag* m_cancel;
};

}  // namespace orc::engine
