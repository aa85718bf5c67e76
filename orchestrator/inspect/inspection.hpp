#pragma once
// `orchestrate inspect FILE...`: per file its size, SHA-256, the SASS and PTX
// it embeds, entry counts and compression; archive members (.a) and package
// members (wheels, zips, tarballs, one level of nesting) as members.
//
// Member paths chain their container's path:
//   lib.a:k.o                                   an ar member (cuobjdump's notation)
//   dist.whl!/torch/lib/libx.so                 a package member
//   rel.tar.zst!/dist/t.whl!/torch/lib/libx.so  a package inside a package
// Every member of an ar archive is reported; of a package, only members that
// hold device code or are damaged (a wheel has thousands of .py files).
// Packages are opened one level deep: a wheel inside a tarball is read; a
// package inside that is reported as a member of format "package", unopened.
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
  std::string path;  // as given; for members, in the notation above
  // "elf", "cubin", "fatbin", "ar", "zip", "tar", "tar.gz", "tar.xz",
  // "tar.zst", "gzip"/"xz"/"zstd" (a compressed stream holding no archive),
  // "package" (nested too deep to open), "other"
  std::string format;
  std::uint64_t size = 0;
  std::string sha256;  // lower-case hex; for members, of the member's bytes
  // A container (ar, package) has no entries of its own: its sets and counts
  // are its members' combined, so the row of a wheel says what it holds.
  std::set<arch::ComputeCapability> sass;  // as named by the listing ('a' kept, 'f' not recorded by cubins)
  std::set<arch::ComputeCapability> ptx;   // with 'a'/'f'
  std::size_t entries = 0;                 // every fatbin entry (ELF, PTX, LTO-IR, unknown)
  std::size_t elf_entries = 0;
  std::size_t ptx_entries = 0;
  std::size_t lto_entries = 0;
  bool compressed = false;  // any entry compressed
  std::vector<FileReport> members;
  std::optional<Damage> damage;  // offset into this file's (or member's) bytes
  bool device_code() const;      // this file or a member holds any fatbin entry
};

struct InspectOptions {
  bool exact = false;    // decompress compressed cubins to name them
  unsigned threads = 0;  // 0 = hardware concurrency
};

// Inspects every file, several in parallel; each file is hashed while its
// headers are walked. Corrupt input never throws: it is reported as damage,
// with everything found before it. Files that cannot be opened throw
// util::Failure (bad_input), one diagnostic per file, before any work starts.
std::vector<FileReport> inspect_files(const std::vector<std::filesystem::path>& paths, const InspectOptions& options);

}  // namespace orc::inspect
