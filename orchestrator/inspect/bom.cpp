#include "orchestrator/inspect/bom.hpp"

#include <algorithm>

#include "orchestrator/inspect/cuda_libraries.hpp"
#include "orchestrator/util/strings.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::inspect {

namespace {

std::string_view base_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool more_precise(std::string_view a, std::string_view b) {
  return std::count(a.begin(), a.end(), '.') > std::count(b.begin(), b.end(), '.');
}

// pip: ".../nvidia_cublas_cu12-12.4.5.8.dist-info/..." -> name, version.
std::map<std::string, std::string> wheels(const std::vector<std::string>& paths) {
  std::map<std::string, std::string> out;
  for (const auto& p : paths) {
    const auto end = p.find(".dist-info/");
    if (end == std::string::npos) continue;
    const auto start = p.rfind('/', end);
    const std::string dir = p.substr(start + 1, end - start - 1);
    const auto dash = dir.find('-');
    if (dash == std::string::npos) continue;
    std::string name = dir.substr(0, dash);
    std::transform(name.begin(), name.end(), name.begin(), [](char c) {
      return c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    });
    out[name] = dir.substr(dash + 1);
  }
  return out;
}

bool wheel_matches(std::string_view name, std::string_view prefix) {
  if (prefix.empty() || !name.starts_with(prefix)) return false;
  const std::string_view rest = name.substr(prefix.size());
  return rest.empty() || rest.starts_with("-cu");
}

}  // namespace

std::optional<SonameVersion> split_soname(std::string_view file_name) {
  const auto so = file_name.find(".so.");
  if (so == std::string_view::npos) return std::nullopt;
  const std::string_view version = file_name.substr(so + 4);
  if (version.empty() || !std::isdigit(static_cast<unsigned char>(version.front()))) return std::nullopt;
  if (version.find_first_not_of("0123456789.") != std::string_view::npos) return std::nullopt;
  return SonameVersion{std::string(file_name.substr(0, so + 3)), std::string(version)};
}

bool bom_path(std::string_view path) {
  if (path.find(".dist-info/") != std::string_view::npos) return true;
  const std::string_view base = base_name(path);
  const auto split = split_soname(base);
  return cuda_library_of_stem(split ? std::string_view(split->stem) : base) != nullptr;
}

std::vector<Component> bill_of_materials(const ImageContent& input) {
  // dpkg's installed packages and version.json's versions, a later file's
  // over an earlier one's.
  std::map<std::string, std::string> packages;
  std::map<std::string, std::string> json_versions;
  for (const auto& [path, evidence] : input.evidence) {
    for (const auto& [name, version] : evidence.packages) packages[name] = version;
    for (const auto& [key, version] : evidence.versions) json_versions[key] = version;
  }
  const auto pip = wheels(input.paths);

  // The version's major agrees with the soname's (a package's evidence
  // is for the copy it installed, not for another copy of another major).
  const auto agrees = [](const std::string& version, const std::string& soname_major) {
    return soname_major.empty() || version == soname_major || version.starts_with(soname_major + ".");
  };
  std::vector<Component> out;
  for (const CudaLibrary& k : cuda_libraries()) {
    // One row per directory that holds the library: two copies (a wheel's
    // and a plugin's) may be two versions.
    std::map<std::string, std::vector<std::string>> groups;
    for (const auto& p : input.paths) {
      const std::string_view base = base_name(p);
      const auto split = split_soname(base);
      const bool match = cuda_library_of_stem(split ? std::string_view(split->stem) : base) == &k;
      if (!match) continue;
      // A link that leads to no file of the image is not the library.
      if (input.dangling.contains(p)) continue;
      // The toolkit's link-time stub (lib64/stubs/libcuda.so) is no driver.
      if (p.find("/stubs/") != std::string::npos) continue;
      groups[p.substr(0, p.size() - base.size())].push_back(p);
    }
    for (auto& [dir, files] : groups) {
      Component c{.key = std::string(k.key), .name = std::string(k.name)};
      std::string soname_major;
      // Every name counts as evidence; the row lists the files themselves,
      // not the symbolic links that alias them.
      for (const auto& p : files)
        if (!input.links.contains(p)) c.files.push_back(p);
      if (c.files.empty()) c.files = files;
      for (const auto& p : files) {
        const auto split = split_soname(base_name(p));
        if (!split) continue;
        if (std::count(split->version.begin(), split->version.end(), '.') >= 2) {
          if (c.version.empty() || more_precise(split->version, c.version)) {
            c.version = split->version;
            c.source = "file name";
          }
        } else if (soname_major.empty() || more_precise(split->version, soname_major)) {
          soname_major = split->version;
        }
      }
      if (c.version.empty() && !k.json_key.empty()) {
        if (const auto it = json_versions.find(std::string(k.json_key));
            it != json_versions.end() && agrees(it->second, soname_major)) {
          c.version = it->second;
          c.source = "version.json";
        }
      }
      if (c.version.empty())
        for (const auto& [name, version] : packages)
          for (const auto prefix : k.packages)
            if (c.version.empty() && name.starts_with(prefix) && !name.ends_with("-dev") && !name.ends_with("-doc") &&
                agrees(version, soname_major)) {
              c.version = version;
              c.source = "dpkg " + name;
            }
      if (c.version.empty())
        for (const auto& [name, version] : pip)
          if (c.version.empty() && wheel_matches(name, k.wheel) && agrees(version, soname_major)) {
            c.version = version;
            c.source = "pip " + name;
          }
      if (c.version.empty() && !soname_major.empty()) {
        c.version = soname_major;
        c.source = "soname";
      }
      std::optional<util::Version> toolkit;
      for (const auto& f : input.files) {
        if (std::find(c.files.begin(), c.files.end(), f.path) == c.files.end()) continue;
        for (const auto& m : f.modules)
          if (m.toolkit && (!toolkit || *toolkit < *m.toolkit)) toolkit = m.toolkit;
      }
      if (toolkit) c.built_with = "CUDA " + toolkit->truncated(2).str();
      if (k.provider == Provider::driver && !c.files.empty()) {
        c.warning = true;
        c.note = "the image bundles the driver's user-space library: the NVIDIA container toolkit mounts the host's " +
                 std::string(k.stem) + ".1, and a bundled one that shadows it fails on any other driver";
      }
      std::sort(c.files.begin(), c.files.end());
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace orc::inspect
