#include "orchestrator/cache/signed_files.hpp"

#include <algorithm>

namespace orc::cache {

SignedFiles::SignedFiles(const Manifest& manifest) : m_manifest(&manifest) {
  for (const auto& f : manifest.files) {
    m_total += f.size;
    m_files[f.path] = &f;
  }
}

const ManifestFile* SignedFiles::find(std::string_view name) const {
  const auto it = m_files.find(name);
  return it == m_files.end() ? nullptr : it->second;
}

std::expected<unsigned, Error> SignedFiles::admit(std::string_view name, std::uint64_t size, unsigned mode) const {
  const ManifestFile* file = find(name);
  if (!file) return std::unexpected(invalid_error("'" + std::string(name) + "' is not a file of the signed manifest"));
  if (file->size != size)
    return std::unexpected(invalid_error("'" + std::string(name) + "' holds " + std::to_string(size) +
                                         " bytes; the signed manifest says " + std::to_string(file->size)));
  if (std::string problem = mode_problem(*file, mode); !problem.empty())
    return std::unexpected(invalid_error(std::move(problem)));
  return landing_mode(*file, mode);
}

SignedFiles::Check SignedFiles::check(const std::vector<UnpackedFile>& written) const {
  Check out{.written = written.size(), .named = m_manifest->files.size(), .mismatches = {}};
  for (const auto& f : m_manifest->files) {
    const auto w = std::ranges::find(written, f.path, &UnpackedFile::name);
    if (w == written.end())
      out.mismatches.push_back({.expected = &f, .written = nullptr});
    else if (w->sha256 != f.sha256 || w->size != f.size)
      out.mismatches.push_back({.expected = &f, .written = &*w});
  }
  return out;
}

}  // namespace orc::cache
