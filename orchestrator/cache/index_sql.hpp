#pragma once
// What index.cpp (the queries) and index_schema.cpp (the schema, its
// migration and opening) share: SQLite's error mapping, one prepared
// statement, a transaction. Private to those two files: sqlite3.h goes no
// further.
#include <sqlite3.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <expected>
#include <filesystem>
#include <string>
#include <string_view>

#include "orchestrator/cache/error.hpp"

namespace orc::cache::index_sql {

// A file that is not a database, is damaged, or cannot be opened as one is
// the store's own state, not an outside failure: invalid, with what to do.
inline bool unusable(int code) {
  const int primary = code & 0xff;
  return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT || primary == SQLITE_CANTOPEN;
}

inline Error unusable_error(const std::filesystem::path& file, std::string_view why) {
  return invalid_error("the store's index " + file.string() + " " + std::string(why) + "; " + k_rebuild_hint);
}

// The errno behind SQLite's last error, when the file system caused it:
// SQLITE_FULL is a full disk whatever errno says; a -shm SQLite could not
// extend is an I/O error whose errno says ENOSPC.
inline int os_error_of(sqlite3* db) {
  const int primary = sqlite3_extended_errcode(db) & 0xff;
  if (primary == SQLITE_FULL) return ENOSPC;
  if (primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN || primary == SQLITE_READONLY)
    return sqlite3_system_errno(db);
  return 0;
}

inline Error db_error(sqlite3* db, std::string_view what) {
  if (!db) return io_error("index: " + std::string(what) + ": out of memory");
  std::string message = "index: " + std::string(what) + ": " + sqlite3_errmsg(db);
  const int os_error = os_error_of(db);
  // "disk I/O error" alone does not say the disk is full; and a -shm that a
  // read-only file system cannot hold is no damaged index.
  const bool refused = is_full_errno(os_error) || os_error == EROFS;
  if (refused) message += std::string(" (") + std::strerror(os_error) + ")";
  if (!refused && unusable(sqlite3_extended_errcode(db)))
    return invalid_error(message + " (the index is damaged or not a database; " + k_rebuild_hint + ")");
  return io_error(std::move(message), os_error);
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

inline std::expected<void, Error> exec(sqlite3* db, const char* sql, std::string_view what) {
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

}  // namespace orc::cache::index_sql
