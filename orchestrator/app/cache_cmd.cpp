#include "orchestrator/app/cache_cmd.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "orchestrator/app/inspect.hpp"
#include "orchestrator/app/transfer_cmd.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/maintenance.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

using nlohmann::ordered_json;
using util::ExitCode;

// The table shows this many hex digits of a manifest digest; `fetch --digest`
// accepts any unique prefix, so the column can be pasted.
constexpr std::size_t k_short_digest = 16;

std::filesystem::path store_root(const CacheRequest& request) {
  return request.store_root.empty() ? cache::default_store_root() : request.store_root;
}

cache::Store open_store(const CacheRequest& request) {
  auto store = cache::Store::open(store_root(request));
  if (!store) fail_with(store.error());
  return std::move(*store);
}

std::size_t verified_count(const std::vector<cache::IndexEntry>& sets) {
  return static_cast<std::size_t>(std::ranges::count(sets, true, &cache::IndexEntry::verified));
}

ordered_json rebuild_json(const cache::RebuildReport& r) {
  ordered_json sets = ordered_json::array();
  for (const auto& e : r.sets) sets.push_back("sha256:" + e.manifest);
  return {{"blobs", r.blobs},
          {"sets", std::move(sets)},
          {"verified", verified_count(r.sets)},
          {"skipped", r.skipped},
          {"unknown_modes", r.unknown_modes},
          {"old_index", r.old_index.empty() ? ordered_json(nullptr) : ordered_json(r.old_index.string())}};
}

std::string rebuild_text(const cache::RebuildReport& r, const std::filesystem::path& root) {
  std::ostringstream out;
  out << "rebuilt the index of " << root.string() << " from " << r.blobs << " blobs: " << r.sets.size()
      << " artifact set(s), " << verified_count(r.sets) << " verified, " << r.skipped.size() << " left out\n";
  for (const auto& why : r.skipped) out << "left out: " << why << "\n";
  if (r.unknown_modes > 0)
    out << "note: no record of the mode of " << r.unknown_modes
        << " file(s) was found; they are recorded as 0644 (fetch writes them without an x bit)\n";
  if (!r.old_index.empty()) out << "the index it replaces is kept as " << r.old_index.string() << "\n";
  return out.str();
}

ordered_json or_null(const std::string& hex, bool prefixed = true) {
  if (hex.empty()) return nullptr;
  return prefixed ? "sha256:" + hex : hex;
}

ordered_json set_json(const cache::IndexEntry& e) {
  ordered_json files = ordered_json::array();
  for (const auto& f : e.files) files.push_back({{"path", f.path}, {"sha256", f.sha256}, {"size", f.size}});
  return {{"manifest", "sha256:" + e.manifest},
          {"recipe", e.recipe},
          {"tier", e.tier},
          {"key", e.key},
          {"toolkit", e.toolkit},
          {"cudnn", or_null(e.cudnn, false)},
          {"sass", e.sass},
          {"ptx", e.ptx},
          {"files", std::move(files)},
          {"build_log", or_null(e.build_log)},
          {"signature", or_null(e.signature)},
          {"signer", or_null(e.signer, false)},
          {"verified", e.verified},
          {"source_revision", e.source_revision},
          {"created", cache::utc_rfc3339(e.created)}};
}

std::string ls_table(const std::vector<cache::IndexEntry>& sets) {
  std::vector<std::vector<std::string>> rows{
      {"MANIFEST", "RECIPE", "TIER", "TOOLKIT", "SASS", "PTX", "FILES", "SIZE", "SIGNER", "VERIFIED", "CREATED"}};
  for (const auto& e : sets) {
    std::uint64_t size = 0;
    for (const auto& f : e.files) size += f.size;
    rows.push_back({e.manifest.substr(0, k_short_digest), e.recipe, e.tier, e.toolkit,
                    e.sass.empty() ? "-" : util::join(e.sass, ","), e.ptx.empty() ? "-" : util::join(e.ptx, ","),
                    std::to_string(e.files.size()), human_size(size), e.signer.empty() ? "unsigned" : e.signer,
                    e.verified ? "yes" : "no", cache::utc_rfc3339(e.created)});
  }
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  std::ostringstream out;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      out << row[i];
      if (i + 1 < row.size()) out << std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << '\n';
  }
  return out.str();
}

}  // namespace

void fail_with(const cache::Error& error) {
  switch (error.kind) {
    case cache::ErrorKind::io:
      throw util::Failure(ExitCode::outside_failure, error.message);
    case cache::ErrorKind::corrupt:
      throw util::Failure(ExitCode::check_failed, error.message);
    default:
      throw util::Failure(ExitCode::bad_input, error.message);
  }
}

CacheOutput cache_ls(const CacheRequest& request) {
  cache::Store store = open_store(request);
  auto sets = store.index().list({.recipe = request.recipe, .tier = request.tier});
  if (!sets) fail_with(sets.error());
  CacheOutput output;
  if (request.json) {
    ordered_json list = ordered_json::array();
    for (const auto& e : *sets) list.push_back(set_json(e));
    output.out = ordered_json{{"store", store.root().string()}, {"sets", std::move(list)}}.dump(2) + "\n";
  } else if (sets->empty()) {
    output.err = "no artifact sets in " + store.root().string() + "\n";
  } else {
    output.out = ls_table(*sets);
  }
  return output;
}

CacheOutput cache_verify(const CacheRequest& request) {
  std::ostringstream progress;
  std::optional<cache::RebuildReport> rebuilt;
  if (request.rebuild_index) {
    const auto config = load_transfer_config(request.config, false);
    auto made = cache::rebuild_index(store_root(request), trusted_keys(config ? &*config : nullptr), progress);
    if (!made) fail_with(made.error());
    rebuilt = std::move(*made);
  }
  cache::Store store = open_store(request);
  auto report = cache::verify_store(store, progress);
  if (!report) fail_with(report.error());
  CacheOutput output{.out = "", .err = progress.str(), .exit_code = 0};
  const bool damaged = !report->corrupt.empty() || !report->missing.empty() || (rebuilt && !rebuilt->skipped.empty());
  if (damaged) output.exit_code = static_cast<int>(ExitCode::check_failed);
  if (request.json) {
    ordered_json corrupt = ordered_json::array();
    for (const auto& c : report->corrupt)
      corrupt.push_back({{"digest", "sha256:" + c.digest},
                         {"actual", c.actual},
                         {"moved_to", c.moved_to.string()},
                         {"dropped", c.dropped}});
    ordered_json json{{"blobs", report->blobs},
                      {"bytes", report->bytes},
                      {"corrupt", std::move(corrupt)},
                      {"missing", report->missing}};
    if (rebuilt) json["rebuilt_index"] = rebuild_json(*rebuilt);
    output.out = json.dump(2) + "\n";
    return output;
  }
  std::ostringstream out;
  if (rebuilt) out << rebuild_text(*rebuilt, store.root());
  out << "verified " << report->blobs << " blobs (" << human_size(report->bytes) << ") in " << store.root().string()
      << ": " << report->corrupt.size() << " corrupt, " << report->missing.size() << " missing\n";
  for (const auto& c : report->corrupt)
    out << "corrupt: sha256:" << c.digest << " now hashes to " << c.actual << "; moved to " << c.moved_to.string()
        << "; dropped " << c.dropped.size() << " artifact set(s)\n";
  for (const auto& hex : report->missing) out << "missing: sha256:" << hex << "; dropped the artifact sets naming it\n";
  output.out = out.str();
  return output;
}

CacheOutput cache_gc(const CacheRequest& request) {
  cache::Store store = open_store(request);
  std::ostringstream progress;
  auto report = cache::collect_garbage(store, {.keep = request.keep}, progress);
  if (!report) fail_with(report.error());
  CacheOutput output{.out = "", .err = progress.str(), .exit_code = 0};
  if (request.json) {
    output.out = ordered_json{{"removed_sets", report->removed_sets},
                              {"dropped_packs", report->dropped_packs},
                              {"removed_blobs", report->removed_blobs},
                              {"removed_bytes", report->removed_bytes},
                              {"removed_temporaries", report->removed_temps}}
                     .dump(2) +
                 "\n";
  } else {
    output.out = "removed " + std::to_string(report->removed_sets.size()) + " artifact set(s), " +
                 std::to_string(report->removed_blobs) + " blob(s) (" + human_size(report->removed_bytes) + "), " +
                 std::to_string(report->removed_temps) + " temporary file(s)\n";
    if (!report->dropped_packs.empty())
      output.out += "dropped the pack kept beside the files of " + std::to_string(report->dropped_packs.size()) +
                    " artifact set(s): push packs the same bytes from the files\n";
  }
  return output;
}

}  // namespace orc::app
