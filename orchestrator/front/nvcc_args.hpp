#pragma once
// What one nvcc command line asks of device code, read the way nvcc reads
// it (checked against `nvcc --dryrun` of 11.8, 12.4 and 13.0 in
// tests/integration/front_test.cpp):
//
//   -arch=sm_XY                 SASS sm_XY and PTX compute_XY
//   -arch=compute_XY            PTX compute_XY only
//   -arch=sm_90a / compute_100f the above, and PTX of the plain compute_90 / 100
//   -arch=compute_XY -code=L    what L lists (sm_, compute_, lto_)
//   -gencode arch=compute_XY,code=[sm_XY,compute_XY]   each as listed
//   -arch=... beside -gencode   the union of both
//   -arch=native|all|all-major  decided by nvcc itself (the front asks it)
//   no arch option              nvcc's default arch, SASS and PTX
//
// Long and short spellings, `=` or a separate value, and options files
// (--options-file / -optf) are all read; NVCC_PREPEND_FLAGS and
// NVCC_APPEND_FLAGS are the caller's to add (nvcc adds them too).
#include <filesystem>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/arch/arch_set.hpp"

namespace orc::front {

// How a call chose its archs.
enum class ArchChoice {
  listed,        // -arch / -code / -gencode name them
  nvcc_default,  // no arch option: nvcc's default arch
  native,        // -arch=native: the build machine's GPUs
  all,           // -arch=all
  all_major,     // -arch=all-major
};
std::string_view arch_choice_name(ArchChoice c);

// What the call makes: only compile and device_link (and a link that names
// archs, which device-links) are judged against the plan.
enum class CallKind {
  compile,        // .cu sources to objects or an executable
  device_link,    // -dlink
  link,           // objects only, no -c: nvcc links (and device-links -rdc objects)
  single_target,  // -ptx, -cubin, -optix-ir: one file the project loads itself
  host_only,      // C/C++ sources without device code
  preprocess,     // -E, -M, -MM without a compile
  query,          // --version, --help, --list-gpu-arch, --dryrun, nothing built
};
std::string_view call_kind_name(CallKind k);

struct Targets {
  arch::ArchSet code;                     // SASS and PTX
  std::set<arch::ComputeCapability> lto;  // lto_XY (LTO-IR for the device link)
  friend bool operator==(const Targets&, const Targets&) = default;
};

struct NvccCall {
  CallKind kind = CallKind::query;
  ArchChoice choice = ArchChoice::nvcc_default;
  Targets targets;                      // for ArchChoice::listed
  std::vector<std::string> arch_flags;  // as written, in order
  std::vector<std::string> sources;     // .cu (and -x cu) inputs
  std::vector<std::string> inputs;      // every input file
  std::string output;                   // -o
  std::vector<std::string> problems;    // arch values nvcc would refuse ("sm_8x")
};

// Splits the text of an options file or NVCC_*_FLAGS the way nvcc does:
// at white space, with "..." and '...' quoting and backslash escapes.
std::vector<std::string> split_flags(std::string_view text);

// Reads `args`, options files already spliced in (expand_options_files).
NvccCall read_nvcc_call(std::span<const std::string> args);

// `args` with every options file spliced in (an enforced call rewrites
// arch options wherever they were written).
using OptionsFileReader = std::optional<std::string> (*)(const std::string& path);
std::vector<std::string> expand_options_files(std::span<const std::string> args, OptionsFileReader reader);

// `args` without any arch option (-arch, -code, -gencode in every spelling,
// with their separate values).
std::vector<std::string> strip_arch_options(std::span<const std::string> args);

// The targets of an ArchChoice::nvcc_default call.
Targets default_targets(arch::ComputeCapability default_arch);

// The targets nvcc's own --dryrun output names (its fatbinary --image3 lines,
// or --image= on 11.x): how -arch=native, all and all-major are read.
std::optional<Targets> targets_from_dryrun(std::string_view dryrun_output);

// "sm_80 sm_89 sm_90 compute_90 lto_90".
std::string describe(const Targets& t);

}  // namespace orc::front
