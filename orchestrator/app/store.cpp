#include "orchestrator/app/store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "orchestrator/inspect/sha256.hpp"

namespace orc::app {

namespace {

namespace fs = std::filesystem;

std::string errno_text(std::string_view what, const fs::path& path) {
  return std::string(what) + " " + path.string() + ": " + std::strerror(errno);
}

// A unique temporary name in `dir`: pid plus a process-wide counter, so
// parallel builds and parallel processes never share one.
fs::path temp_name(const fs::path& dir, std::string_view stem) {
  static std::atomic<unsigned long> counter{0};
  return dir / (std::string(stem) + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) + ".tmp");
}

void fsync_dir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

bool is_hex_digest(std::string_view hex) {
  return hex.size() == 64 && hex.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// Moves a fully written temp file to its place; the loser of a race between
// two writers of the same blob finds the same bytes already there.
std::expected<void, std::string> commit(const fs::path& temp, const fs::path& target) {
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const auto message = errno_text("renaming into", target);
    fs::remove(temp, ec);
    return std::unexpected(message);
  }
  fsync_dir(target.parent_path());
  return {};
}

}  // namespace

fs::path default_store_root() {
  if (const char* dir = std::getenv("ORCHESTRATE_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "orchestrate";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "orchestrate";
  return fs::temp_directory_path() / "orchestrate-cache";
}

std::expected<void, std::string> write_file_atomic(const fs::path& target, std::string_view bytes, const fs::path& tmp_dir) {
  std::error_code ec;
  fs::create_directories(tmp_dir, ec);
  const fs::path temp = temp_name(tmp_dir, target.filename().string());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return std::unexpected(errno_text("creating", temp));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const auto message = errno_text("writing", temp);
      ::close(fd);
      fs::remove(temp, ec);
      return std::unexpected(message);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const auto message = errno_text("syncing", temp);
    fs::remove(temp, ec);
    return std::unexpected(message);
  }
  return commit(temp, target);
}

Store::Store(fs::path root) : m_root(std::move(root)) {}

fs::path Store::workspace_dir(std::string_view recipe) const { return m_root / "workspaces.v1" / std::string(recipe); }

fs::path Store::blob_path(std::string_view hex) const {
  return m_root / "blobs.v1" / "sha256" / std::string(hex.substr(0, 2)) / std::string(hex);
}

bool Store::has_blob(std::string_view hex) const {
  std::error_code ec;
  return is_hex_digest(hex) && fs::is_regular_file(blob_path(hex), ec);
}

std::expected<std::string, std::string> Store::put_file(const fs::path& file) {
  std::error_code ec;
  fs::create_directories(tmp_dir(), ec);
  const fs::path temp = temp_name(tmp_dir(), "blob");
  const int in = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return std::unexpected(errno_text("opening", file));
  const int out = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) {
    ::close(in);
    return std::unexpected(errno_text("creating", temp));
  }
  // Hash while copying, so the digest names exactly the bytes stored.
  inspect::Sha256 hasher;
  std::string failure;
  char buffer[1 << 16];
  while (failure.empty()) {
    const ssize_t n = ::read(in, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failure = errno_text("reading", file);
    if (n <= 0) break;
    hasher.update(std::as_bytes(std::span(buffer, static_cast<std::size_t>(n))));
    for (ssize_t done = 0; done < n && failure.empty();) {
      const ssize_t w = ::write(out, buffer + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) failure = errno_text("writing", temp);
      else done += w;
    }
  }
  ::close(in);
  if (failure.empty() && ::fsync(out) != 0) failure = errno_text("syncing", temp);
  ::close(out);
  if (!failure.empty()) {
    fs::remove(temp, ec);
    return std::unexpected(failure);
  }
  const std::string hex = hasher.hex_digest();
  if (has_blob(hex)) {
    fs::remove(temp, ec);
    return hex;
  }
  if (auto ok = commit(temp, blob_path(hex)); !ok) return std::unexpected(ok.error());
  return hex;
}

std::expected<std::string, std::string> Store::put_bytes(std::string_view bytes) {
  const std::string hex = inspect::sha256_hex(std::as_bytes(std::span(bytes.data(), bytes.size())));
  if (has_blob(hex)) return hex;
  if (auto ok = write_file_atomic(blob_path(hex), bytes, tmp_dir()); !ok) return std::unexpected(ok.error());
  return hex;
}

std::expected<std::string, std::string> Store::read_blob(std::string_view hex) const {
  if (!is_hex_digest(hex)) return std::unexpected("not a sha256 digest: " + std::string(hex));
  std::ifstream in(blob_path(hex), std::ios::binary);
  if (!in) return std::unexpected("blob sha256:" + std::string(hex) + " is not in the store");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<std::string> Store::lookup(std::string_view key) const {
  std::ifstream in(m_root / "builds.v1" / (std::string(key) + ".json"));
  if (!in) return std::nullopt;
  const auto entry = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!entry.is_object() || entry.value("schema_version", 0) != 1) return std::nullopt;
  const std::string manifest = entry.value("manifest", "");
  if (!manifest.starts_with("sha256:")) return std::nullopt;
  const std::string hex = manifest.substr(7);
  if (!has_blob(hex)) return std::nullopt;
  return hex;
}

std::expected<void, std::string> Store::record(std::string_view key, std::string_view manifest_hex) {
  if (!has_blob(manifest_hex)) return std::unexpected("recording " + std::string(key) + ": its manifest is not stored");
  nlohmann::ordered_json entry;
  entry["schema_version"] = 1;
  entry["key"] = key;
  entry["manifest"] = "sha256:" + std::string(manifest_hex);
  return write_file_atomic(m_root / "builds.v1" / (std::string(key) + ".json"), entry.dump(2) + "\n", tmp_dir());
}

std::string manifest_to_json(const Manifest& m) {
  nlohmann::ordered_json j;
  j["schema_version"] = Manifest::k_schema_version;
  j["key"] = m.key;
  j["recipe"] = m.recipe;
  j["framework"] = m.framework;
  j["tier"] = m.tier;
  j["source"] = {{"kind", m.source_kind}, {"revision", m.source_revision}};
  j["engine"] = m.engine;
  j["image"] = {{"reference", m.image}, {"digest", m.image_digest.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(m.image_digest)}};
  j["toolkit"] = m.toolkit;
  j["cudnn"] = m.cudnn.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(m.cudnn);
  j["host_compiler"] = m.host_compiler.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(m.host_compiler);
  j["requested"] = {{"sass", m.requested_sass}, {"ptx", m.requested_ptx}};
  j["artifacts"] = nlohmann::ordered_json::array();
  for (const auto& a : m.artifacts)
    j["artifacts"].push_back({{"path", a.name}, {"sha256", a.sha256}, {"size", a.size}, {"sass", a.sass}, {"ptx", a.ptx}});
  j["build_log"] = "sha256:" + m.build_log;
  j["warnings"] = m.warnings;
  j["created"] = m.created;
  return j.dump(2) + "\n";
}

std::optional<Manifest> manifest_from_json(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("schema_version", 0) != Manifest::k_schema_version) return std::nullopt;
  try {
    Manifest m;
    const auto str_or_empty = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : std::string(); };
    m.key = j.at("key").get<std::string>();
    m.recipe = j.at("recipe").get<std::string>();
    m.framework = j.at("framework").get<std::string>();
    m.tier = j.at("tier").get<std::string>();
    m.source_kind = j.at("source").at("kind").get<std::string>();
    m.source_revision = j.at("source").at("revision").get<std::string>();
    m.engine = j.at("engine").get<std::string>();
    m.image = j.at("image").at("reference").get<std::string>();
    m.image_digest = str_or_empty(j.at("image").at("digest"));
    m.toolkit = j.at("toolkit").get<std::string>();
    m.cudnn = str_or_empty(j.at("cudnn"));
    m.host_compiler = str_or_empty(j.at("host_compiler"));
    m.requested_sass = j.at("requested").at("sass").get<std::vector<std::string>>();
    m.requested_ptx = j.at("requested").at("ptx").get<std::vector<std::string>>();
    for (const auto& a : j.at("artifacts"))
      m.artifacts.push_back({.name = a.at("path").get<std::string>(),
                             .sha256 = a.at("sha256").get<std::string>(),
                             .size = a.at("size").get<std::uint64_t>(),
                             .sass = a.at("sass").get<std::vector<std::string>>(),
                             .ptx = a.at("ptx").get<std::vector<std::string>>()});
    const std::string log = j.at("build_log").get<std::string>();
    m.build_log = log.starts_with("sha256:") ? log.substr(7) : log;
    m.warnings = j.value("warnings", std::vector<std::string>{});
    m.created = j.at("created").get<std::string>();
    return m;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace orc::app
