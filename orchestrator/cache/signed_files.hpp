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

#include "orchestrator/cache/error.hpp"
#include "orchestrator/cache/manifest.hpp"

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

 private:
  std::map<std::string, const ManifestFile*, std::less<>> m_files;
  std::uint64_t m_total = 0;
};

}  // namespace orc::cache
