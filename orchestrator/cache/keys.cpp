#include "orchestrator/cache/keys.hpp"

#include <algorithm>
#include <vector>

#include "orchestrator/cache/files.hpp"

namespace orc::cache {

namespace fs = std::filesystem;

namespace {

fs::path private_path(const fs::path& dir) { return dir / "signing.pem"; }
fs::path public_path(const fs::path& dir) { return dir / "signing.pub.pem"; }
fs::path trusted_dir(const fs::path& dir) { return dir / "trusted"; }
// Temporaries beside the keys: same file system, and never in a shared /tmp.
fs::path tmp_dir(const fs::path& dir) { return dir / ".tmp"; }

// A PEM key is a few hundred bytes; anything past this is not a key.
constexpr std::uint64_t k_max_key_file = 64 * 1024;

std::expected<PublicKey, Error> public_key_file(const fs::path& path) {
  auto text = read_small_file(path, k_max_key_file, "a public key PEM file");
  if (!text) return std::unexpected(text.error());
  auto key = PublicKey::from_pem(*text);
  if (!key) return std::unexpected(invalid_error(path.string() + ": " + key.error().message));
  return key;
}

}  // namespace

std::expected<std::string, Error> read_key_file(const fs::path& path) {
  return read_small_file(path, k_max_key_file, "a public key PEM file");
}

std::expected<KeyFiles, Error> generate_key(const fs::path& keys_dir, Overwrite overwrite) {
  std::error_code ec;
  if (fs::exists(private_path(keys_dir), ec) && overwrite == Overwrite::no)
    return std::unexpected(
        invalid_error(private_path(keys_dir).string() +
                      " already exists; keep it, or replace it with 'orchestrate key generate --force' "
                      "(artifacts it signed then verify only where its public key stays trusted)"));
  fs::create_directories(keys_dir, ec);
  fs::permissions(keys_dir, fs::perms::owner_all, ec);
  auto key = SigningKey::generate();
  if (!key) return std::unexpected(key.error());
  if (auto ok = write_file_atomic(private_path(keys_dir), key->pem(), tmp_dir(keys_dir), 0600); !ok)
    return std::unexpected(ok.error());
  const std::string pub = key->public_key().pem();
  if (auto ok = write_file_atomic(public_path(keys_dir), pub, tmp_dir(keys_dir), 0644); !ok)
    return std::unexpected(ok.error());
  if (auto id = trust_key(keys_dir, pub); !id) return std::unexpected(id.error());
  return KeyFiles{
      .key_id = key->public_key().key_id(), .private_key = private_path(keys_dir), .public_key = public_path(keys_dir)};
}

std::expected<SigningKey, Error> load_signing_key(const fs::path& keys_dir) {
  auto text = read_file(private_path(keys_dir));
  if (!text)
    return std::unexpected(Error{ErrorKind::not_found, "no signing key at " + private_path(keys_dir).string() +
                                                           "; run 'orchestrate key generate'"});
  auto key = SigningKey::from_pem(*text);
  if (!key) return std::unexpected(invalid_error(private_path(keys_dir).string() + ": " + key.error().message));
  return key;
}

std::expected<PublicKey, Error> load_public_key(const fs::path& keys_dir) {
  std::error_code ec;
  if (!fs::exists(public_path(keys_dir), ec))
    return std::unexpected(Error{ErrorKind::not_found, "no public key at " + public_path(keys_dir).string() +
                                                           "; run 'orchestrate key generate'"});
  return public_key_file(public_path(keys_dir));
}

std::expected<std::string, Error> trust_key(const fs::path& keys_dir, std::string_view pem) {
  auto key = PublicKey::from_pem(pem);
  if (!key) return std::unexpected(key.error());
  if (auto ok = write_file_atomic(trusted_dir(keys_dir) / (key->key_id() + ".pem"), key->pem(), tmp_dir(keys_dir)); !ok)
    return std::unexpected(ok.error());
  return key->key_id();
}

std::expected<TrustedKeys, Error> load_trusted_keys(const fs::path& keys_dir) {
  TrustedKeys keys;
  std::error_code ec;
  if (!fs::is_directory(trusted_dir(keys_dir), ec)) return keys;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(trusted_dir(keys_dir), ec))
    if (entry.path().extension() == ".pem") files.push_back(entry.path());
  if (ec) return std::unexpected(io_error("reading " + trusted_dir(keys_dir).string() + ": " + ec.message()));
  std::ranges::sort(files);
  for (const auto& file : files) {
    auto key = public_key_file(file);
    if (!key) return std::unexpected(key.error());
    keys.insert_or_assign(key->key_id(), std::move(*key));
  }
  return keys;
}

std::expected<void, Error> add_trusted_keys(std::span<const std::string> items, TrustedKeys& keys) {
  for (const auto& item : items) {
    auto key = item.starts_with("-----BEGIN") ? PublicKey::from_pem(item) : public_key_file(item);
    if (!key) return std::unexpected(key.error());
    keys.insert_or_assign(key->key_id(), std::move(*key));
  }
  return {};
}

}  // namespace orc::cache
