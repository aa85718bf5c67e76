#include "orchestrator/engine/image_archive.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "orchestrator/tarsafe/archive_handle.hpp"
#include "orchestrator/digest/sha256.hpp"

namespace orc::engine {

namespace {

constexpr std::size_t k_chunk = 1 << 20;
constexpr la_int64_t k_max_json = 8 << 20;

la_ssize_t write_cb(struct archive* a, void* context, const void* buffer, size_t length) {
  const auto* sink = static_cast<const ArchiveSink*>(context);
  if (!(*sink)(std::string_view(static_cast<const char*>(buffer), length))) {
    archive_set_error(a, EIO, "the engine stopped reading the archive");
    return -1;
  }
  return static_cast<la_ssize_t>(length);
}

Error failed(ErrorKind kind, std::string message) { return Error{.kind = kind, .message = std::move(message)}; }


}  // namespace

std::expected<Rewritten, Error> rewrite_image_archive(const ArchiveSource& in, const ArchiveSink& out,
                                                      const ConfigEdit& edit, std::string_view tag) {
  const tarsafe::ReadArchive reader = tarsafe::new_read_archive();
  const tarsafe::WriteArchive writer = tarsafe::new_write_archive();
  struct archive* r = reader.get();
  struct archive* w = writer.get();
  archive_read_support_format_tar(r);
  archive_read_support_format_gnutar(r);
  tarsafe::ReadStream source(in, k_chunk);
  if (source.open(r) != ARCHIVE_OK)
    return std::unexpected(failed(ErrorKind::protocol, tarsafe::error_text(r, "not an image archive")));
  archive_write_set_format_pax_restricted(w);
  archive_write_set_bytes_in_last_block(w, 1);
  if (archive_write_open(w, const_cast<ArchiveSink*>(&out), nullptr, write_cb, nullptr) != ARCHIVE_OK)
    return std::unexpected(failed(ErrorKind::io, tarsafe::error_text(w, "cannot start the new archive")));

  const auto write_file = [&](const std::string& name, std::string_view data) -> std::expected<void, Error> {
    const tarsafe::ArchiveEntry e = tarsafe::new_archive_entry();
    archive_entry_set_pathname(e.get(), name.c_str());
    archive_entry_set_filetype(e.get(), AE_IFREG);
    archive_entry_set_perm(e.get(), 0644);
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(data.size()));
    if (archive_write_header(w, e.get()) != ARCHIVE_OK ||
        archive_write_data(w, data.data(), data.size()) != static_cast<la_ssize_t>(data.size()))
      return std::unexpected(failed(ErrorKind::io, tarsafe::error_text(w, "writing " + name)));
    return {};
  };

  std::map<std::string, std::string> held;  // small JSON entries, by name
  std::vector<std::string> held_order;
  std::vector<char> chunk(k_chunk);
  for (;;) {
    struct archive_entry* entry = nullptr;
    const int status = archive_read_next_header(r, &entry);
    if (status == ARCHIVE_EOF) break;
    if (status < ARCHIVE_WARN)
      return std::unexpected(failed(ErrorKind::protocol, tarsafe::error_text(r, "the image archive is damaged")));
    const std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    const bool regular = archive_entry_filetype(entry) == AE_IFREG && !archive_entry_hardlink(entry);
    la_ssize_t n = regular ? archive_read_data(r, chunk.data(), chunk.size()) : 0;
    if (n < 0) return std::unexpected(failed(ErrorKind::protocol, tarsafe::error_text(r, "reading " + name)));
    const la_int64_t size = archive_entry_size(entry);
    if (regular && size <= k_max_json && n > 0 && (chunk[0] == '{' || chunk[0] == '[')) {
      std::string data(chunk.data(), static_cast<std::size_t>(n));
      while ((n = archive_read_data(r, chunk.data(), chunk.size())) > 0) data.append(chunk.data(), n);
      if (n < 0) return std::unexpected(failed(ErrorKind::protocol, tarsafe::error_text(r, "reading " + name)));
      held_order.push_back(name);
      held[name] = std::move(data);
      continue;
    }
    if (name == "oci-layout" || name == "repositories" || name == "index.json") {
      if (regular && archive_read_data_skip(r) != ARCHIVE_OK)
        return std::unexpected(failed(ErrorKind::protocol, tarsafe::error_text(r, "reading " + name)));
      continue;
    }
    if (archive_write_header(w, entry) != ARCHIVE_OK)
      return std::unexpected(failed(ErrorKind::io, tarsafe::error_text(w, "writing " + name)));
    while (n > 0) {
      if (archive_write_data(w, chunk.data(), static_cast<std::size_t>(n)) != n)
        return std::unexpected(failed(ErrorKind::io, tarsafe::error_text(w, "writing " + name)));
      n = archive_read_data(r, chunk.data(), chunk.size());
    }
    if (n < 0) return std::unexpected(failed(ErrorKind::protocol, tarsafe::error_text(r, "reading " + name)));
  }

  const auto manifest_it = held.find("manifest.json");
  if (manifest_it == held.end())
    return std::unexpected(failed(ErrorKind::protocol, "the image archive has no manifest.json"));
  nlohmann::json manifest;
  std::string old_config;
  try {
    manifest = nlohmann::json::parse(manifest_it->second);
    if (!manifest.is_array() || manifest.size() != 1)
      return std::unexpected(failed(ErrorKind::protocol, "the image archive holds " +
                                                             std::to_string(manifest.size()) + " images, not one"));
    old_config = manifest[0].at("Config").get<std::string>();
  } catch (const std::exception& e) {
    return std::unexpected(failed(ErrorKind::protocol, std::string("manifest.json is malformed: ") + e.what()));
  }
  const auto config_it = held.find(old_config);
  if (config_it == held.end())
    return std::unexpected(failed(ErrorKind::protocol, "the image archive lacks its config " + old_config));
  auto edited = edit(config_it->second);
  if (!edited) return std::unexpected(failed(ErrorKind::invalid_spec, edited.error()));
  const std::string hex = digest::sha256(std::string_view(*edited)).hex();
  const std::string new_config = old_config.starts_with("blobs/sha256/") ? "blobs/sha256/" + hex : hex + ".json";

  for (const auto& name : held_order) {
    if (name == "manifest.json" || name == "index.json" || name == "oci-layout" || name == "repositories" ||
        name == old_config || name == new_config)
      continue;
    if (auto ok = write_file(name, held[name]); !ok) return std::unexpected(ok.error());
  }
  if (auto ok = write_file(new_config, *edited); !ok) return std::unexpected(ok.error());
  manifest[0]["Config"] = new_config;
  manifest[0]["RepoTags"] = nlohmann::json::array({std::string(tag)});
  if (auto ok = write_file("manifest.json", manifest.dump()); !ok) return std::unexpected(ok.error());
  if (archive_write_close(w) != ARCHIVE_OK)
    return std::unexpected(failed(ErrorKind::io, tarsafe::error_text(w, "finishing the new archive")));
  return Rewritten{.config_digest = "sha256:" + hex};
}

}  // namespace orc::engine
