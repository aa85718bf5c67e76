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
#include "orchestrator/inspect/bytes.hpp"
#include "orchestrator/inspect/model.hpp"
#include "orchestrator/inspect/module.hpp"
#include "orchestrator/inspect/runtime_code.hpp"

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
  // Per fatbin container, loadable or relocatable (inspect/module.hpp); the
  // sets above are the union of these, as cuobjdump -all lists them.
  std::vector<Module> modules;
  // A host ELF of type ET_REL (a .o, or a member of a .a): a link still comes
  // between it and the GPU.
  bool object = false;
  // The CUDA runtime this file needs from the driver: the soname major of a
  // DT_NEEDED libcudart.so.N, else (the runtime linked statically) the
  // toolkit that device-linked it, named by its cubins' .note.nv.tkinfo.
  struct Runtime {
    int major = 0;
    std::string from;  // "libcudart.so.12", or "static, device-linked by CUDA 13.0"
  };
  std::optional<Runtime> runtime;
  std::vector<std::string> needed;  // DT_NEEDED, for a host ELF
  std::string soname;               // DT_SONAME, for a host ELF that names one
  // Kernels the runtime does not register: images the library loads itself,
  // nvJitLink or NVRTC (inspect/runtime_code.hpp). Read with `modules`.
  RuntimeCode runtime_code;
  std::vector<FileReport> members;
  std::optional<Damage> damage;  // offset into this file's (or member's) bytes
  // A file given that could not be read, or changed while it was ("cannot
  // read: No such file or directory"): only `path` is filled besides.
  std::optional<std::string> error;
  bool device_code() const;  // this file or a member holds any fatbin entry
};

// The SASS and PTX of the modules the runtime loads (in a linked file,
// __nv_relfatbin does not count); an object, or a report without modules (an
// archive: its members have them), keeps its own sets.
struct CodeSets {
  std::set<arch::ComputeCapability> sass;
  std::set<arch::ComputeCapability> ptx;
};
CodeSets loadable_code(const FileReport& report);
// The archs a linked file holds only in relocatable modules: in some
// __nv_relfatbin module and in no module the runtime registers, because the
// device link did not make them (nvcc 13.0's device link writes SASS only,
// so with -rdc every PTX lands here). Listed with the file's code, marked
// as such; empty for an object (all its code waits for a link) and for a
// report without modules.
CodeSets relocatable_only_code(const FileReport& report);

struct InspectOptions {
  bool exact = false;    // decompress compressed cubins to name them
  unsigned threads = 0;  // 0 = hardware concurrency
  // Read each module's kernels and toolkit (what verdicts need): costs one
  // image per module, decompressed when all of its images are compressed.
  bool modules = false;
};

// Inspects every file, several in parallel; each file is hashed while its
// headers are walked. Corrupt input never throws: it is reported as damage,
// with everything found before it. A file that cannot be opened, or that
// changes while it is read (truncated under the mapping: no SIGBUS, see
// mapped_file.hpp), is a report with `error` set; the others are reported
// in full all the same.
std::vector<FileReport> inspect_files(const std::vector<std::filesystem::path>& paths, const InspectOptions& options);

// Scans bytes already in memory (a file streamed out of an image layer) as
// inspect_files scans a file; `report`'s path, size and sha256 are the
// caller's. Corrupt input is damage, never an exception.
void scan_bytes(FileReport& report, Bytes data, const InspectOptions& options);

// For callers that need every file: throws util::Failure (bad_input) with one
// diagnostic per report that has an error, if any has.
void require_readable(const std::vector<FileReport>& reports);

}  // namespace orc::inspect
