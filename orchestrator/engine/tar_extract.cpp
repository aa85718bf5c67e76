// Safe extraction of untrusted tars (the rules are tarsafe's): a first pass
// reads every header and checks the rules, a second pass writes.
#include <archive.h>
#include <archive_entry.h>

#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "orchestrator/engine/archive.hpp"
#include "orchestrator/tarsafe/archive_handle.hpp"
#include "orchestrator/tarsafe/archive_entry.hpp"

namespace orc::engine {

namespace {

namespace fs = std::filesystem;

using tarsafe::ReadArchive;
using tarsafe::WriteArchive;

// One checked entry: what the rules made of it, for the writing pass.
struct Entry {
  tarsafe::Accepted accepted;
  tarsafe::Kind kind;
};

Error unsafe(const tarsafe::Refusal& refusal) {
  return Error{.kind = ErrorKind::unsafe_archive,
               .message = "refusing archive: entry '" + refusal.entry + "' " + refusal.reason};
}

Error corrupt(archive* a, const fs::path& tar) {
  const char* why = archive_error_string(a);
  return Error{.kind = ErrorKind::protocol,
               .message = "reading tar " + tar.string() + ": " + (why ? why : "not a tar archive")};
}

ReadArchive open_tar(const fs::path& tar) {
  ReadArchive a = tarsafe::new_read_archive();
  archive_read_support_format_tar(a.get());
  // A failed open shows up as an error from the first read_next_header.
  archive_read_open_filename(a.get(), tar.c_str(), 64 * 1024);
  return a;
}

// The first pass: every header through the rules, nothing written.
std::expected<std::vector<Entry>, Error> check_entries(const fs::path& tar) {
  ReadArchive a = open_tar(tar);
  tarsafe::Rules rules;
  std::vector<Entry> entries;
  archive_entry* e = nullptr;
  int rc;
  while ((rc = archive_read_next_header(a.get(), &e)) == ARCHIVE_OK) {
    const tarsafe::Entry entry = tarsafe::entry_of(e);
    auto accepted = rules.check(entry);
    if (!accepted) return std::unexpected(unsafe(accepted.error()));
    entries.push_back({std::move(*accepted), entry.kind});
    archive_read_data_skip(a.get());
  }
  if (rc != ARCHIVE_EOF) return std::unexpected(corrupt(a.get(), tar));
  if (auto whole = rules.finish(); !whole) return std::unexpected(unsafe(whole.error()));
  return entries;
}

void count(ExtractStats& stats, tarsafe::Kind kind) {
  switch (kind) {
    case tarsafe::Kind::hardlink:
      ++stats.hardlinks;
      break;
    case tarsafe::Kind::directory:
      ++stats.directories;
      break;
    case tarsafe::Kind::symlink:
      ++stats.symlinks;
      break;
    default:
      ++stats.files;
  }
}

}  // namespace

std::expected<ExtractStats, Error> extract_tar(const fs::path& tar, const fs::path& dest) {
  auto entries = check_entries(tar);
  if (!entries) return std::unexpected(entries.error());

  std::error_code ec;
  fs::create_directories(dest, ec);
  // libarchive's symlink check walks every component of the path it writes,
  // so the destination itself must be spelled without symlinks.
  const fs::path root = ec ? fs::path() : fs::canonical(dest, ec);
  if (ec) return std::unexpected(Error{.kind = ErrorKind::io, .message = dest.string() + ": " + ec.message()});

  ReadArchive in = open_tar(tar);
  WriteArchive out = tarsafe::new_disk_writer();
  archive_write_disk_set_options(out.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
                                                ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT);
  ExtractStats stats;
  archive_entry* e = nullptr;
  for (const Entry& entry : *entries) {
    if (archive_read_next_header(in.get(), &e) != ARCHIVE_OK) return std::unexpected(corrupt(in.get(), tar));
    const tarsafe::Accepted& accepted = entry.accepted;
    if (accepted.path.empty()) continue;  // the root entry: dest already exists
    const bool hardlink = entry.kind == tarsafe::Kind::hardlink;
    archive_entry_set_pathname(e, (root / accepted.path).c_str());
    if (hardlink) archive_entry_set_hardlink(e, (root / accepted.link).c_str());
    archive_entry_set_perm(e, accepted.perm);
    const auto write_error = [&] {
      const char* why = archive_error_string(out.get());
      return Error{.kind = ErrorKind::io, .message = "extracting '" + accepted.path + "': " + (why ? why : "failed")};
    };
    if (archive_write_header(out.get(), e) < ARCHIVE_WARN) return std::unexpected(write_error());
    if (entry.kind == tarsafe::Kind::file) {
      const void* block = nullptr;
      size_t size = 0;
      la_int64_t offset = 0;
      int rc;
      while ((rc = archive_read_data_block(in.get(), &block, &size, &offset)) == ARCHIVE_OK) {
        if (archive_write_data_block(out.get(), block, size, offset) < ARCHIVE_WARN)
          return std::unexpected(write_error());
        stats.bytes += size;
      }
      if (rc != ARCHIVE_EOF) return std::unexpected(corrupt(in.get(), tar));
    }
    if (archive_write_finish_entry(out.get()) < ARCHIVE_WARN) return std::unexpected(write_error());
    count(stats, entry.kind);
  }
  if (archive_write_close(out.get()) != ARCHIVE_OK) {
    const char* why = archive_error_string(out.get());
    return std::unexpected(Error{.kind = ErrorKind::io, .message = std::string("extracting: ") + (why ? why : "")});
  }
  return stats;
}

}  // namespace orc::engine
