#pragma once
// The few metadata files the bill of materials reads (bom.hpp): dpkg's
// status database (var/lib/dpkg/status, and one status.d/ file per package
// in distroless images) and CUDA's /usr/local/cuda-X.Y/version.json.
//
// Each is read as it streams and only what the bill of materials uses is
// kept: the installed CUDA packages with their versions, version.json's
// versions of the CUDA components (issue 28: kept whole, 120 status.d files
// of zeros, 139 KB compressed, took 3 GB). A scan reads at most
// k_max_files of them and k_max_bytes in all, keeps at most k_max_kept
// versions, and says what it did not read.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/inspect/package.hpp"

namespace orc::inspect {

struct BomEvidence {
  std::map<std::string, std::string> packages;  // dpkg: installed CUDA package -> upstream version
  std::map<std::string, std::string> versions;  // version.json: CUDA component key -> version
  bool empty() const { return packages.empty() && versions.empty(); }
};

// Whether the bill of materials reads the file at `path` (normalized,
// relative: "var/lib/dpkg/status"): dpkg's status database, CUDA's
// version.json.
bool bom_text(std::string_view path);

// The bill of materials' files of one scan, read within its caps; several
// threads may read at once.
class BomTexts {
 public:
  static constexpr std::size_t k_max_files = 4096;
  static constexpr std::uint64_t k_max_bytes = 256ull << 20;
  // A version.json is parsed whole: NVIDIA's are a few KB.
  static constexpr std::uint64_t k_max_json = 1ull << 20;
  static constexpr std::size_t k_max_kept = 4096;

  // Reads the file at `path` (bom_text() holds for it) of `size` bytes
  // from `read`; `where` names it in what unread() says ("/var/lib/dpkg/status
  // in layer sha256:..."). A file past a cap is not read and is noted; what
  // the read leaves of the stream is the caller's to skip.
  BomEvidence read(std::string_view path, std::uint64_t size, const StreamRead& read, std::string_view where);

  // What was not read, a line per reason with the first files' names: "112
  // bill-of-materials files not read: ...".
  std::vector<std::string> unread() const;

 private:
  enum class Reason { files, bytes, json, kept, failed, count };
  void note(Reason reason, std::string_view where, std::string_view detail = {});
  bool keep(std::size_t entries);

  mutable std::mutex m_mutex;
  std::size_t m_files = 0;
  std::uint64_t m_bytes = 0;
  std::size_t m_kept = 0;
  struct Unread {
    std::size_t count = 0;
    std::vector<std::string> first;  // at most a few names
  };
  Unread m_unread[static_cast<std::size_t>(Reason::count)];
};

}  // namespace orc::inspect
