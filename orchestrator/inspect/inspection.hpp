#pragma once
// `orchestrate inspect FILE...`: per file its size, SHA-256, the SASS and PTX
// it embeds, entry counts and compression; archive members (.a) and package
// members (wheels, zips, tarballs, one level of nesting) as members.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/inspect/model.hpp"

namespace orc::inspect {

struct FileReport {
  std::string path;          // as given; for members, the path inside the archive or package
  std::string format;        // "elf", "cubin", "fatbin", "ar", "zip", "tar", "tar.gz", "tar.xz", "tar.zst", "other"
  std::uint64_t size = 0;
  std::string sha256;        // lower-case hex; for members, of the member's bytes
  std::set<arch::ComputeCapability> sass;  // as named by the listing ('a' kept, 'f' not recorded by cubins)
  std::set<arch::ComputeCapability> ptx;   // with 'a'/'f'
  std::size_t entries = 0;   // every fatbin entry (ELF, PTX, LTO-IR, unknown)
  std::size_t elf_entries = 0;
  std::size_t ptx_entries = 0;
  std::size_t lto_entries = 0;
  bool compressed = false;   // any entry compressed
  std::vector<FileReport> members;
  std::optional<Damage> damage;
  bool device_code() const;  // this file or a member holds any fatbin entry
};

struct InspectOptions {
  bool exact = false;  // decompress compressed cubins to name them
  unsigned threads = 0;  // 0 = hardware concurrency
};

// Inspects every file, several in parallel; hashing happens in the same pass
// that reads each file. Unreadable files throw util::Failure (bad_input).
std::vector<FileReport> inspect_files(const std::vector<std::filesystem::path>& paths, const InspectOptions& options);

}  // namespace orc::inspect
