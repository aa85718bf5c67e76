#include "orchestrator/engine/host_engine.hpp"

#include "orchestrator/util/process.hpp"

namespace orc::engine {

namespace {

namespace fs = std::filesystem;

// How long a cancelled process group gets between SIGTERM and SIGKILL.
constexpr auto k_kill_grace = std::chrono::seconds(3);

std::string rewrite_one(std::string_view piece, const std::vector<Mount>& mounts) {
  const Mount* best = nullptr;
  for (const auto& m : mounts) {
    const std::string_view c = m.container;
    const bool below = piece.size() > c.size() && piece.starts_with(c) && (piece[c.size()] == '/' || c == "/");
    if ((piece == c || below) && (!best || c.size() > best->container.size())) best = &m;
  }
  if (!best) return std::string(piece);
  return best->host.string() + std::string(piece.substr(best->container.size()));
}

std::string rewrite_list(std::string_view text, const std::vector<Mount>& mounts) {
  std::string out;
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = text.find(':', start);
    out += rewrite_one(text.substr(start, colon == std::string_view::npos ? colon : colon - start), mounts);
    if (colon == std::string_view::npos) break;
    out += ':';
    start = colon + 1;
  }
  return out;
}

Error io_error(std::string message) {
  return Error{.kind = ErrorKind::io, .message = std::move(message), .http_status = 0};
}

std::expected<ExtractStats, Error> copy_tree(const fs::path& from, const fs::path& dest_dir) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(from, ec)))
    return std::unexpected(Error{
        .kind = ErrorKind::not_found, .message = from.string() + ": no such file or directory", .http_status = 0});
  const fs::path target = dest_dir / from.filename();
  fs::create_directories(dest_dir, ec);
  fs::copy(from, target,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks | fs::copy_options::overwrite_existing, ec);
  if (ec) return std::unexpected(io_error("copying " + from.string() + " to " + target.string() + ": " + ec.message()));
  ExtractStats stats;
  const auto count = [&stats](const fs::directory_entry& e) {
    if (e.is_symlink())
      ++stats.symlinks;
    else if (e.is_directory())
      ++stats.directories;
    else if (e.is_regular_file()) {
      ++stats.files;
      stats.bytes += e.file_size();
    }
  };
  count(fs::directory_entry(target));
  if (fs::is_directory(fs::symlink_status(target)))
    for (const auto& e : fs::recursive_directory_iterator(target, ec)) count(e);
  return stats;
}

}  // namespace

std::string rewrite_container_paths(std::string_view text, const std::vector<Mount>& mounts) {
  const std::size_t eq = text.find('=');
  if (eq != std::string_view::npos && eq > 0)
    return std::string(text.substr(0, eq + 1)) + rewrite_list(text.substr(eq + 1), mounts);
  return rewrite_list(text, mounts);
}

std::expected<RunResult, Error> HostEngine::run(const BuildSpec& spec, LogSink& log) {
  if (spec.argv.empty())
    return std::unexpected(Error{.kind = ErrorKind::invalid_spec,
                                 .message = "the host engine needs an argv (it has no image CMD)",
                                 .http_status = 0});

  const auto started = std::chrono::steady_clock::now();
  // Ours with the spec's environment on top (or the spec's alone), container paths rewritten.
  util::ProcessSpec process{
      .capture_cap = 0, .cancel = m_cancel ? m_cancel->get() : nullptr, .kill_grace = k_kill_grace};
  for (const auto& a : spec.argv) process.argv.push_back(rewrite_container_paths(a, spec.mounts));
  for (const auto& [name, value] : spec.env) process.env.emplace_back(name, rewrite_list(value, spec.mounts));
  if (spec.host_env == HostEnvironment::exact) process.env_mode = util::EnvMode::replace;
  if (!spec.working_dir.empty()) process.working_dir = rewrite_one(spec.working_dir, spec.mounts);
  process.on_output = [&log](util::OutputStream stream, std::string_view bytes) {
    log.on_output(stream == util::OutputStream::out ? OutputStream::out : OutputStream::err, bytes);
  };
  const std::string dir = process.working_dir.string();
  const bool first = !m_said_not_isolated.exchange(true);
  log.on_output(OutputStream::err,
                std::string(first ? "[host engine: local processes, not isolated] " : "[host engine] ") +
                    process.argv.front() + (dir.empty() ? "" : " in " + dir) + "\n");

  const auto ran = util::run_process(process);
  if (!ran)
    return std::unexpected(
        Error{.kind = ran.error().kind == util::ProcessErrorKind::not_found ? ErrorKind::not_found : ErrorKind::io,
              .message = ran.error().message,
              .http_status = 0});
  if (ran->cancelled)
    return std::unexpected(Error{
        .kind = ErrorKind::cancelled, .message = "cancelled: the host process group was stopped", .http_status = 0});

  RunResult result;
  result.exit_code = ran->status();
  result.container_id = "host-" + std::to_string(ran->pid);
  result.removed = true;
  for (const auto& o : spec.outputs)
    result.outputs.push_back(copy_tree(rewrite_one(o.container_path, spec.mounts), o.host_dir));
  result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  return result;
}

std::expected<ExtractStats, Error> HostEngine::copy_out(std::string_view container, std::string_view,
                                                        const std::filesystem::path&) {
  return std::unexpected(Error{.kind = ErrorKind::not_found,
                               .message = "the host engine keeps no containers ('" + std::string(container) + "')",
                               .http_status = 0});
}

}  // namespace orc::engine
