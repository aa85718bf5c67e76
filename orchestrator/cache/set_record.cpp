#include "orchestrator/cache/set_record.hpp"

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/util/fs.hpp"

namespace orc::cache {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_manifest = "manifest.json";
constexpr std::string_view k_signature = "signature.json";

Error fs_error(const util::FsError& e) {
  return e.kind == util::FsErrorKind::exists ? invalid_error(e.message) : io_error(e.message, e.error_number);
}

}  // namespace

std::expected<void, Error> write_set_record(const fs::path& dir, std::string_view manifest_bytes,
                                            const std::optional<std::string>& signature) {
  const fs::path record = dir / k_set_record_dir;
  std::error_code ec;
  // A set that holds a file of the record's name keeps it: the record is not written.
  for (const auto& name : {k_manifest, k_signature})
    if (fs::exists(fs::symlink_status(record / name, ec)))
      return std::unexpected(invalid_error((record / name).string() + " is a file of the set itself"));
  if (auto ok = util::write_file_atomic(record / k_manifest, manifest_bytes); !ok)
    return std::unexpected(fs_error(ok.error()));
  if (signature)
    if (auto ok = util::write_file_atomic(record / k_signature, *signature); !ok)
      return std::unexpected(fs_error(ok.error()));
  return {};
}

std::expected<std::optional<SetRecord>, Error> read_set_record(const fs::path& dir, const TrustedKeys& trusted) {
  const fs::path record = dir / k_set_record_dir;
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(record / k_manifest, ec))) return std::nullopt;
  auto bytes = util::read_file(record / k_manifest, k_max_manifest_bytes);
  if (!bytes) return std::unexpected(fs_error(bytes.error()));
  auto manifest = parse_manifest(*bytes);
  if (!manifest)
    return std::unexpected(invalid_error((record / k_manifest).string() + ": " + manifest.error().message));
  std::optional<std::string> signature;
  if (fs::exists(fs::symlink_status(record / k_signature, ec))) {
    auto text = util::read_file(record / k_signature);
    if (!text) return std::unexpected(fs_error(text.error()));
    signature = std::move(*text);
  }
  return SetRecord{.manifest = std::move(*manifest),
                   .digest = digest::sha256(std::string_view(*bytes)),
                   .signature = verify_manifest(*bytes, signature, trusted)};
}

}  // namespace orc::cache
