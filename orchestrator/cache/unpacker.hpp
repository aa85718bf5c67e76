#pragma once
// The entry-by-entry half of the safe unpacker (private to the cache
// module): unpack.cpp opens the archive and the private temporary trees,
// an Unpacker checks and writes each entry into them.
#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "orchestrator/cache/error.hpp"
#include "orchestrator/cache/fanout.hpp"
#include "orchestrator/cache/pack.hpp"

struct archive;
struct archive_entry;

namespace orc::cache {

// The error of a refused entry: "refused archive entry 'NAME': WHY".
Error refusal(const std::string& name, const std::string& why);

// Writes the entries of one archive into one tree, or two (UnpackOptions::
// mirror): every check is made against the first, and the second, private
// too and built by the same steps, has the same shape.
class Unpacker {
 public:
  Unpacker(std::vector<std::filesystem::path> roots, const UnpackOptions& options)
      : m_roots(std::move(roots)), m_options(options) {}

  // Checks the entry at the archive's position and creates it in every tree.
  std::expected<void, Error> entry(archive* in, archive_entry* e);
  // The directories' modes, once every entry is in.
  void finish();

  std::vector<UnpackedFile> files;

 private:
  class FileWriter;
  struct Dir {
    std::filesystem::path path;
    mode_t mode;
  };

  // The directories above `parts.back()`, made in every tree where missing;
  // refused when one is a symlink or not a directory.
  std::expected<void, Error> make_parents(const std::vector<std::string>& parts, const std::string& name);
  std::expected<void, Error> directory(const std::filesystem::path& rel, mode_t perm, bool exists);
  std::expected<void, Error> symlink(const std::filesystem::path& rel, const char* target, std::size_t depth,
                                     const std::string& name);
  std::expected<void, Error> hardlink(const std::filesystem::path& rel, std::string_view target,
                                      const std::string& name);
  std::expected<void, Error> file(archive* in, const std::filesystem::path& rel, const std::string& name, mode_t perm,
                                  std::int64_t declared_size);

  std::vector<std::filesystem::path> m_roots;
  const UnpackOptions& m_options;
  BlockFanout m_fanout;
  std::uint64_t m_total = 0;
  std::vector<Dir> m_dirs;
  std::vector<std::byte> m_zeros = std::vector<std::byte>(64 << 10);
};

}  // namespace orc::cache
