#pragma once
// The CUDA components an image (or an unpacked root file system) bundles,
// with their versions: a small bill of materials. Each version says where
// it was read, best evidence first:
//   "file name"     the library's own file: libcublas.so.12.4.5.8
//   "version.json"  /usr/local/cuda-X.Y/version.json of NVIDIA's layout
//   "dpkg"          an installed package in var/lib/dpkg/status
//   "pip"           a wheel's NAME-VERSION.dist-info directory
//   "soname"        only the major the file name carries (libcublas.so.13):
//                   no exact version is in the image's metadata
// with the toolkit that compiled the library's device code, read from its
// cubins' notes (what inspect's modules say), beside it.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/inspect/inspection.hpp"

namespace orc::inspect {

struct Component {
  std::string key;      // "cublas"
  std::string name;     // "cuBLAS"
  std::string version;  // "12.4.5.8"; for "soname", the major alone
  std::string source;   // "file name", "version.json", "dpkg libcublas-12-4", "pip nvidia-cublas-cu12", "soname"
  std::vector<std::string> files;  // the component's files in the image
  std::string built_with;          // "CUDA 12.4": the toolkit of its device code; empty when it has none
  bool warning = false;            // bundling it is a mistake (libcuda: the container toolkit mounts the host's)
  std::string note;                // why, when `warning`
};

struct BomInput {
  std::vector<std::string> paths;             // every non-directory path, absolute
  std::map<std::string, std::string> links;   // symbolic link -> target
  std::map<std::string, std::string> texts;   // bom_text() files by absolute path
  const std::vector<FileReport>* files = nullptr;  // reports of the ELF files, for built_with
};

std::vector<Component> bill_of_materials(const BomInput& input);

// "libcublas.so.12.4.5.8" -> {"libcublas.so", "12.4.5.8"}; nullopt for a
// name without a version after ".so.".
struct SonameVersion {
  std::string stem;     // "libcublas.so"
  std::string version;  // "12.4.5.8"
};
std::optional<SonameVersion> split_soname(std::string_view file_name);

}  // namespace orc::inspect
