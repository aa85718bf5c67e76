#pragma once
// A large file's bytes as chunks, each with its own SHA-256 in the signed
// manifest, so that a pull verifies one file on several threads at once.
// SHA-256 is sequential: one stream runs at 1.1-1.4 GB/s on the hosts we
// measured, slower than a registry on the same host sends (1.6 GB/s), and
// was the one step of a pull no thread could share. The whole-file digest
// stays (the store names blobs by it); the chunks are what a pull checks.
//
// A file gets chunks when it is larger than one chunk: 4 MiB, doubled until
// the file has at most k_max_chunks of them (so a 16 GiB file has 4096 of
// 4 MiB, a 20 GiB one 2560 of 8 MiB). Every chunk but the last is full.
#include <cstddef>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "orchestrator/cache/error.hpp"

namespace orc::cache {

struct FileChunks {
  std::uint64_t size = 0;           // bytes per chunk; 0: the file has none
  std::vector<std::string> sha256;  // lower-case hex, one per chunk, in order
  bool operator==(const FileChunks&) const = default;
};

inline constexpr std::uint64_t k_min_chunk = 4 << 20;
inline constexpr std::uint64_t k_max_chunk = 1ull << 30;
inline constexpr std::size_t k_max_chunks = 4096;

// The chunk size for a file of `file_size` bytes; 0 when it is one chunk or
// less, or past k_max_chunks chunks of k_max_chunk (4 TiB): its whole-file
// digest is all there is to check.
std::uint64_t chunk_size_for(std::uint64_t file_size);
// How many chunks of `chunk` bytes a file of `file_size` bytes has.
std::uint64_t chunk_count(std::uint64_t file_size, std::uint64_t chunk);
// Empty when `chunks` is what chunk_size_for would give a file of
// `file_size` bytes (size and count), else what is wrong with it.
std::string chunk_layout_problem(const FileChunks& chunks, std::uint64_t file_size);

// The chunks of `file` (`file_size` bytes, which it must hold), hashed on
// up to `threads` threads reading with pread (0: as many as the CPUs allow,
// at most 8). No chunks when the file is one chunk or less.
std::expected<FileChunks, Error> hash_chunks(const std::filesystem::path& file, std::uint64_t file_size,
                                             unsigned threads = 0);

// Checks a file's bytes against its chunks as they pass by, on `lanes`
// steps of a BlockFanout: each lane sees every byte, in order, and hashes
// the chunks i with i % lanes == its number, so `lanes` threads share the
// work. problem() is read once every lane has seen the whole file.
class ChunkCheck {
 public:
  using Lane = std::function<bool(std::span<const std::byte>)>;

  ChunkCheck(const FileChunks& expected, std::uint64_t file_size, std::size_t lanes);
  ~ChunkCheck();
  ChunkCheck(const ChunkCheck&) = delete;
  ChunkCheck& operator=(const ChunkCheck&) = delete;

  std::size_t lanes() const;
  // Lane `i`'s step: false from the first chunk that does not match.
  Lane lane(std::size_t i);
  // Empty when every chunk matched, else the first that did not ("digest
  // mismatch: chunk 3 (bytes 12582912-16777215) is sha256:..., the signed
  // manifest says sha256:...") or what never arrived.
  std::string problem() const;
  // Only a lane's own finding (a chunk that did not match, bytes past the
  // end), not chunks that never arrived: what a step that failed for
  // another reason (a write) is checked for.
  std::string mismatch() const;

  // How many lanes a file of `chunks` chunks gets on this machine: one per
  // three CPUs (the download, the unpack and its writers need the rest), at
  // least one, at most 4 (the fan-out's ring holds six blocks: more lanes
  // would wait for slots), never more than the chunks.
  static std::size_t lanes_for(std::size_t chunks);

 private:
  struct LaneState;
  const FileChunks& m_expected;
  std::uint64_t m_file_size;
  std::vector<std::unique_ptr<LaneState>> m_lanes;
};

}  // namespace orc::cache
