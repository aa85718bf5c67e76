#include "orchestrator/engine/image_spool.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <fstream>
#include <memory>

#include "orchestrator/tarsafe/archive_handle.hpp"
#include "orchestrator/digest/sha256.hpp"

namespace orc::engine {

namespace {

constexpr std::size_t k_chunk = 1 << 20;

Error failed(ErrorKind kind, std::string message) { return Error{.kind = kind, .message = std::move(message)}; }


}  // namespace

std::expected<std::vector<SpooledEntry>, Error> spool_image_archive(const ArchiveSource& in,
                                                                    const std::filesystem::path& dir,
                                                                    std::size_t max_entries) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return std::unexpected(failed(ErrorKind::io, "creating " + dir.string() + ": " + ec.message()));
  const tarsafe::ReadArchive reader = tarsafe::new_read_archive();
  struct archive* r = reader.get();
  archive_read_support_format_tar(r);
  archive_read_support_format_gnutar(r);
  tarsafe::ReadStream source(in, k_chunk);
  if (source.open(r) != ARCHIVE_OK)
    return std::unexpected(failed(ErrorKind::protocol, tarsafe::error_text(r, "not an image archive")));

  std::vector<SpooledEntry> out;
  std::vector<char> chunk(k_chunk);
  for (;;) {
    struct archive_entry* entry = nullptr;
    const int status = archive_read_next_header(r, &entry);
    if (status == ARCHIVE_EOF) break;
    if (status < ARCHIVE_WARN)
      return std::unexpected(failed(ErrorKind::protocol, tarsafe::error_text(r, "the image archive is damaged")));
    if (archive_entry_filetype(entry) != AE_IFREG || archive_entry_hardlink(entry)) continue;
    if (out.size() == max_entries)
      return std::unexpected(
          failed(ErrorKind::protocol, "the image archive holds more than " + std::to_string(max_entries) + " files"));
    SpooledEntry spooled{.name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "",
                         .path = dir / std::to_string(out.size())};
    std::ofstream file(spooled.path, std::ios::binary | std::ios::trunc);
    if (!file) return std::unexpected(failed(ErrorKind::io, "cannot write " + spooled.path.string()));
    digest::Sha256 hasher;
    la_ssize_t n = 0;
    while ((n = archive_read_data(r, chunk.data(), chunk.size())) > 0) {
      const auto bytes = std::as_bytes(std::span(chunk.data(), static_cast<std::size_t>(n)));
      hasher.update(bytes);
      file.write(chunk.data(), n);
      spooled.size += static_cast<std::uint64_t>(n);
    }
    if (n < 0) return std::unexpected(failed(ErrorKind::protocol, tarsafe::error_text(r, "reading " + spooled.name)));
    file.close();
    if (!file) return std::unexpected(failed(ErrorKind::io, "writing " + spooled.path.string() + " failed"));
    spooled.digest = hasher.digest();
    out.push_back(std::move(spooled));
  }
  return out;
}

}  // namespace orc::engine
