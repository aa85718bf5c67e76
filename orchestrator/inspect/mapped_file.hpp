#pragma once
// A whole file mapped read-only into memory (private to the inspect module).
// Listing and hashing both read every byte of files that can be hundreds of
// megabytes (libcublasLt.so.13 is 540 MB); mapping them lets the kernel page
// them in on demand instead of copying them into a buffer first.
#include <cstdint>
#include <expected>
#include <filesystem>
#include <string>

#include "orchestrator/inspect/bytes.hpp"

namespace orc::inspect {

class MappedFile {
 public:
  // Maps `path` (after following symlinks). An empty file maps to no bytes;
  // the error is strerror's text ("No such file or directory", ...).
  static std::expected<MappedFile, std::string> open(const std::filesystem::path& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  Bytes bytes() const { return {static_cast<const std::byte*>(m_data), static_cast<std::size_t>(m_size)}; }
  std::uint64_t size() const { return m_size; }

 private:
  MappedFile(void* data, std::uint64_t size) : m_data(data), m_size(size) {}
  void release() noexcept;

  void* m_data = nullptr;  // nullptr for an empty file
  std::uint64_t m_size = 0;
};

}  // namespace orc::inspect
