#pragma once
// What a set of files needs from a node to start: the CUDA libraries its
// files link (DT_NEEDED) that no file of the set carries. A set that links
// libcublas.so.13 and does not carry it runs only where the node (or the
// image around the set) provides cuBLAS 13; verdicts on device code say
// nothing about that, so reports say it beside them.
//
// A set carries a soname when one of its files (or their members) has it as
// its base name, or names it as its own DT_SONAME (libcublas.so.13.1.0.3
// names libcublas.so.13; ldconfig links the one to the other). The driver's
// libraries (libcuda.so.1, libnvidia-ml.so.1) are never needs: the NVIDIA
// container toolkit mounts the host's, and a set must not carry them.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/inspect/cuda_libraries.hpp"
#include "orchestrator/inspect/inspection.hpp"

namespace orc::inspect {

// The CUDA libraries `file` and its members link, each soname once, in the
// order the dynamic sections name them; the driver's included.
std::vector<LinkedLibrary> cuda_links(const FileReport& file);

// The sonames `files` carry: base names (of members too) and DT_SONAMEs.
std::set<std::string, std::less<>> carried_sonames(const std::vector<FileReport>& files);

// What `file` (with its members) links that `carried` lacks, the driver's
// libraries left out, in the table's order.
std::vector<LinkedLibrary> unmet_needs(const FileReport& file, const std::set<std::string, std::less<>>& carried);

// One library a set needs, with the files that link it.
struct SetNeed {
  LinkedLibrary library;
  std::vector<std::string> files;  // report paths, in report order
  bool operator==(const SetNeed&) const = default;
};

// Over a whole set: each needed soname once, in the table's order. The
// set carries what `carried` names (by default what its files carry; an
// image's scan passes every path of the image).
std::vector<SetNeed> set_needs(const std::vector<FileReport>& files);
std::vector<SetNeed> set_needs(const std::vector<FileReport>& files, const std::set<std::string, std::less<>>& carried);

// Whether `file` (or a member) links a CUDA library other than the driver's:
// worth keeping in an image's scan even without device code of its own.
bool links_cuda_libraries(const FileReport& file);

// "cuBLAS 13 (libcublas.so.13)".
std::string describe_need(const LinkedLibrary& library);

}  // namespace orc::inspect
