#include "orchestrator/inspect/bom_text.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "orchestrator/inspect/cuda_libraries.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::inspect {

namespace {

// A dpkg field line longer than this is no field the bill of materials
// reads (package names and versions are short).
constexpr std::size_t k_max_line = 1024;
constexpr std::size_t k_chunk = 64u << 10;
constexpr std::size_t k_names_shown = 5;

bool cuda_package(std::string_view name) {
  for (const CudaLibrary& k : cuda_libraries())
    for (const auto prefix : k.packages)
      if (name.starts_with(prefix)) return true;
  return false;
}

bool cuda_json_key(std::string_view key) {
  for (const CudaLibrary& k : cuda_libraries())
    if (!k.json_key.empty() && key == k.json_key) return true;
  return false;
}

// dpkg's status, a line at a time as it streams: stanzas of "Field: value"
// lines, a blank line between them. Only installed CUDA packages are kept,
// with the upstream version (no epoch, no Debian revision).
class DpkgStatus {
 public:
  explicit DpkgStatus(std::map<std::string, std::string>& out) : m_out(out) {}

  void feed(std::string_view chunk) {
    while (!chunk.empty()) {
      const auto newline = chunk.find('\n');
      const std::string_view piece = chunk.substr(0, newline);
      if (m_line.size() + piece.size() <= k_max_line)
        m_line.append(piece);
      else
        m_over = true;
      if (newline == std::string_view::npos) return;
      line();
      chunk.remove_prefix(newline + 1);
    }
  }
  void finish() {
    if (!m_line.empty() || m_over) line();
    flush();
  }

 private:
  void line() {
    const std::string_view l = m_line;
    if (l.empty() && !m_over)
      flush();
    else if (m_over)
      ;  // too long to be a field read here
    else if (l.starts_with("Package: "))
      m_package = util::trim(l.substr(9));
    else if (l.starts_with("Version: "))
      m_version = util::trim(l.substr(9));
    else if (l.starts_with("Status: "))
      m_status = util::trim(l.substr(8));
    m_line.clear();
    m_over = false;
  }
  void flush() {
    if (!m_package.empty() && m_status.ends_with(" installed") && !m_version.empty() && cuda_package(m_package)) {
      std::string v = m_version;
      if (const auto colon = v.find(':'); colon != std::string::npos) v = v.substr(colon + 1);
      if (const auto dash = v.rfind('-'); dash != std::string::npos) v.resize(dash);
      m_out[m_package] = v;
    }
    m_package.clear();
    m_version.clear();
    m_status.clear();
  }

  std::map<std::string, std::string>& m_out;
  std::string m_line;
  bool m_over = false;  // the line passed k_max_line
  std::string m_package, m_version, m_status;
};

std::string reason_text(std::size_t reason) {
  switch (reason) {
    case 0:
      return "the image holds more than " + std::to_string(BomTexts::k_max_files) + " of them";
    case 1:
      return "the image's pass " + std::to_string(BomTexts::k_max_bytes) + " bytes in all";
    case 2:
      return "a version.json over " + std::to_string(BomTexts::k_max_json) + " bytes is none of NVIDIA's";
    case 3:
      return "they name more than " + std::to_string(BomTexts::k_max_kept) + " CUDA packages and versions";
    default:
      return "they could not be read";
  }
}

}  // namespace

bool bom_text(std::string_view path) {
  if (path == "var/lib/dpkg/status") return true;
  // Distroless images keep one status file per package.
  if (path.starts_with("var/lib/dpkg/status.d/") && path.find('/', 22) == std::string_view::npos) return true;
  // CUDA's redistributable layout: /usr/local/cuda-12.4/version.json.
  if (path.starts_with("usr/local/cuda") && path.ends_with("/version.json") &&
      std::count(path.begin(), path.end(), '/') == 3)
    return true;
  return false;
}

void BomTexts::note(Reason reason, std::string_view where, std::string_view detail) {
  Unread& u = m_unread[static_cast<std::size_t>(reason)];
  ++u.count;
  if (u.first.size() < k_names_shown) u.first.push_back(std::string(where) + std::string(detail));
}

bool BomTexts::keep(std::size_t entries) {
  const std::lock_guard lock(m_mutex);
  if (m_kept + entries > k_max_kept) return false;
  m_kept += entries;
  return true;
}

BomEvidence BomTexts::read(std::string_view path, std::uint64_t size, const StreamRead& read, std::string_view where) {
  const bool json = path.ends_with("/version.json");
  {
    const std::lock_guard lock(m_mutex);
    if (json && size > k_max_json) {
      note(Reason::json, where, " (" + std::to_string(size) + " bytes)");
      return {};
    }
    if (m_files >= k_max_files) {
      note(Reason::files, where);
      return {};
    }
    if (m_bytes + size > k_max_bytes) {
      note(Reason::bytes, where);
      return {};
    }
    ++m_files;
    m_bytes += size;
  }
  BomEvidence out;
  std::vector<std::byte> buffer(k_chunk);
  std::string text;  // a version.json, whole
  DpkgStatus dpkg(out.packages);
  std::uint64_t total = 0;
  for (;;) {
    auto n = read(buffer);
    if (!n) {
      const std::lock_guard lock(m_mutex);
      note(Reason::failed, where, ": " + n.error());
      return {};
    }
    // A stream longer than it said is read no further than it said.
    const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(*n, size - total));
    if (take == 0) break;
    total += take;
    const std::string_view chunk(reinterpret_cast<const char*>(buffer.data()), take);
    if (json)
      text.append(chunk);
    else
      dpkg.feed(chunk);
  }
  if (json) {
    try {
      const auto doc = nlohmann::json::parse(text);
      for (const auto& [key, value] : doc.items())
        if (cuda_json_key(key) && value.is_object() && value.contains("version") && value["version"].is_string())
          out.versions[key] = value["version"].get<std::string>();
    } catch (const std::exception&) {
      // Not JSON: no evidence from it.
    }
  } else {
    dpkg.finish();
  }
  if (!keep(out.packages.size() + out.versions.size())) {
    const std::lock_guard lock(m_mutex);
    note(Reason::kept, where);
    return {};
  }
  return out;
}

std::vector<std::string> BomTexts::unread() const {
  const std::lock_guard lock(m_mutex);
  std::vector<std::string> out;
  for (std::size_t r = 0; r < static_cast<std::size_t>(Reason::count); ++r) {
    const Unread& u = m_unread[r];
    if (u.count == 0) continue;
    std::string line = std::to_string(u.count) +
                       (u.count == 1 ? " bill-of-materials file" : " bill-of-materials files") + " not read (" +
                       std::string(reason_text(r)) + "): " + util::join(u.first, ", ");
    if (u.count > u.first.size()) line += ", and " + std::to_string(u.count - u.first.size()) + " more";
    line += "; the CUDA versions they hold are not in the bill of materials";
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace orc::inspect
