#include "orchestrator/app/key/key_cmd.hpp"

#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/keys.hpp"
#include "orchestrator/site/store_error.hpp"

namespace orc::app {

namespace {

std::filesystem::path keys_dir(const KeyRequest& request) {
  return request.keys_dir.empty() ? cache::default_keys_dir() : request.keys_dir;
}

}  // namespace

KeyGenerateReport key_generate(const KeyRequest& request) {
  const auto made =
      cache::generate_key(keys_dir(request), request.force ? cache::Overwrite::yes : cache::Overwrite::no);
  if (!made) site::fail_with(made.error());
  return {.key_id = made->key_id, .private_key = made->private_key, .public_key = made->public_key};
}

KeyExportReport key_export(const KeyRequest& request) {
  const auto key = cache::load_public_key(keys_dir(request));
  if (!key) site::fail_with(key.error());
  return {.key_id = key->key_id(), .pem = key->pem()};
}

KeyTrustReport key_trust(const KeyRequest& request) {
  KeyTrustReport report;
  for (const auto& file : request.files) {
    const auto pem = cache::read_key_file(file);
    if (!pem) site::fail_with({cache::ErrorKind::invalid, pem.error().message});
    const auto id = cache::trust_key(keys_dir(request), *pem);
    if (!id) site::fail_with({id.error().kind, file + ": " + id.error().message});
    report.trusted.push_back({.key_id = *id, .file = file});
  }
  return report;
}

}  // namespace orc::app
