// A hit's needs: what each artifact links that its set does not carry, as
// the set's manifest recorded it when it was built.
#include <algorithm>

#include "orchestrator/app/build/build_job.hpp"
#include "orchestrator/cache/manifest.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/site/library_needs.hpp"

namespace orc::app::detail {

void attach_needs(BuildResult& result, const cache::Store& store) {
  if (!result.manifest) return;
  const auto text = store.read_blob(*result.manifest);
  if (!text) return;
  const auto manifest = cache::parse_manifest(*text);
  if (!manifest) return;
  for (BuiltArtifact& a : result.artifacts) {
    const auto file = std::ranges::find(manifest->files, a.name, &cache::ManifestFile::path);
    if (file == manifest->files.end()) continue;
    a.needs = file->needs;
    site::sort_for_reports(a.needs);
  }
}

}  // namespace orc::app::detail
