#pragma once
// Where keys live and how they are kept. Under the keys directory
// (default_keys_dir(): $ORCHESTRATE_KEYS_DIR, else $XDG_CONFIG_HOME/orchestrate/keys):
//   signing.pem            this machine's private key, mode 0600
//   signing.pub.pem        its public key
//   trusted/<key id>.pem   public keys whose signatures `fetch` accepts; the
//                          machine's own key is trusted when it is generated
#include <expected>
#include <filesystem>
#include <span>
#include <string>

#include "orchestrator/cache/error.hpp"
#include "orchestrator/cache/signing.hpp"

namespace orc::cache {

struct KeyFiles {
  std::string key_id;
  std::filesystem::path private_key;
  std::filesystem::path public_key;
};

enum class Overwrite { no, yes };

// A key file a user names: a regular file of at most 64 KiB (a PEM key is a
// few hundred bytes), never a device or FIFO read without end.
std::expected<std::string, Error> read_key_file(const std::filesystem::path& path);

// Generates a key pair, writes both files atomically (the private one 0600
// from its first byte) and trusts the public key. An existing private key
// is kept and is an error of kind invalid unless Overwrite::yes.
std::expected<KeyFiles, Error> generate_key(const std::filesystem::path& keys_dir, Overwrite overwrite = Overwrite::no);
// not_found (with what to run) when there is no key yet.
std::expected<SigningKey, Error> load_signing_key(const std::filesystem::path& keys_dir);
std::expected<PublicKey, Error> load_public_key(const std::filesystem::path& keys_dir);

// Adds a public key (PEM text) to trusted/; returns its key id.
std::expected<std::string, Error> trust_key(const std::filesystem::path& keys_dir, std::string_view pem);

// Every key of trusted/. A file there that is not a public key is an error
// (kind invalid) naming it, so a broken trust store is never silently smaller.
std::expected<TrustedKeys, Error> load_trusted_keys(const std::filesystem::path& keys_dir);

// Keys from the configuration: each item is PEM text (it starts with
// "-----BEGIN") or the path of a PEM file. Adds them to `keys`.
std::expected<void, Error> add_trusted_keys(std::span<const std::string> pem_texts_or_paths, TrustedKeys& keys);

}  // namespace orc::cache
