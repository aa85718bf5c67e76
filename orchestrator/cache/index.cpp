#include "orchestrator/cache/index.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "orchestrator/util/strings.hpp"

namespace orc::cache {

namespace {

constexpr int k_busy_timeout_ms = 30'000;
// Fewer hex digits than this match too much to be meant as one digest.
constexpr std::size_t k_min_prefix = 4;

constexpr const char* k_schema = R"(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS artifact_sets(
  id INTEGER PRIMARY KEY,
  manifest TEXT NOT NULL UNIQUE,
  recipe TEXT NOT NULL, tier TEXT NOT NULL, key TEXT NOT NULL,
  toolkit TEXT NOT NULL, cudnn TEXT NOT NULL, sass TEXT NOT NULL, ptx TEXT NOT NULL,
  source_revision TEXT NOT NULL, signer TEXT NOT NULL,
  verified INTEGER NOT NULL, created INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS set_blobs(
  set_id INTEGER NOT NULL REFERENCES artifact_sets(id) ON DELETE CASCADE,
  role TEXT NOT NULL, path TEXT NOT NULL, digest TEXT NOT NULL, size INTEGER NOT NULL,
  mode INTEGER NOT NULL DEFAULT 420);
CREATE INDEX IF NOT EXISTS sets_by_recipe_tier ON artifact_sets(recipe, tier, created);
CREATE INDEX IF NOT EXISTS sets_by_key ON artifact_sets(key);
CREATE INDEX IF NOT EXISTS blobs_by_set ON set_blobs(set_id);
CREATE INDEX IF NOT EXISTS blobs_by_digest ON set_blobs(digest);
)";

constexpr const char* k_packed_layers =
    "CREATE TABLE IF NOT EXISTS packed_layers(key TEXT PRIMARY KEY, digest TEXT NOT NULL, size INTEGER NOT NULL)";

// A file that is not a database, is damaged, or cannot be opened as one is
// the store's own state, not an outside failure: invalid, with what to do.
bool unusable(int code) {
  const int primary = code & 0xff;
  return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT || primary == SQLITE_CANTOPEN;
}

Error unusable_error(const std::filesystem::path& file, std::string_view why) {
  return invalid_error("the store's index " + file.string() + " " + std::string(why) + "; " + k_rebuild_hint);
}

Error db_error(sqlite3* db, std::string_view what) {
  const std::string message = "index: " + std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory");
  if (db && unusable(sqlite3_extended_errcode(db)))
    return invalid_error(message + " (the index is damaged or not a database; " + k_rebuild_hint + ")");
  return io_error(message);
}

// One prepared statement; binds by position, 1-based.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr) != SQLITE_OK) m_stmt = nullptr;
  }
  ~Statement() { sqlite3_finalize(m_stmt); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return m_stmt != nullptr; }
  Statement& bind(int i, std::string_view text) {
    sqlite3_bind_text(m_stmt, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, std::int64_t value) {
    sqlite3_bind_int64(m_stmt, i, value);
    return *this;
  }
  // SQLITE_ROW or SQLITE_DONE; anything else is an error.
  int step() { return sqlite3_step(m_stmt); }
  std::string text(int column) const {
    const auto* p = sqlite3_column_text(m_stmt, column);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, column)))
             : std::string();
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(m_stmt, column); }

 private:
  sqlite3_stmt* m_stmt = nullptr;
};

std::expected<void, Error> exec(sqlite3* db, const char* sql, std::string_view what) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return std::unexpected(db_error(db, what));
  return {};
}

// Rolls back unless committed, so an early return never leaves a transaction open.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : m_db(db) {}
  ~Transaction() {
    if (m_open) sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  std::expected<void, Error> begin() {
    // IMMEDIATE takes the write lock now, so the busy timeout applies here
    // rather than failing at the first write inside the transaction.
    auto ok = exec(m_db, "BEGIN IMMEDIATE", "starting a transaction");
    m_open = ok.has_value();
    return ok;
  }
  std::expected<void, Error> commit() {
    auto ok = exec(m_db, "COMMIT", "committing");
    if (ok) m_open = false;
    return ok;
  }

 private:
  sqlite3* m_db;
  bool m_open = false;
};

std::string join_words(const std::vector<std::string>& words) { return util::join(words, " "); }

constexpr const char* k_select_sets =
    "SELECT id, manifest, recipe, tier, key, toolkit, cudnn, sass, ptx, source_revision, signer, verified, created "
    "FROM artifact_sets";

IndexEntry entry_from_row(const Statement& s) {
  return IndexEntry{.id = s.integer(0),
                    .manifest = s.text(1),
                    .recipe = s.text(2),
                    .tier = s.text(3),
                    .key = s.text(4),
                    .toolkit = s.text(5),
                    .cudnn = s.text(6),
                    .sass = util::split_any(s.text(7), " "),
                    .ptx = util::split_any(s.text(8), " "),
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
      const std::string digest = q.text(2);
      if (role == "file")
        e.files.push_back({.path = q.text(1),
                           .sha256 = digest,
                           .size = static_cast<std::uint64_t>(q.integer(3)),
                           .mode = static_cast<unsigned>(q.integer(4)) & 0777u});
      else if (role == "log")
        e.build_log = digest;
      else if (role == "signature")
        e.signature = digest;
      else if (role == "pack")
        e.pack = digest;
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
  while ((rc = s.step()) == SQLITE_ROW) out.push_back(entry_from_row(s));
  if (rc != SQLITE_DONE) return std::unexpected(db_error(db, "querying"));
  if (auto ok = load_blobs(db, out); !ok) return std::unexpected(ok.error());
  return out;
}

// The schema_version in meta; nullopt when the database has no meta table
// (a file SQLite made just now, or an empty one).
std::expected<std::optional<std::string>, Error> schema_version(sqlite3* db) {
  Statement has_meta(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
  if (!has_meta.ok()) return std::unexpected(db_error(db, "reading the schema"));
  const int rc = has_meta.step();
  if (rc == SQLITE_DONE) return std::nullopt;
  if (rc != SQLITE_ROW) return std::unexpected(db_error(db, "reading the schema"));
  Statement get(db, "SELECT value FROM meta WHERE key = 'schema_version'");
  if (!get.ok()) return std::unexpected(db_error(db, "reading the schema version"));
  if (get.step() != SQLITE_ROW) return std::string("(none)");
  return get.text(0);
}

std::expected<void, Error> create_schema(sqlite3* db) {
  if (auto ok = exec(db, k_schema, "creating the schema"); !ok) return ok;
  Statement put(db, "INSERT INTO meta(key, value) VALUES('schema_version', ?)");
  put.bind(1, std::to_string(Index::k_schema_version));
  if (put.step() != SQLITE_DONE) return std::unexpected(db_error(db, "writing the schema version"));
  return {};
}

std::expected<void, Error> check_schema(sqlite3* db, const std::filesystem::path& file, IfNoIndex if_none) {
  Transaction t(db);
  if (auto ok = t.begin(); !ok) return ok;
  auto version = schema_version(db);
  if (!version) return std::unexpected(version.error());
  if (!*version && if_none == IfNoIndex::refuse) return std::unexpected(unusable_error(file, "holds no index"));
  if (!*version) {
    if (auto ok = create_schema(db); !ok) return ok;
  } else if (**version == "1") {
    // Schema 1 had no modes: its rows read as 0644, as they were served.
    if (auto ok = exec(db,
                       "ALTER TABLE set_blobs ADD COLUMN mode INTEGER NOT NULL DEFAULT 420; "
                       "UPDATE meta SET value = '2' WHERE key = 'schema_version'",
                       "upgrading the schema to version 2");
        !ok)
      return ok;
  } else if (**version != std::to_string(Index::k_schema_version)) {
    return std::unexpected(unusable_error(file, "has schema version " + **version + " (this orchestrate reads " +
                                                    std::to_string(Index::k_schema_version) +
                                                    "; the one that wrote it still can)"));
  }
  if (auto ok = exec(db, k_packed_layers, "creating packed_layers"); !ok) return ok;
  return t.commit();
}

}  // namespace

void Index::Closer::operator()(sqlite3* db) const { sqlite3_close_v2(db); }

Index::Index(sqlite3* db) : m_db(db) {}
Index::Index(Index&&) noexcept = default;
Index& Index::operator=(Index&&) noexcept = default;
Index::~Index() = default;

std::expected<Index, Error> Index::open(const std::filesystem::path& file, IfNoIndex if_none) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(file, ec);
  if (if_none == IfNoIndex::refuse && !std::filesystem::exists(status))
    return std::unexpected(unusable_error(file, "is missing"));
  // SQLite would open a directory and fail later with a vaguer message.
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    return std::unexpected(unusable_error(file, "is not a regular file"));
  const int flags =
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (if_none == IfNoIndex::create ? SQLITE_OPEN_CREATE : 0);
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(file.c_str(), &raw, flags, nullptr);
  Index index(raw);
  if (rc != SQLITE_OK) return std::unexpected(db_error(raw, "opening " + file.string()));
  sqlite3_busy_timeout(raw, k_busy_timeout_ms);
  // WAL: readers never block the writer; FULL: a committed row survives a crash.
  // Switching a new file to WAL takes an exclusive lock without waiting
  // through the busy handler, so processes opening a fresh store at once
  // (concurrent fetches) retry here for as long as the busy timeout.
  for (int waited_ms = 0;; waited_ms += 50) {
    auto ok = exec(raw, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON",
                   "configuring " + file.string());
    if (ok) break;
    if ((sqlite3_errcode(raw) != SQLITE_BUSY && sqlite3_errcode(raw) != SQLITE_LOCKED) ||
        waited_ms >= k_busy_timeout_ms)
      return std::unexpected(ok.error());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (auto ok = check_schema(raw, file, if_none); !ok) return std::unexpected(ok.error());
  return index;
}

std::expected<std::int64_t, Error> Index::add(const IndexEntry& e) {
  sqlite3* db = m_db.get();
  Transaction t(db);
  if (auto ok = t.begin(); !ok) return std::unexpected(ok.error());
  Statement drop(db, "DELETE FROM artifact_sets WHERE manifest = ?");
  drop.bind(1, e.manifest);
  if (drop.step() != SQLITE_DONE) return std::unexpected(db_error(db, "replacing " + e.manifest));
  Statement insert(db,
                   "INSERT INTO artifact_sets(manifest, recipe, tier, key, toolkit, cudnn, sass, ptx, source_revision, "
                   "signer, verified, created) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
  insert.bind(1, e.manifest).bind(2, e.recipe).bind(3, e.tier).bind(4, e.key).bind(5, e.toolkit).bind(6, e.cudnn);
  insert.bind(7, join_words(e.sass)).bind(8, join_words(e.ptx)).bind(9, e.source_revision).bind(10, e.signer);
  insert.bind(11, std::int64_t{e.verified}).bind(12, e.created);
  if (insert.step() != SQLITE_DONE) return std::unexpected(db_error(db, "adding " + e.manifest));
  const std::int64_t id = sqlite3_last_insert_rowid(db);
  const auto put_blob = [&](std::string_view role, std::string_view path, std::string_view digest, std::uint64_t size,
                            unsigned mode = 0644) -> bool {
    if (digest.empty()) return true;
    Statement b(db, "INSERT INTO set_blobs(set_id, role, path, digest, size, mode) VALUES(?,?,?,?,?,?)");
    b.bind(1, id).bind(2, role).bind(3, path).bind(4, digest).bind(5, static_cast<std::int64_t>(size));
    b.bind(6, static_cast<std::int64_t>(mode & 0777u));
    return b.step() == SQLITE_DONE;
  };
  bool ok = put_blob("manifest", "", e.manifest, 0) && put_blob("log", "", e.build_log, 0) &&
            put_blob("signature", "", e.signature, 0) && put_blob("pack", "", e.pack, 0);
  for (const auto& f : e.files) ok = ok && put_blob("file", f.path, f.sha256, f.size, f.mode);
  if (!ok) return std::unexpected(db_error(db, "adding the blobs of " + e.manifest));
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

std::expected<IndexEntry, Error> Index::resolve(std::string_view prefix) const {
  std::string hex = util::to_lower(prefix.starts_with("sha256:") ? prefix.substr(7) : prefix);
  if (hex.size() < k_min_prefix || hex.size() > 64 || hex.find_first_not_of("0123456789abcdef") != std::string::npos)
    return std::unexpected(invalid_error("'" + std::string(prefix) + "' is not a sha256 digest or a prefix of one (" +
                                         std::to_string(k_min_prefix) + " to 64 hex digits)"));
  auto rows = select_sets(m_db.get(), " WHERE substr(manifest, 1, " + std::to_string(hex.size()) + ") = ?", {hex});
  if (!rows) return std::unexpected(rows.error());
  if (rows->empty())
    return std::unexpected(Error{ErrorKind::not_found, "no artifact set sha256:" + hex + "... in the store"});
  if (rows->size() > 1) {
    std::vector<std::string> names;
    for (const auto& r : *rows)
      names.push_back("sha256:" + r.manifest.substr(0, 16) + " (" + r.recipe + ", " + r.tier + ")");
    return std::unexpected(Error{ErrorKind::ambiguous, "digest prefix sha256:" + hex + " is ambiguous: it matches " +
                                                           util::join(names, ", ") + "; give more digits"});
  }
  return std::move(rows->front());
}

std::expected<bool, Error> Index::remove(std::string_view manifest) {
  Statement s(m_db.get(), "DELETE FROM artifact_sets WHERE manifest = ?");
  s.bind(1, manifest);
  if (s.step() != SQLITE_DONE) return std::unexpected(db_error(m_db.get(), "removing " + std::string(manifest)));
  return sqlite3_changes(m_db.get()) > 0;
}

std::expected<void, Error> Index::drop_pack(std::string_view manifest) {
  Statement s(
      m_db.get(),
      "DELETE FROM set_blobs WHERE role = 'pack' AND set_id = (SELECT id FROM artifact_sets WHERE manifest = ?)");
  s.bind(1, manifest);
  if (s.step() != SQLITE_DONE)
    return std::unexpected(db_error(m_db.get(), "dropping the pack of " + std::string(manifest)));
  return {};
}

std::expected<std::vector<std::string>, Error> Index::remove_referencing(std::string_view hex) {
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
  for (const auto& m : manifests) {
    Statement drop(db, "DELETE FROM artifact_sets WHERE manifest = ?");
    drop.bind(1, m);
    if (drop.step() != SQLITE_DONE) return std::unexpected(db_error(db, "removing " + m));
  }
  if (auto ok = t.commit(); !ok) return std::unexpected(ok.error());
  return manifests;
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
  return PackedLayer{.digest = s.text(0), .size = static_cast<std::uint64_t>(s.integer(1))};
}

std::expected<void, Error> Index::remember_packed_layer(std::string_view key, const PackedLayer& layer) {
  Statement s(m_db.get(), "INSERT OR REPLACE INTO packed_layers(key, digest, size) VALUES(?,?,?)");
  s.bind(1, key).bind(2, layer.digest).bind(3, static_cast<std::int64_t>(layer.size));
  if (s.step() != SQLITE_DONE) return std::unexpected(db_error(m_db.get(), "writing packed_layers"));
  return {};
}

std::expected<void, Error> Index::check() const {
  Statement s(m_db.get(), "PRAGMA quick_check");
  if (!s.ok()) return std::unexpected(db_error(m_db.get(), "checking"));
  std::vector<std::string> problems;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW)
    if (const std::string line = s.text(0); line != "ok") problems.push_back(line);
  if (rc != SQLITE_DONE) return std::unexpected(db_error(m_db.get(), "checking"));
  if (problems.empty()) return {};
  // The first line may only name the database ("*** in database main ***").
  const std::string& first = problems.size() > 1 && problems.front().starts_with("***") ? problems[1] : problems[0];
  return std::unexpected(invalid_error("index: damaged: " + first + " (" + std::to_string(problems.size()) +
                                       " line(s) from SQLite's check); " + k_rebuild_hint));
}

}  // namespace orc::cache
