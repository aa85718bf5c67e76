#pragma once
// `orchestrate key generate | export | trust`: the Ed25519 key that signs
// this machine's manifests, and the public keys whose signatures it accepts.
// Each returns its report; cli/render_key.cpp prints it as text or JSON.
#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

struct KeyRequest {
  std::filesystem::path keys_dir;  // empty: cache::default_keys_dir()
  bool json = false;
  bool force = false;              // generate: replace an existing key
  std::vector<std::string> files;  // trust: PEM files of public keys
};

struct KeyGenerateReport {
  std::string key_id;  // 16 hex digits
  std::filesystem::path private_key;
  std::filesystem::path public_key;
  util::ExitCode exit_code = util::ExitCode::ok;
};

struct KeyExportReport {
  std::string key_id;
  std::string pem;  // the public key, as a file holds it
  util::ExitCode exit_code = util::ExitCode::ok;
};

struct TrustedKeyFile {
  std::string key_id;
  std::string file;  // as given on the command line
};

struct KeyTrustReport {
  std::vector<TrustedKeyFile> trusted;  // in the order given
  util::ExitCode exit_code = util::ExitCode::ok;
};

// Throw util::Failure, exit 2, when a key exists (without force), when there
// is no key to export, or when a file to trust is not an Ed25519 public key;
// exit 3 when the keys dir cannot be read or written.
KeyGenerateReport key_generate(const KeyRequest& request);
KeyExportReport key_export(const KeyRequest& request);
KeyTrustReport key_trust(const KeyRequest& request);

}  // namespace orc::app
