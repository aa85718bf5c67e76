// How the store words a file system that refuses it: full (the one command
// that frees space is named, and works there: cache gc) or read-only (what
// still works, and what to do to write). Every other error is left as it is.
#include <sys/statvfs.h>

#include "orchestrator/cache/store.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::cache {

namespace {

constexpr std::string_view k_full = "the store's file system is full: ";
constexpr std::string_view k_read_only = "the store is on a read-only file system: ";

}  // namespace

std::string free_space_of(const std::filesystem::path& root) {
  struct statvfs st {};
  if (::statvfs(root.c_str(), &st) != 0) return root.string();
  const auto unit = static_cast<std::uint64_t>(st.f_frsize);
  return root.string() + " has " + util::human_size(static_cast<std::uint64_t>(st.f_bavail) * unit) + " free of " +
         util::human_size(static_cast<std::uint64_t>(st.f_blocks) * unit);
}

Error explain_store_error(const std::filesystem::path& root, Error error) {
  // Worded once: a store's own errors come back through callers that explain too.
  if (error.message.find(k_full) != std::string::npos || error.message.find(k_read_only) != std::string::npos)
    return error;
  if (is_full(error)) {
    error.message = std::string(k_full) + error.message + "; " + free_space_of(root) +
                    ": run 'orchestrate cache gc' (it works on a full disk) or free space there";
  } else if (is_read_only(error)) {
    error.message = std::string(k_read_only) + error.message + "; " + root.string() +
                    " can be read (cache ls, cache verify, fetch of a stored set, inspect of its files); to write "
                    "it, remount it read-write, or point ORCHESTRATE_CACHE_DIR at a writable store";
  }
  return error;
}

Error Store::explain(Error error) const { return explain_store_error(m_root, std::move(error)); }

std::optional<Error> Store::refuse_write(std::string_view what) const {
  if (!m_read_only) return std::nullopt;
  return Error{ErrorKind::io, "cannot " + std::string(what) + ": " + m_read_only->message, m_read_only->os_error};
}

}  // namespace orc::cache
