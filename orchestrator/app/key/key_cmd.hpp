#pragma once
// `orchestrate key generate | export | trust`: the Ed25519 key that signs
// this machine's manifests, and the public keys whose signatures it accepts.
#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/app/cache/cache_cmd.hpp"

namespace orc::app {

struct KeyRequest {
  std::filesystem::path keys_dir;  // empty: cache::default_keys_dir()
  bool json = false;
  bool force = false;              // generate: replace an existing key
  std::vector<std::string> files;  // trust: PEM files of public keys
};

// Exit 2 when a key exists (without force), when there is no key to export,
// or when a file to trust is not an Ed25519 public key.
CacheOutput key_generate(const KeyRequest& request);
// The public key as PEM on stdout (so `key export > me.pem` works).
CacheOutput key_export(const KeyRequest& request);
CacheOutput key_trust(const KeyRequest& request);

}  // namespace orc::app
