#pragma once
// The Engine that runs a BuildSpec as local processes: the embedded default
// when no engine socket is found. It is not isolated: the step sees the
// host's file system, users and network, and says so in the log.
//
// A container path of a mount becomes the mount's host path (the host engine
// runs in a scratch copy the caller prepared, so "/src" in an argument, the
// working directory or an environment value means that copy). Mount access
// is not enforced: read-only is a promise of the caller here.
#include <atomic>
#include <expected>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/engine/engine.hpp"

namespace orc::engine {

// Rewrites container paths in `text` to host paths: the whole text, the part
// after the first '=' ("-DX=/src/a") and each ':'-separated piece of a list
// (PATH), wherever a piece is a mount's container path or lies below one.
// The longest matching container path wins.
std::string rewrite_container_paths(std::string_view text, const std::vector<Mount>& mounts);

class HostEngine final : public Engine {
 public:
  // `cancel`, when given, is polled while a process runs: once set, the
  // process group gets SIGTERM (then SIGKILL) and run() returns a cancelled
  // Error.
  explicit HostEngine(const CancelFlag* cancel = nullptr) : m_cancel(cancel) {}

  std::string_view name() const override { return "host"; }
  // Inherits this process's environment, with the spec's env on top. The
  // image, user, limits, labels and network of the spec have no meaning
  // here and are ignored (the log says the run is not isolated).
  std::expected<RunResult, Error> run(const BuildSpec& spec, LogSink& log) override;
  // The host engine keeps nothing after a run: always a not_found Error.
  std::expected<ExtractStats, Error> copy_out(std::string_view container, std::string_view path,
                                              const std::filesystem::path& dest) override;

 private:
  const CancelFlag* m_cancel;
  // The first run's log line says the steps are not isolated; the others
  // name only what runs (one build's steps share one engine).
  std::atomic<bool> m_said_not_isolated{false};
};

}  // namespace orc::engine
