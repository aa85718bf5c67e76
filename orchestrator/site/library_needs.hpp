#pragma once
// A set's needs (inspect/needs.hpp) as the manifest keeps them, and said the
// one way every report says them: "cuBLAS 13 (libcublas.so.13)".
#include <string>
#include <vector>

#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/inspect/cuda_libraries.hpp"
#include "orchestrator/inspect/inspection.hpp"

namespace orc::site {

cache::LibraryNeed library_need(const inspect::LinkedLibrary& linked);

// Each file of `manifest` (matched by path to `reports`) gets what it links
// that no file of the set carries.
void record_needs(cache::Manifest& manifest, const std::vector<inspect::FileReport>& reports);

// "cuBLAS"; empty for a library this version does not know.
std::string library_name(const cache::LibraryNeed& need);

// "cuBLAS 13 (libcublas.so.13)"; a library this version does not know (a
// newer tool's manifest) by its soname alone.
std::string describe(const cache::LibraryNeed& need);

// The order reports list needs in: inspect's table (the runtime first,
// cuDNN's siblings together), then by soname; the manifest keeps them by
// soname alone.
void sort_for_reports(std::vector<cache::LibraryNeed>& needs);

// Over a whole set: each needed soname once, with the files that link it,
// in the order reports list them.
struct SetNeed {
  cache::LibraryNeed need;
  std::vector<std::string> files;
};
std::vector<SetNeed> set_needs(const cache::Manifest& manifest);

}  // namespace orc::site
