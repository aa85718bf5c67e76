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
#include "orchestrator/tarsafe/rules.hpp"

struct archive;
struct archive_entry;

namespace orc::cache {

// The error of a refused entry: "refused archive entry 'NAME': WHY".
Error refusal(const std::string& name, const std::string& why);

// Writes the entries of one archive into one tree, or two (UnpackOptions::
// mirror), both private and built by the same steps. Which entries are
// accepted is tarsafe's rules', fed every entry in order.
class Unpacker {
 public:
  Unpacker(std::vector<std::filesystem::path> roots, const UnpackOptions& options)
      : m_roots(std::move(roots)), m_options(options), m_rules(tarsafe::Limits{.max_bytes = options.max_bytes}) {}

  // Checks the entry at the archive's position and creates it in every tree.
  std::expected<void, Error> entry(archive* in, archive_entry* e);
  // Once every entry is in: the rules only the whole archive answers (a
  // refusal), then the directories' modes.
  std::expected<void, Error> finish();

  std::vector<UnpackedFile> files;

 private:
  class FileWriter;
  struct Dir {
    std::filesystem::path path;
    mode_t mode;
  };

  // The directories above `parts.back()`, made in every tree where missing
  // (the rules refused an entry below anything but a directory).
  std::expected<void, Error> make_parents(const std::vector<std::string>& parts);
  std::expected<void, Error> directory(const std::filesystem::path& rel, mode_t perm);
  std::expected<void, Error> symlink(const std::filesystem::path& rel, const std::string& target);
  std::expected<void, Error> hardlink(const std::filesystem::path& rel, const std::string& target);
  std::expected<void, Error> file(archive* in, const std::filesystem::path& rel, const std::string& name, mode_t perm,
                                  std::int64_t declared_size);

  std::vector<std::filesystem::path> m_roots;
  const UnpackOptions& m_options;
  tarsafe::Rules m_rules;
  BlockFanout m_fanout;
  std::uint64_t m_total = 0;
  std::vector<Dir> m_dirs;
  std::vector<std::byte> m_zeros = std::vector<std::byte>(64 << 10);
};

}  // namespace orc::cache
