#pragma once
// A Debian Packages index read as it arrives (issue 28): the bytes as the
// archive serves them (xz, gzip or plain) go through liblzma or zlib piece
// by piece and the deb822 text through a line scanner that keeps only the
// newest version of the packages asked for. Nothing grows with the index:
// not the body, not its text, not its stanzas. Before, the text, a vector of
// every stanza and a map of every name were all held, and a 2.6 MB
// Packages.xz of 17.5M tiny stanzas ran the watcher out of memory.
//
// The format (deb-control(5)): stanzas of "Field: value" lines, separated
// by blank lines; a line starting with a blank continues the field above.
// Package, Version and Architecture are read, every other field skipped.
#include <cstddef>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace orc::watch {

namespace detail {
class IndexDecoder;  // liblzma and zlib stay in the .cpp
}

// How the archive served the index: by its name's suffix (.xz, .gz, none).
enum class IndexCompression { xz, gzip, none };

class PackagesIndexReader {
 public:
  // A body larger than this, as served, is no index (Debian's largest,
  // main for amd64, is about 10 MB as xz and 60 MB as text).
  static constexpr std::uint64_t k_max_served = std::uint64_t{256} << 20;
  // Decompressed text past this is refused: it bounds the time an xz or
  // gzip bomb (a few MB that expand to gigabytes) can take.
  static constexpr std::uint64_t k_max_text = std::uint64_t{512} << 20;
  // liblzma's memory limit: an xz stream names its dictionary size, and a
  // hostile one names 1.5 GiB. `xz -9` needs 65 MiB; Debian's indexes 9 MiB.
  static constexpr std::uint64_t k_max_xz_memory = std::uint64_t{80} << 20;
  // The first bytes of a line kept when it arrives in pieces; a Package,
  // Version or Architecture value longer than this makes its stanza no
  // package (real ones are well under 200 bytes).
  static constexpr std::size_t k_max_line = 4096;

  // `wanted`: the packages whose newest version for amd64 (or all) is kept.
  PackagesIndexReader(IndexCompression compression, const std::vector<std::string>& wanted);
  ~PackagesIndexReader();
  PackagesIndexReader(const PackagesIndexReader&) = delete;
  PackagesIndexReader& operator=(const PackagesIndexReader&) = delete;

  // The next bytes as served, split anywhere. An error says what is wrong
  // with them ("not xz-compressed", "the xz data is damaged at byte N"),
  // and the reader takes nothing after one.
  std::expected<void, std::string> feed(std::string_view bytes);
  // The end of the body: a compressed stream cut short is an error.
  std::expected<void, std::string> finish();

  // Each wanted package found, with its newest version (dpkg's order).
  const std::map<std::string, std::string, std::less<>>& newest() const { return m_newest; }
  // Stanzas with a Package and a Version, of any package and architecture.
  std::uint64_t stanzas() const { return m_stanzas; }
  // The error feed() or finish() returned; empty while there is none.
  const std::string& error() const { return m_error; }

 private:
  std::expected<void, std::string> fail(std::string error);
  // Decompressed text, in pieces of any size.
  std::expected<void, std::string> text(std::string_view piece);
  // One line; `cut`: only its first k_max_line bytes are in `line`.
  void line(std::string_view line, bool cut);
  void end_stanza();

  std::unique_ptr<detail::IndexDecoder> m_decoder;
  std::string_view m_magic;      // what the served bytes must start with
  std::size_t m_magic_seen = 0;  // how many of them have been
  IndexCompression m_compression;
  std::string m_error;  // the first error; nothing is taken after it
  std::uint64_t m_served = 0;
  std::uint64_t m_text = 0;
  std::string m_partial;  // the start of a line split between pieces, at most k_max_line bytes
  bool m_partial_cut = false;
  std::vector<std::string> m_wanted;  // sorted
  // The stanza being read.
  std::string m_name;
  std::string m_version;
  std::string m_architecture;
  bool m_stanza_bad = false;  // a field of it was too long to be one
  std::map<std::string, std::string, std::less<>> m_newest;
  std::uint64_t m_stanzas = 0;
};

// Records `version` of `name` in `newest` unless it holds a newer one
// (dpkg's order).
void keep_newest(std::map<std::string, std::string, std::less<>>& newest, std::string_view name,
                 std::string_view version);

// What a whole index says: for tests, the fuzz target and callers that hold
// the bytes anyway.
struct IndexSummary {
  std::map<std::string, std::string, std::less<>> newest;
  std::uint64_t stanzas = 0;
};
std::expected<IndexSummary, std::string> read_packages_index(std::string_view bytes, IndexCompression compression,
                                                             const std::vector<std::string>& wanted);

}  // namespace orc::watch
