#pragma once
// `orchestrate inspect --list-elf / --list-ptx`: cuobjdump 13.0's listing,
// byte for byte (fatbin-format.md section 4): the "ELF file    1: stem.1.sm_80.cubin"
// lines, archive "member" lines, its info/warning/fatal messages and exit codes;
// plus what no NVIDIA tool does in one run: old (CUDA <= 11.8, sm_35..)
// and new (CUDA 13, sm_100..) cubins alike.
#include <filesystem>
#include <string>

namespace orc::inspect {

struct ListOptions {
  bool elf = false;           // --list-elf
  bool ptx = false;           // --list-ptx
  bool all_sections = false;  // --all (cuobjdump -all): .nv_fatbin and __nv_relfatbin
  bool exact = false;         // name compressed cubins from their decompressed ELF
};

struct ListResult {
  std::string out;    // what cuobjdump prints on stdout
  std::string err;    // what it prints on stderr
  int exit_code = 0;  // cuobjdump's: 0, 1 (fatal), 255 (no device code)
};

// Lists one input file. Relative paths are made absolute against the current
// directory for messages, as cuobjdump does.
ListResult list_device_code(const std::filesystem::path& path, const ListOptions& options);

// cuobjdump's stem: the basename with only its last extension removed
// ("libcublasLt.so.13" -> "libcublasLt.so").
std::string listing_stem(const std::filesystem::path& path);
// The name an identifier gives instead ("m.cu k.cu " -> "m-k").
std::string identifier_stem(std::string_view identifier);

}  // namespace orc::inspect
