#include "orchestrator/site/host_toolkits.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "orchestrator/cache/files.hpp"
#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/process.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::site {

namespace fs = std::filesystem;

namespace {

std::string env_or_empty(const char* name) { return util::env_value(name); }

bool has_nvcc(const fs::path& root) { return ::access((root / "bin" / "nvcc").c_str(), X_OK) == 0; }

// A folder's cuda-* children that hold a toolkit, sorted so discovery does
// not depend on directory order.
std::vector<fs::path> versioned_children(const fs::path& parent) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec))
    if (entry.path().filename().string().starts_with("cuda-") && has_nvcc(entry.path())) out.push_back(entry.path());
  std::ranges::sort(out);
  return out;
}

// The identity of a file as one line of text, or empty when it is not there.
std::string file_identity(const fs::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return {};
  std::ostringstream out;
  out << st.st_dev << ':' << st.st_ino << ':' << st.st_size << ':' << st.st_mtim.tv_sec << '.' << st.st_mtim.tv_nsec
      << ':' << st.st_ctim.tv_sec << '.' << st.st_ctim.tv_nsec;
  return out.str();
}

// The cache file's format: one "PATH<TAB>IDENTITY<TAB>VERSION" line per nvcc;
// a line that does not match (another format, a changed file) is a miss.
std::optional<util::Version> remembered(const fs::path& cache_file, const std::string& path, const std::string& id) {
  const auto text = util::read_file(cache_file);
  if (!text) return std::nullopt;
  for (const auto& line : util::split_any(*text, "\n")) {
    const auto fields = util::split_any(line, "\t");
    if (fields.size() == 3 && fields[0] == path && fields[1] == id)
      if (auto v = util::Version::parse(fields[2])) return *v;
  }
  return std::nullopt;
}

void remember(const fs::path& cache_file, const std::string& path, const std::string& id, const util::Version& v) {
  std::string kept;
  if (const auto text = util::read_file(cache_file))
    for (const auto& line : util::split_any(*text, "\n"))
      if (!line.empty() && !line.starts_with(path + "\t")) kept += line + "\n";
  kept += path + "\t" + id + "\t" + v.str() + "\n";
  std::error_code ec;
  fs::create_directories(cache_file.parent_path(), ec);
  // Best effort: a store that cannot be written costs only the nvcc run.
  (void)cache::write_file_atomic(cache_file, kept, cache_file.parent_path());
}

}  // namespace

std::optional<util::Version> nvcc_version(const fs::path& root, const fs::path& cache_file) {
  const fs::path nvcc = root / "bin" / "nvcc";
  if (::access(nvcc.c_str(), X_OK) != 0) return std::nullopt;
  const std::string id = file_identity(nvcc);
  if (!cache_file.empty() && !id.empty())
    if (auto v = remembered(cache_file, nvcc.string(), id)) return v;
  const auto ran = util::run_process({.argv = {nvcc.string(), "--version"}, .merge_stderr = true});
  if (!ran || !ran->ok()) return std::nullopt;
  auto version = compat::parse_nvcc_version(ran->out);
  if (version && !cache_file.empty() && !id.empty()) remember(cache_file, nvcc.string(), id, *version);
  return version;
}

fs::path nvcc_version_cache() { return cache::default_store_root() / "nvcc-versions.v1"; }

HostToolkitSearch host_toolkit_search_from_environment() {
  HostToolkitSearch search;
  for (const auto& entry : util::split_any(env_or_empty("ORCHESTRATE_HOST_TOOLKITS"), ":"))
    if (!entry.empty()) search.listed.emplace_back(entry);
  for (const auto& dir : util::split_any(env_or_empty("PATH"), ":"))
    if (!dir.empty()) search.path_dirs.emplace_back(dir);
  const std::string host_cuda = env_or_empty("ORCHESTRATE_HOST_CUDA");
  search.default_root = host_cuda.empty() ? fs::path(compat::k_default_host_cuda) : fs::path(host_cuda);
  search.versioned_parent = fs::path(compat::k_default_host_cuda).parent_path();
  search.version_cache = nvcc_version_cache();
  return search;
}

std::vector<HostToolkit> discover_host_toolkits(const HostToolkitSearch& search) {
  std::vector<std::pair<fs::path, std::string>> roots;
  for (const auto& listed : search.listed) {
    if (has_nvcc(listed))
      roots.emplace_back(listed, "ORCHESTRATE_HOST_TOOLKITS");
    else
      for (const auto& child : versioned_children(listed)) roots.emplace_back(child, "ORCHESTRATE_HOST_TOOLKITS");
  }
  for (const auto& dir : search.path_dirs)
    if (::access((dir / "nvcc").c_str(), X_OK) == 0) {
      // nvcc's root is two levels above the real file (a symlink in
      // /usr/bin to /usr/local/cuda-13.0/bin/nvcc names cuda-13.0).
      std::error_code ec;
      const fs::path real = fs::canonical(dir / "nvcc", ec);
      roots.emplace_back((ec ? dir / "nvcc" : real).parent_path().parent_path(), "PATH");
      break;
    }
  if (!search.default_root.empty() && has_nvcc(search.default_root))
    roots.emplace_back(search.default_root, search.default_root.string());
  if (!search.versioned_parent.empty())
    for (const auto& child : versioned_children(search.versioned_parent))
      roots.emplace_back(child, search.versioned_parent.string() + "/cuda-*");

  std::vector<HostToolkit> found;
  std::vector<fs::path> seen;
  for (const auto& [root, how] : roots) {
    std::error_code ec;
    const fs::path canonical = fs::canonical(root, ec);
    const fs::path key = ec ? root : canonical;
    if (std::ranges::find(seen, key) != seen.end()) continue;
    seen.push_back(key);
    const auto version = nvcc_version(root, search.version_cache);
    if (!version) continue;
    // The canonical root: /usr/local/cuda and cuda-13.0 are one toolkit.
    found.push_back({.version = *version, .root = key, .found_by = how, .inventory = inspect_toolkit_tree(key)});
  }
  std::ranges::stable_sort(found, [](const HostToolkit& a, const HostToolkit& b) { return b.version < a.version; });
  return found;
}

std::optional<HostToolkit> find_host_toolkit(const std::vector<HostToolkit>& toolkits, const util::Version& wanted,
                                             std::span<const compat::ToolkitPart> needed) {
  for (const auto& t : toolkits)
    if (t.version.truncated(2) == wanted.truncated(2) && t.inventory.lacking(needed).empty()) return t;
  return std::nullopt;
}

std::string describe_host_toolkits(const std::vector<HostToolkit>& toolkits) {
  if (toolkits.empty()) return "none";
  std::vector<std::string> parts;
  for (const auto& t : toolkits) parts.push_back(t.version.str() + " (" + t.root.string() + ")");
  return util::join(parts, ", ");
}

}  // namespace orc::site
