#include "orchestrator/cache/index.hpp"

#include <algorithm>
#include <map>

#include "orchestrator/cache/index_sql.hpp"
#include "orchestrator/util/strings.hpp"

// The index's queries; its schema and opening are in index_schema.cpp.
namespace orc::cache {

using namespace index_sql;

namespace {

constexpr const char* k_select_sets =
    "SELECT id, manifest, recipe, tier, key, toolkit, cudnn, sass, ptx, source_revision, signer, verified, created "
    "FROM artifact_sets";

// A digest column, parsed once where it leaves the database: one that is not
// 64 hex digits is a damaged index, never a set to act on.
std::expected<digest::Digest, Error> digest_column(std::int64_t set_id, std::string_view column,
                                                   const std::string& text) {
  auto parsed = digest::Digest::from_hex(text);
  if (!parsed)
    return std::unexpected(invalid_error("index: set " + std::to_string(set_id) + ": " + std::string(column) + ": " +
                                         parsed.error() + " (the index is damaged; " + k_rebuild_hint + ")"));
  return *parsed;
}

std::expected<IndexEntry, Error> entry_from_row(const Statement& s) {
  auto manifest = digest_column(s.integer(0), "manifest", s.text(1));
  if (!manifest) return std::unexpected(manifest.error());
  return IndexEntry{.id = s.integer(0),
                    .manifest = *manifest,
                    .recipe = s.text(2),
                    .tier = s.text(3),
                    .key = s.text(4),
                    .toolkit = s.text(5),
                    .cudnn = s.text(6),
                    .sass = arch::ArchList(util::split_any(s.text(7), " ")),
                    .ptx = arch::ArchList(util::split_any(s.text(8), " ")),
                    .source_revision = s.text(9),
                    .signer = s.text(10),
                    .verified = s.integer(11) != 0,
                    .created = s.integer(12)};
}

// Fills files and the other blob roles of `entries` from set_blobs.
std::expected<void, Error> load_blobs(sqlite3* db, std::vector<IndexEntry>& entries) {
  for (auto& e : entries) {
    Statement q(db, "SELECT role, path, digest, size, mode FROM set_blobs WHERE set_id = ? ORDER BY rowid");
    q.bind(1, e.id);
    int rc;
    while ((rc = q.step()) == SQLITE_ROW) {
      const std::string role = q.text(0);
      const std::string text = q.text(2);
      auto digest = digest_column(e.id, role + " digest", text);
      if (!digest) return std::unexpected(digest.error());
      if (role == "file")
        e.files.push_back({.path = q.text(1),
                           .sha256 = text,
                           .size = static_cast<std::uint64_t>(q.integer(3)),
                           .mode = static_cast<unsigned>(q.integer(4)) & 0777u});
      else if (role == "log")
        e.build_log = *digest;
      else if (role == "signature")
        e.signature = *digest;
      else if (role == "pack")
        e.pack = *digest;
    }
    if (rc != SQLITE_DONE) return std::unexpected(db_error(db, "reading blobs"));
  }
  return {};
}

std::expected<std::vector<IndexEntry>, Error> select_sets(sqlite3* db, const std::string& where,
                                                          const std::vector<std::string>& args) {
  const std::string sql = std::string(k_select_sets) + where + " ORDER BY created DESC, id DESC";
  Statement s(db, sql.c_str());
  if (!s.ok()) return std::unexpected(db_error(db, "querying"));
  for (std::size_t i = 0; i < args.size(); ++i) s.bind(static_cast<int>(i + 1), args[i]);
  std::vector<IndexEntry> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    auto entry = entry_from_row(s);
    if (!entry) return std::unexpected(entry.error());
    out.push_back(std::move(*entry));
  }
  if (rc != SQLITE_DONE) return std::unexpected(db_error(db, "querying"));
  if (auto ok = load_blobs(db, out); !ok) return std::unexpected(ok.error());
  return out;
}
}  // namespace

std::expected<std::int64_t, Error> Index::add(const IndexEntry& e) {
  sqlite3* db = m_db.get();
  Transaction t(db);
  if (auto ok = t.begin(); !ok) return std::unexpected(ok.error());
  Statement drop(db, "DELETE FROM artifact_sets WHERE manifest = ?");
  const std::string manifest = e.manifest.hex();
  drop.bind(1, manifest);
  if (drop.step() != SQLITE_DONE) return std::unexpected(db_error(db, "replacing " + manifest));
  Statement insert(db,
                   "INSERT INTO artifact_sets(manifest, recipe, tier, key, toolkit, cudnn, sass, ptx, source_revision, "
                   "signer, verified, created) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
  insert.bind(1, manifest).bind(2, e.recipe).bind(3, e.tier).bind(4, e.key).bind(5, e.toolkit).bind(6, e.cudnn);
  insert.bind(7, e.sass.joined(" ", "")).bind(8, e.ptx.joined(" ", "")).bind(9, e.source_revision).bind(10, e.signer);
  insert.bind(11, std::int64_t{e.verified}).bind(12, e.created);
  if (insert.step() != SQLITE_DONE) return std::unexpected(db_error(db, "adding " + manifest));
  const std::int64_t id = sqlite3_last_insert_rowid(db);
  const auto put_blob = [&](std::string_view role, std::string_view path, std::string_view digest, std::uint64_t size,
                            unsigned mode = 0644) -> bool {
    if (digest.empty()) return true;
    Statement b(db, "INSERT INTO set_blobs(set_id, role, path, digest, size, mode) VALUES(?,?,?,?,?,?)");
    b.bind(1, id).bind(2, role).bind(3, path).bind(4, digest).bind(5, static_cast<std::int64_t>(size));
    b.bind(6, static_cast<std::int64_t>(mode & 0777u));
    return b.step() == SQLITE_DONE;
  };
  const auto hex = [](const std::optional<digest::Digest>& d) { return d ? d->hex() : std::string(); };
  bool ok = put_blob("manifest", "", manifest, 0) && put_blob("log", "", hex(e.build_log), 0) &&
            put_blob("signature", "", hex(e.signature), 0) && put_blob("pack", "", hex(e.pack), 0);
  for (const auto& f : e.files) ok = ok && put_blob("file", f.path, f.sha256, f.size, f.mode);
  if (!ok) return std::unexpected(db_error(db, "adding the blobs of " + manifest));
  if (auto done = t.commit(); !done) return std::unexpected(done.error());
  return id;
}

std::expected<std::vector<IndexEntry>, Error> Index::list(const IndexQuery& q) const {
  std::vector<std::string> clauses, args;
  for (const auto& [column, value] : {std::pair{"recipe", &q.recipe}, {"tier", &q.tier}, {"key", &q.key}}) {
    if (value->empty()) continue;
    clauses.push_back(std::string(column) + " = ?");
    args.push_back(*value);
  }
  if (q.verified_only) clauses.emplace_back("verified = 1");
  return select_sets(m_db.get(), clauses.empty() ? "" : " WHERE " + util::join(clauses, " AND "), args);
}

std::expected<std::optional<IndexEntry>, Error> Index::newest_verified(std::string_view recipe,
                                                                       std::string_view tier) const {
  auto rows = list({.recipe = std::string(recipe), .tier = std::string(tier), .verified_only = true});
  if (!rows) return std::unexpected(rows.error());
  if (rows->empty()) return std::nullopt;
  return std::move(rows->front());
}

std::expected<IndexEntry, Error> Index::resolve(const digest::DigestPrefix& prefix) const {
  const std::string& hex = prefix.hex();
  auto rows = select_sets(m_db.get(), " WHERE substr(manifest, 1, " + std::to_string(hex.size()) + ") = ?", {hex});
  if (!rows) return std::unexpected(rows.error());
  if (rows->empty())
    return std::unexpected(Error{ErrorKind::not_found, "no artifact set " + prefix.to_string() + "... in the store"});
  if (rows->size() > 1) {
    std::vector<std::string> names;
    for (const auto& r : *rows) names.push_back(r.manifest.short_string(16) + " (" + r.recipe + ", " + r.tier + ")");
    return std::unexpected(Error{ErrorKind::ambiguous, "digest prefix " + prefix.to_string() +
                                                           " is ambiguous: it matches " + util::join(names, ", ") +
                                                           "; give more digits"});
  }
  return std::move(rows->front());
}

std::expected<bool, Error> Index::remove(const digest::Digest& manifest) {
  Statement s(m_db.get(), "DELETE FROM artifact_sets WHERE manifest = ?");
  s.bind(1, manifest.hex());
  if (s.step() != SQLITE_DONE) return std::unexpected(db_error(m_db.get(), "removing " + manifest.hex()));
  return sqlite3_changes(m_db.get()) > 0;
}

std::expected<void, Error> Index::drop_pack(const digest::Digest& manifest) {
  Statement s(
      m_db.get(),
      "DELETE FROM set_blobs WHERE role = 'pack' AND set_id = (SELECT id FROM artifact_sets WHERE manifest = ?)");
  s.bind(1, manifest.hex());
  if (s.step() != SQLITE_DONE) return std::unexpected(db_error(m_db.get(), "dropping the pack of " + manifest.hex()));
  return {};
}

std::expected<std::vector<digest::Digest>, Error> Index::remove_referencing(std::string_view hex) {
  sqlite3* db = m_db.get();
  Transaction t(db);
  if (auto ok = t.begin(); !ok) return std::unexpected(ok.error());
  Statement find(
      db, "SELECT DISTINCT s.manifest FROM artifact_sets s JOIN set_blobs b ON b.set_id = s.id WHERE b.digest = ?");
  find.bind(1, hex);
  std::vector<std::string> manifests;
  int rc;
  while ((rc = find.step()) == SQLITE_ROW) manifests.push_back(find.text(0));
  if (rc != SQLITE_DONE) return std::unexpected(db_error(db, "finding the sets of " + std::string(hex)));
  std::vector<digest::Digest> removed;
  for (const auto& m : manifests) {
    auto parsed = digest_column(0, "manifest", m);
    if (!parsed) return std::unexpected(parsed.error());
    Statement drop(db, "DELETE FROM artifact_sets WHERE manifest = ?");
    drop.bind(1, m);
    if (drop.step() != SQLITE_DONE) return std::unexpected(db_error(db, "removing " + m));
    removed.push_back(*parsed);
  }
  if (auto ok = t.commit(); !ok) return std::unexpected(ok.error());
  return removed;
}

std::expected<std::set<std::string>, Error> Index::referenced_blobs() const {
  Statement s(m_db.get(), "SELECT DISTINCT digest FROM set_blobs");
  std::set<std::string> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) out.insert(s.text(0));
  if (rc != SQLITE_DONE) return std::unexpected(db_error(m_db.get(), "listing referenced blobs"));
  return out;
}

std::expected<std::optional<PackedLayer>, Error> Index::packed_layer(std::string_view key) const {
  Statement s(m_db.get(), "SELECT digest, size FROM packed_layers WHERE key = ?");
  s.bind(1, key);
  const int rc = s.step();
  if (rc == SQLITE_DONE) return std::nullopt;
  if (rc != SQLITE_ROW) return std::unexpected(db_error(m_db.get(), "reading packed_layers"));
  // A cache of what packing made: a damaged row is a pack to make again.
  const auto digest = digest::Digest::from_hex(s.text(0));
  if (!digest) return std::nullopt;
  return PackedLayer{.digest = *digest, .size = static_cast<std::uint64_t>(s.integer(1))};
}

std::expected<void, Error> Index::remember_packed_layer(std::string_view key, const PackedLayer& layer) {
  Statement s(m_db.get(), "INSERT OR REPLACE INTO packed_layers(key, digest, size) VALUES(?,?,?)");
  s.bind(1, key).bind(2, layer.digest.hex()).bind(3, static_cast<std::int64_t>(layer.size));
  if (s.step() != SQLITE_DONE) return std::unexpected(db_error(m_db.get(), "writing packed_layers"));
  return {};
}

}  // namespace orc::cache
