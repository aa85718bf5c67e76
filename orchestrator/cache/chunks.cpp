#include "orchestrator/cache/chunks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "orchestrator/digest/sha256.hpp"

namespace orc::cache {

std::uint64_t chunk_size_for(std::uint64_t file_size) {
  std::uint64_t chunk = k_min_chunk;
  while (chunk < k_max_chunk && chunk_count(file_size, chunk) > k_max_chunks) chunk *= 2;
  // Past 4 TiB the whole-file digest is all a manifest holds.
  if (chunk_count(file_size, chunk) > k_max_chunks) return 0;
  return file_size > chunk ? chunk : 0;
}

std::uint64_t chunk_count(std::uint64_t file_size, std::uint64_t chunk) {
  return chunk == 0 ? 0 : file_size / chunk + (file_size % chunk != 0);
}

std::string chunk_layout_problem(const FileChunks& chunks, std::uint64_t file_size) {
  const std::uint64_t want = chunk_size_for(file_size);
  if (chunks.size != want)
    return "chunks of " + std::to_string(chunks.size) + " bytes; a file of " + std::to_string(file_size) +
           " bytes has " + (want == 0 ? std::string("none") : "chunks of " + std::to_string(want) + " bytes");
  const std::uint64_t count = chunk_count(file_size, want);
  if (chunks.sha256.size() != count)
    return std::to_string(chunks.sha256.size()) + " chunk digests; a file of " + std::to_string(file_size) +
           " bytes has " + std::to_string(count) + " chunks";
  return {};
}

std::expected<FileChunks, Error> hash_chunks(const std::filesystem::path& file, std::uint64_t file_size,
                                             unsigned threads) {
  FileChunks out{.size = chunk_size_for(file_size)};
  if (out.size == 0) return out;
  const std::uint64_t count = chunk_count(file_size, out.size);
  out.sha256.resize(count);
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(io_error("reading " + file.string() + ": " + std::strerror(errno)));
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  threads = static_cast<unsigned>(std::min<std::uint64_t>(threads, count));
  // Each thread takes the next chunk not yet taken and hashes it with pread
  // in 1 MiB pieces; the first failure stops them all.
  std::atomic<std::uint64_t> next{0};
  std::atomic<int> failure{0};  // errno, or -1 for a file shorter than file_size
  const auto work = [&] {
    std::vector<std::byte> buffer(1 << 20);
    for (std::uint64_t c; failure.load() == 0 && (c = next.fetch_add(1)) < count;) {
      digest::Sha256 hasher;
      const std::uint64_t begin = c * out.size, end = std::min(file_size, begin + out.size);
      for (std::uint64_t at = begin; at < end;) {
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), end - at));
        const ssize_t n = ::pread(fd, buffer.data(), want, static_cast<off_t>(at));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          failure = n < 0 ? errno : -1;
          return;
        }
        hasher.update(std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(n)));
        at += static_cast<std::uint64_t>(n);
      }
      out.sha256[c] = hasher.digest().hex();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  ::close(fd);
  if (const int e = failure.load(); e != 0)
    return std::unexpected(
        io_error("reading " + file.string() + ": " +
                 (e > 0 ? std::strerror(e) : "shorter than its " + std::to_string(file_size) + " bytes")));
  return out;
}

// One lane: where the bytes it has seen reach, and the chunk it is hashing.
struct ChunkCheck::LaneState {
  std::uint64_t offset = 0;   // bytes of the file seen so far
  std::uint64_t checked = 0;  // chunks of this lane found matching
  digest::Sha256 hasher;      // the current chunk of this lane
  std::string problem;        // the first mismatch, set once
};

ChunkCheck::ChunkCheck(const FileChunks& expected, std::uint64_t file_size, std::size_t lanes)
    : m_expected(expected), m_file_size(file_size) {
  lanes = std::max<std::size_t>(1, std::min<std::size_t>(lanes, std::max<std::size_t>(1, expected.sha256.size())));
  for (std::size_t i = 0; i < lanes; ++i) m_lanes.push_back(std::make_unique<LaneState>());
}

ChunkCheck::~ChunkCheck() = default;

std::size_t ChunkCheck::lanes() const { return m_lanes.size(); }

ChunkCheck::Lane ChunkCheck::lane(std::size_t i) {
  return [this, i](std::span<const std::byte> bytes) {
    LaneState& s = *m_lanes[i];
    const std::uint64_t chunk = m_expected.size;
    while (!bytes.empty()) {
      const std::uint64_t index = s.offset / chunk;
      const std::uint64_t chunk_end = std::min(m_file_size, (index + 1) * chunk);
      if (index >= m_expected.sha256.size() || s.offset >= m_file_size) {
        s.problem = "the file runs past the " + std::to_string(m_file_size) + " bytes its chunks cover";
        return false;
      }
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size(), chunk_end - s.offset));
      const bool mine = index % m_lanes.size() == i;
      if (mine) s.hasher.update(bytes.first(n));
      s.offset += n;
      bytes = bytes.subspan(n);
      if (mine && s.offset == chunk_end) {
        std::string got = s.hasher.digest().hex();
        if (got != m_expected.sha256[index]) {
          s.problem = "digest mismatch: chunk " + std::to_string(index) + " (bytes " + std::to_string(index * chunk) +
                      "-" + std::to_string(chunk_end - 1) + ") is sha256:" + got +
                      ", the signed manifest says sha256:" + m_expected.sha256[index];
          return false;
        }
        ++s.checked;
      }
    }
    return true;
  };
}

std::string ChunkCheck::mismatch() const {
  for (const auto& s : m_lanes)
    if (!s->problem.empty()) return s->problem;
  return {};
}

std::string ChunkCheck::problem() const {
  if (std::string found = mismatch(); !found.empty()) return found;
  std::uint64_t checked = 0;
  for (const auto& s : m_lanes) checked += s->checked;
  if (checked != m_expected.sha256.size())
    return std::to_string(checked) + " of " + std::to_string(m_expected.sha256.size()) +
           " chunks arrived (the file is shorter than the signed manifest says)";
  return {};
}

std::size_t ChunkCheck::lanes_for(std::size_t chunks) {
  const std::size_t cpus = std::max(1u, std::thread::hardware_concurrency());
  return std::max<std::size_t>(1, std::min({cpus / 3, std::size_t{4}, chunks}));
}

}  // namespace orc::cache
