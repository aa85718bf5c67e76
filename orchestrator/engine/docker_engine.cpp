#include "orchestrator/engine/docker_engine.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace orc::engine {

namespace {

// Removes the container when the run leaves early: an error return, a
// cancellation, or an exception thrown by the log sink. Errors from that
// removal cannot be reported from a destructor and are dropped; the
// container still carries k_managed_label for a later sweep.
class ContainerGuard {
 public:
  ContainerGuard(DockerClient& client, std::string id) : m_client(client), m_id(std::move(id)) {}
  ~ContainerGuard() {
    if (!m_done) (void)m_client.remove_container(m_id);
  }
  ContainerGuard(const ContainerGuard&) = delete;
  ContainerGuard& operator=(const ContainerGuard&) = delete;

  std::expected<void, Error> remove() {
    m_done = true;
    return m_client.remove_container(m_id);
  }

 private:
  DockerClient& m_client;
  std::string m_id;
  bool m_done = false;
};

// Once the container started, an engine that stops answering has died: the
// stream may have ended cleanly (the engine stopped its containers on the
// way down) and only the next call finds the socket dead.
Error during_run(Error error) {
  if (error.kind == ErrorKind::connection_refused || error.kind == ErrorKind::socket_missing) {
    error.kind = ErrorKind::engine_died;
    error.message = "the engine went away during the run: " + error.message;
  }
  return error;
}

Error cancelled(std::string_view id, const std::expected<void, Error>& removed = {}) {
  const std::string container = "cancelled: container " + std::string(id.substr(0, 12));
  return Error{.kind = ErrorKind::cancelled,
               .message = removed ? container + " stopped and removed"
                                  : container + " stopped, but not removed: " + removed.error().message};
}

// Passes the output on, noting when it came; a cancel seen here stops the
// stream at once (the transport polls one flag: `stop`).
class WatchedSink final : public LogSink {
 public:
  WatchedSink(LogSink& inner, const std::atomic<bool>* cancel, std::atomic<bool>& stop)
      : m_inner(inner), m_cancel(cancel), m_stop(stop) {}
  void on_output(OutputStream stream, std::string_view bytes) override {
    m_last.store(std::chrono::steady_clock::now().time_since_epoch().count());
    if (m_cancel && m_cancel->load()) m_stop.store(true);
    m_inner.on_output(stream, bytes);
  }
  std::chrono::steady_clock::time_point last() const {
    return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(m_last.load()));
  }

 private:
  LogSink& m_inner;
  const std::atomic<bool>* m_cancel;
  std::atomic<bool>& m_stop;
  std::atomic<std::chrono::steady_clock::rep> m_last{std::chrono::steady_clock::now().time_since_epoch().count()};
};

// Podman can break off a followed log stream (it writes its error where a
// frame belongs) while the container's stored log stays whole. Following
// again replays that log from its start: the bytes already passed on are
// dropped, so the build log has each byte once.
class ReplaySink final : public LogSink {
 public:
  explicit ReplaySink(LogSink& inner) : m_inner(inner) {}
  void on_output(OutputStream stream, std::string_view bytes) override {
    if (m_seen < m_delivered) {
      const std::uint64_t skip = std::min<std::uint64_t>(m_delivered - m_seen, bytes.size());
      m_seen += skip;
      bytes.remove_prefix(static_cast<std::size_t>(skip));
    }
    if (bytes.empty()) return;
    m_seen += bytes.size();
    m_delivered = m_seen;
    m_inner.on_output(stream, bytes);
  }
  void replay() { m_seen = 0; }
  std::uint64_t delivered() const { return m_delivered; }

 private:
  LogSink& m_inner;
  std::uint64_t m_delivered = 0;
  std::uint64_t m_seen = 0;
};

constexpr int k_follow_attempts = 3;

bool has_stopped(std::string_view status) { return status == "exited" || status == "dead" || status == "stopped"; }

}  // namespace

std::expected<void, Error> DockerEngine::follow(std::string_view id, bool tty, LogSink& log,
                                                const std::atomic<bool>* cancel) {
  using clock = std::chrono::steady_clock;
  std::atomic<bool> stop{false};
  WatchedSink sink(log, cancel, stop);
  bool stopped_after_exit = false;  // the watcher's, read after it joined
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  std::thread watcher([&, watch = m_exit_watch] {
    std::optional<clock::time_point> exited_at;
    clock::time_point asked{};
    std::unique_lock lock(mutex);
    while (!changed.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) {
      if (cancel && cancel->load()) {
        stop = true;
        return;
      }
      const auto now = clock::now();
      const auto silent_since = std::max(sink.last(), exited_at.value_or(clock::time_point{}));
      if (exited_at) {
        if (now - silent_since >= watch.grace) {
          stopped_after_exit = true;
          stop = true;
          return;
        }
      } else if (now - silent_since >= watch.every && now - asked >= watch.every) {
        asked = now;
        lock.unlock();
        auto status = m_client.container_status(id);  // an error: ask again later
        lock.lock();
        if (status && has_stopped(*status)) exited_at = clock::now();
      }
    }
  });
  // Ends the watcher on every way out (a sink may throw).
  struct Join {
    std::mutex& mutex;
    std::condition_variable& changed;
    bool& done;
    std::thread& thread;
    ~Join() {
      {
        std::lock_guard lock(mutex);
        done = true;
      }
      changed.notify_all();
      thread.join();
    }
  };
  std::expected<void, Error> followed;
  {
    Join join{mutex, changed, done, watcher};
    followed = m_client.follow_logs(id, tty, sink, &stop);
  }
  if (!followed && followed.error().kind == ErrorKind::cancelled && stopped_after_exit) return {};
  return followed;
}

DockerEngine::DockerEngine(DockerClient client, const CancelFlag* cancel)
    : m_client(std::move(client)), m_cancel(cancel) {}

std::expected<DockerEngine, Error> DockerEngine::connect(const std::filesystem::path& socket,
                                                         const CancelFlag* cancel) {
  auto client = DockerClient::connect(make_unix_socket_transport(socket));
  if (!client) return std::unexpected(client.error());
  return DockerEngine(std::move(*client), cancel);
}

std::expected<RunResult, Error> DockerEngine::run(const BuildSpec& spec, LogSink& log) {
  const auto started = std::chrono::steady_clock::now();
  const std::atomic<bool>* cancel = m_cancel ? m_cancel->get() : nullptr;
  const auto is_cancelled = [&] { return m_cancel && m_cancel->requested(); };

  auto id = m_client.create_container(spec);
  if (!id) return std::unexpected(id.error());
  ContainerGuard guard(m_client, *id);
  RunResult result{.container_id = *id};

  if (is_cancelled()) return std::unexpected(cancelled(*id, guard.remove()));
  if (auto ok = m_client.start_container(*id); !ok) return std::unexpected(ok.error());

  // Following the logs returns when the container's output ends, which is
  // when it exits; waiting afterwards then answers at once.
  ReplaySink replay(log);
  auto followed = follow(*id, spec.tty, replay, cancel);
  for (int attempt = 1; attempt < k_follow_attempts && !followed && followed.error().kind == ErrorKind::protocol &&
                        !is_cancelled();
       ++attempt) {
    const std::string note = "orchestrate: " + followed.error().message + "; following the output again after byte " +
                             std::to_string(replay.delivered()) + "\n";
    log.on_output(OutputStream::err, note);
    std::this_thread::sleep_for(std::chrono::milliseconds(200 * attempt));
    replay.replay();
    followed = follow(*id, spec.tty, replay, cancel);
  }
  if (!followed && followed.error().kind != ErrorKind::cancelled) return std::unexpected(during_run(followed.error()));
  std::expected<int, Error> exit_code =
      followed ? m_client.wait_container(*id, cancel) : std::unexpected(followed.error());
  if (!exit_code && exit_code.error().kind == ErrorKind::cancelled) {
    // Kill first, so the build stops at once even when the removal then
    // fails; a container that already exited answers 409, which is fine.
    (void)m_client.kill_container(*id);
    return std::unexpected(cancelled(*id, guard.remove()));
  }
  if (!exit_code) return std::unexpected(during_run(exit_code.error()));
  result.exit_code = *exit_code;

  for (const CopyOut& out : spec.outputs) result.outputs.push_back(copy_out(*id, out.container_path, out.host_dir));
  if (auto removed = guard.remove(); removed) {
    result.removed = true;
  } else {
    result.removal_error = during_run(removed.error());
  }
  result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  return result;
}

std::expected<ExtractStats, Error> DockerEngine::copy_out(std::string_view container, std::string_view path,
                                                          const std::filesystem::path& dest) {
  return m_client.copy_out(container, path, dest);
}

}  // namespace orc::engine
