#pragma once
// The Engine over the Docker Engine API (Docker, or Podman's compatible
// service): one container per run, created, started, followed, waited for,
// copied from and removed.
#include <atomic>
#include <chrono>
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
  std::expected<ImageInfo, Error> pull_image(std::string_view ref, LogSink* log = nullptr) {
    return m_client.pull_image(ref, log, m_cancel ? m_cancel->get() : nullptr);
  }

  DockerClient& client() { return m_client; }

  // Podman can keep a followed log stream open after its container exited
  // (containers/podman #6627, #11461), and a run would hang on it. While
  // the stream is silent, its container's state is asked every `every`;
  // once the container has exited and the stream stayed silent `grace`
  // longer, the run stops following and goes on. A stream that has output,
  // or that ends with its container, costs no extra request. Tests shorten
  // both.
  struct ExitWatch {
    std::chrono::milliseconds every{2000};
    std::chrono::milliseconds grace{5000};
  };
  void set_exit_watch(ExitWatch watch) { m_exit_watch = watch; }

 private:
  // follow_logs, stopped by the user's cancel, or by ExitWatch.
  std::expected<void, Error> follow(std::string_view id, bool tty, LogSink& log, const std::atomic<bool>* cancel);

  DockerClient m_client;
  const CancelFlag* m_cancel;
  ExitWatch m_exit_watch;
};

}  // namespace orc::engine
