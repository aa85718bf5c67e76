// Stores files as one artifact set in a local store, as a build would: each
// file inspected for the SASS and PTX it embeds (orc::inspect), the set
// stored as its files (no pack: push makes the layer from them), signed
// with the keys dir's key when one is given (orc::cache::store_artifact_set). bench/fetch.sh and the integration_fetch
// suite use it to make what they push.
//   bench_fetch_seed [--built-for=PTX:NAME=CC,...] STORE KEYS_DIR|- RECIPE TIER FILE...
//     -> prints the manifest hex; --built-for records the tier's GPUs and PTX
//        policy in the manifest as a build does ("highest:H100=9.0,B200=10.0")
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/cache/artifact_set.hpp"
#include "orchestrator/cache/keys.hpp"
#include "orchestrator/inspect/inspection.hpp"

int main(int argc, char** argv) {
  namespace cache = orc::cache;
  std::optional<cache::BuiltFor> built_for;
  if (argc > 1 && std::string_view(argv[1]).starts_with("--built-for=")) {
    const std::string spec = std::string(argv[1]).substr(12);
    const auto colon = spec.find(':');
    built_for = cache::BuiltFor{.gpus = {}, .ptx = spec.substr(0, colon)};
    for (std::size_t at = colon + 1; colon != std::string::npos && at < spec.size();) {
      const auto comma = std::min(spec.find(',', at), spec.size());
      const std::string gpu = spec.substr(at, comma - at);
      const auto eq = gpu.find('=');
      built_for->gpus.push_back({.name = gpu.substr(0, eq), .cc = eq == std::string::npos ? "" : gpu.substr(eq + 1)});
      at = comma + 1;
    }
    ++argv;
    --argc;
  }
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s STORE KEYS_DIR|- RECIPE TIER FILE...\n", argv[0]);
    return 2;
  }
  auto store = cache::Store::open(argv[1]);
  if (!store) {
    std::fprintf(stderr, "%s\n", store.error().message.c_str());
    return 3;
  }
  std::optional<cache::SigningKey> key;
  if (std::string(argv[2]) != "-") {
    auto loaded = cache::load_signing_key(argv[2]);
    if (!loaded) {
      std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
      return 2;
    }
    key = std::move(*loaded);
  }
  cache::NewArtifactSet set{.key = key ? &*key : nullptr, .verified = true};
  set.manifest = {.recipe = argv[3],
                  .framework = "nvcc",
                  .tier = argv[4],
                  .key = "seed",
                  .source_kind = "path",
                  .source_revision = "tree:seed",
                  .engine = "host",
                  .image = "host",
                  .toolkit = "13.0"};
  set.manifest.built_for = built_for;
  std::vector<std::filesystem::path> paths(argv + 5, argv + argc);
  const auto reports = orc::inspect::inspect_files(paths, {});
  orc::inspect::require_readable(reports);
  for (std::size_t i = 0; i < paths.size(); ++i) {
    cache::ManifestFile file{.path = paths[i].filename().string()};
    file.embedded_sass = orc::arch::ArchList::sass(reports[i].sass);
    file.embedded_ptx = orc::arch::ArchList::ptx(reports[i].ptx);
    file.requested_sass = file.embedded_sass;
    file.requested_ptx = file.embedded_ptx;
    set.manifest.files.push_back(std::move(file));
    set.sources.push_back(paths[i]);
  }
  auto entry = cache::store_artifact_set(*store, std::move(set));
  if (!entry) {
    std::fprintf(stderr, "%s\n", entry.error().message.c_str());
    return 3;
  }
  std::printf("%s\n", entry->manifest.hex().c_str());
  return 0;
}
