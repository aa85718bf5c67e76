// `orchestrate cache ls | verify | gc`, rendered: a table or text, or --json.
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "orchestrator/cache/files.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/cli/table.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::cli {

namespace {

using nlohmann::ordered_json;
using util::human_size;

// The table shows this many hex digits of a manifest digest; `fetch --digest`
// accepts any unique prefix, so the column can be pasted.
constexpr std::size_t k_short_digest = 16;

// The JSON lists of digests are bare hex (their documented shape).
std::vector<std::string> hex_list(const std::vector<digest::Digest>& digests) {
  std::vector<std::string> out;
  for (const auto& d : digests) out.push_back(d.hex());
  return out;
}

std::size_t verified_count(const std::vector<cache::IndexEntry>& sets) {
  return static_cast<std::size_t>(std::ranges::count(sets, true, &cache::IndexEntry::verified));
}

ordered_json rebuild_json(const cache::RebuildReport& r) {
  ordered_json sets = ordered_json::array();
  for (const auto& e : r.sets) sets.push_back(e.manifest.to_string());
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

ordered_json or_null(const std::string& text) {
  if (text.empty()) return nullptr;
  return text;
}

ordered_json or_null(const std::optional<digest::Digest>& digest) {
  if (!digest) return nullptr;
  return digest->to_string();
}

ordered_json set_json(const cache::IndexEntry& e) {
  ordered_json files = ordered_json::array();
  for (const auto& f : e.files) files.push_back({{"path", f.path}, {"sha256", f.sha256}, {"size", f.size}});
  return {{"manifest", e.manifest.to_string()},
          {"recipe", e.recipe},
          {"tier", e.tier},
          {"key", e.key},
          {"toolkit", e.toolkit},
          {"cudnn", or_null(e.cudnn)},
          {"sass", e.sass.names()},
          {"ptx", e.ptx.names()},
          {"files", std::move(files)},
          {"build_log", or_null(e.build_log)},
          {"signature", or_null(e.signature)},
          {"signer", or_null(e.signer)},
          {"verified", e.verified},
          {"source_revision", e.source_revision},
          {"created", cache::utc_rfc3339(e.created)}};
}

std::string ls_table(const std::vector<cache::IndexEntry>& sets) {
  Table table(
      {"MANIFEST", "RECIPE", "TIER", "TOOLKIT", "SASS", "PTX", "FILES", "SIZE", "SIGNER", "VERIFIED", "CREATED"});
  for (const auto& e : sets) {
    std::uint64_t size = 0;
    for (const auto& f : e.files) size += f.size;
    table.add_row({e.manifest.hex().substr(0, k_short_digest), e.recipe, e.tier, e.toolkit, e.sass.joined(","),
                   e.ptx.joined(","), std::to_string(e.files.size()), human_size(size),
                   e.signer.empty() ? "unsigned" : e.signer, e.verified ? "yes" : "no", cache::utc_rfc3339(e.created)});
  }
  return table.render();
}

std::string verify_json(const app::CacheVerifyReport& r) {
  ordered_json corrupt = ordered_json::array();
  for (const auto& c : r.verified.corrupt)
    corrupt.push_back({{"digest", "sha256:" + c.digest},
                       {"actual", c.actual},
                       {"moved_to", c.moved_to.string()},
                       {"dropped", hex_list(c.dropped)}});
  ordered_json json{{"blobs", r.verified.blobs},
                    {"bytes", r.verified.bytes},
                    {"corrupt", std::move(corrupt)},
                    {"missing", r.verified.missing},
                    {"read_only", r.verified.read_only}};
  if (r.rebuilt) json["rebuilt_index"] = rebuild_json(*r.rebuilt);
  return json.dump(2) + "\n";
}

std::string verify_text(const app::CacheVerifyReport& r) {
  std::ostringstream out;
  if (r.rebuilt) out << rebuild_text(*r.rebuilt, r.store);
  out << "verified " << r.verified.blobs << " blobs (" << human_size(r.verified.bytes) << ") in " << r.store.string()
      << ": " << r.verified.corrupt.size() << " corrupt, " << r.verified.missing.size() << " missing\n";
  const bool read_only = r.verified.read_only;
  for (const auto& c : r.verified.corrupt) {
    out << "corrupt: sha256:" << c.digest << " now hashes to " << c.actual;
    if (read_only)
      out << "; left in place (the store is read-only)\n";
    else
      out << "; moved to " << c.moved_to.string() << "; dropped " << c.dropped.size() << " artifact set(s)\n";
  }
  for (const auto& hex : r.verified.missing)
    out << "missing: sha256:" << hex
        << (read_only ? "; the artifact sets naming it stay (the store is read-only)\n"
                      : "; dropped the artifact sets naming it\n");
  return out.str();
}

std::string gc_text(const cache::GcReport& r) {
  const cache::ScratchSweep& scratch = r.tmp.scratch;
  std::string out = "removed " + std::to_string(r.removed_sets.size()) + " artifact set(s), " +
                    std::to_string(r.removed_blobs) + " blob(s) (" + human_size(r.removed_bytes) + "), " +
                    std::to_string(r.tmp.removed_temps) + " temporary file(s), " + std::to_string(scratch.removed) +
                    " abandoned build tree(s) (" + human_size(scratch.bytes) + ")\n";
  if (!r.dropped_packs.empty())
    out += "dropped the pack kept beside the files of " + std::to_string(r.dropped_packs.size()) +
           " artifact set(s): push packs the same bytes from the files\n";
  for (const auto& tree : scratch.in_use) out += "left " + tree.string() + ": a running build owns it\n";
  if (scratch.in_use_total > scratch.in_use.size())
    out += "left " + std::to_string(scratch.in_use_total - scratch.in_use.size()) + " more that running builds own\n";
  for (const auto& tree : scratch.unowned)
    out += "left " + tree.string() +
           ": it has no owner lock (kept by --keep-failed, or made by an older orchestrate); remove it when no "
           "build uses it\n";
  if (scratch.unowned_total > scratch.unowned.size())
    out += "left " + std::to_string(scratch.unowned_total - scratch.unowned.size()) +
           " more build tree(s) without an owner lock\n";
  return out;
}

std::vector<std::string> path_list(const std::vector<std::filesystem::path>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(p.string());
  return out;
}

}  // namespace

void emit(Io& io, const app::CacheLsReport& report, Format format) {
  if (format == Format::json) {
    ordered_json list = ordered_json::array();
    for (const auto& e : report.sets) list.push_back(set_json(e));
    io.out << ordered_json{{"store", report.store.string()}, {"sets", std::move(list)}}.dump(2) << "\n";
  } else if (report.sets.empty()) {
    io.err << "no artifact sets in " << report.store.string() << "\n";
  } else {
    io.out << ls_table(report.sets);
  }
  io.exit_code = util::ExitCode::ok;
}

void emit(Io& io, const app::CacheVerifyReport& report, Format format) {
  io.err << report.progress;
  io.out << (format == Format::json ? verify_json(report) : verify_text(report));
  io.exit_code = report.exit_code;
}

void emit(Io& io, const app::CacheGcReport& report, Format format) {
  io.err << report.progress;
  const auto& r = report.collected;
  const cache::ScratchSweep& scratch = r.tmp.scratch;
  if (format == Format::json)
    io.out << ordered_json{{"removed_sets", hex_list(r.removed_sets)},
                           {"dropped_packs", hex_list(r.dropped_packs)},
                           {"removed_blobs", r.removed_blobs},
                           {"removed_bytes", r.removed_bytes},
                           {"removed_temporaries", r.tmp.removed_temps},
                           {"removed_build_trees", scratch.removed},
                           {"removed_build_tree_bytes", scratch.bytes},
                           {"build_trees_in_use", path_list(scratch.in_use)},
                           {"build_trees_in_use_total", scratch.in_use_total},
                           {"build_trees_unowned", path_list(scratch.unowned)},
                           {"build_trees_unowned_total", scratch.unowned_total},
                           {"index_untouched",
                            r.index_untouched.empty() ? ordered_json() : ordered_json(r.index_untouched)}}
                  .dump(2)
           << "\n";
  else
    io.out << gc_text(r);
  io.exit_code = report.exit_code;
  if (r.index_untouched.empty()) return;
  // --keep asked for rows to go, which needs the index written.
  if (report.exit_code == util::ExitCode::ok)
    io.err << "orchestrate: warning: the index was read, not written (no pack dropped): " << r.index_untouched << "\n";
  else
    io.err << "orchestrate: error: --keep needs the index written, and it could not be: " << r.index_untouched << "\n";
}

}  // namespace orc::cli
