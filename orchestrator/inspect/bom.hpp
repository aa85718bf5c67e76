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
#include <string_view>
#include <vector>

#include "orchestrator/inspect/image.hpp"

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

// Whether the bill of materials (or a set's needs) reads the name of the
// entry at `path` (absolute or relative): a CUDA library's file or link,
// or an entry of a wheel's .dist-info directory. A scan keeps only these
// paths, not every path of an image.
bool bom_path(std::string_view path);

// From what a scan kept (ImageContent: paths, links, evidence, files). A
// link in `dangling` is not the library its name says.
std::vector<Component> bill_of_materials(const ImageContent& image);

// "libcublas.so.12.4.5.8" -> {"libcublas.so", "12.4.5.8"}; nullopt for a
// name without a version after ".so.".
struct SonameVersion {
  std::string stem;     // "libcublas.so"
  std::string version;  // "12.4.5.8"
};
std::optional<SonameVersion> split_soname(std::string_view file_name);

}  // namespace orc::inspect
