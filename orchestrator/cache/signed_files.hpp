#pragma once
// The files a signed manifest names, by name: what an unpack of the set's
// layer admits (UnpackOptions::admit), each at the size and the mode the
// manifest gives it, and nothing else. A pull and a fetch from the store's
// pack check a layer with the same rules.
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/cache/error.hpp"
#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/cache/pack.hpp"

namespace orc::cache {

class SignedFiles {
 public:
  // `manifest` must outlive this.
  explicit SignedFiles(const Manifest& manifest);

  const ManifestFile* find(std::string_view name) const;
  // What the files hold in all: the most a layer may unpack to.
  std::uint64_t total_size() const { return m_total; }
  // A file the manifest names, of its size, with its mode (setuid, setgid
  // and sticky bits included): the mode it is written with (landing_mode).
  // Anything else is refused, naming the file.
  std::expected<unsigned, Error> admit(std::string_view name, std::uint64_t size, unsigned mode) const;

  // The written files against the manifest, as facts each caller words:
  // how many were written and named, and in the manifest's order each file
  // none of them is (`written` null) or whose bytes differ (hashed as
  // written: UnpackOptions::hash).
  struct Mismatch {
    const ManifestFile* expected = nullptr;
    const UnpackedFile* written = nullptr;  // null: missing
  };
  struct Check {
    std::size_t written = 0;
    std::size_t named = 0;
    std::vector<Mismatch> mismatches;
    bool ok() const { return written == named && mismatches.empty(); }
  };
  Check check(const std::vector<UnpackedFile>& written) const;

 private:
  const Manifest* m_manifest;
  std::map<std::string, const ManifestFile*, std::less<>> m_files;
  std::uint64_t m_total = 0;
};

}  // namespace orc::cache
