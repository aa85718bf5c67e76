#include "orchestrator/cache/index.hpp"

#include <cctype>
#include <chrono>
#include <thread>

#include "orchestrator/cache/index_sql.hpp"

// The index's schema (see index.hpp), its migration from version 1, and
// opening a database file as the index; the queries are in index.cpp.
namespace orc::cache {

using namespace index_sql;

namespace {

constexpr int k_busy_timeout_ms = 30'000;

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

// The schema of an index opened read-only: this version's, or an error
// (schema 1 is upgraded only by a writer).
std::expected<void, Error> read_schema(sqlite3* db, const std::filesystem::path& file) {
  auto version = schema_version(db);
  if (!version) return std::unexpected(version.error());
  if (!*version) return std::unexpected(unusable_error(file, "holds no index"));
  if (**version == "1")
    return std::unexpected(invalid_error("the store's index " + file.string() +
                                         " has schema version 1, which its first write upgrades: run any "
                                         "orchestrate command on it once where its file system is writable"));
  if (**version != std::to_string(Index::k_schema_version))
    return std::unexpected(unusable_error(file, "has schema version " + **version + " (this orchestrate reads " +
                                                    std::to_string(Index::k_schema_version) +
                                                    "; the one that wrote it still can)"));
  return {};
}

// "file:" and the path with every byte a URI would read otherwise (?, #, %) escaped.
std::string file_uri(const std::filesystem::path& file) {
  static constexpr char k_hex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (const unsigned char c : file.string()) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += k_hex[c >> 4];
      uri += k_hex[c & 0xf];
    }
  }
  return uri;
}

}  // namespace

void Index::Closer::operator()(sqlite3* db) const { sqlite3_close_v2(db); }

Index::Index(sqlite3* db) : m_db(db) {}
Index::Index(Index&&) noexcept = default;
Index& Index::operator=(Index&&) noexcept = default;
Index::~Index() = default;

std::expected<Index, Error> Index::open(const std::filesystem::path& file, IfNoIndex if_none, IndexAccess access) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(file, ec);
  if (if_none == IfNoIndex::refuse && !std::filesystem::exists(status))
    return std::unexpected(unusable_error(file, "is missing"));
  // SQLite would open a directory and fail later with a vaguer message.
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    return std::unexpected(unusable_error(file, "is not a regular file"));
  if (access == IndexAccess::read_only) {
    if (!std::filesystem::exists(status)) return std::unexpected(unusable_error(file, "is missing"));
    auto opened = open_read_only(file, false);
    if (opened) return opened;
    // The file alone is the whole index only while no -wal holds pages.
    const auto wal_bytes = std::filesystem::file_size(file.string() + "-wal", ec);
    if (ec || wal_bytes == 0) return open_read_only(file, true);
    return std::unexpected(io_error("the store's index " + file.string() +
                                        " cannot be read without writing: its -wal holds changes that SQLite reads "
                                        "only through a -shm this file system cannot give (" +
                                        opened.error().message + ")",
                                    opened.error().os_error));
  }
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

std::expected<Index, Error> Index::open_read_only(const std::filesystem::path& file, bool immutable) {
  const std::string name = immutable ? file_uri(file) + "?immutable=1" : file.string();
  const int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | (immutable ? SQLITE_OPEN_URI : 0);
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
  Index index(raw);
  if (rc != SQLITE_OK) return std::unexpected(db_error(raw, "opening " + file.string() + " read-only"));
  sqlite3_busy_timeout(raw, k_busy_timeout_ms);
  if (auto ok = read_schema(raw, file); !ok) return std::unexpected(ok.error());
  return index;
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
