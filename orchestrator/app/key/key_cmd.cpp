#include "orchestrator/app/key/key_cmd.hpp"

#include <nlohmann/json.hpp>

#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/keys.hpp"

namespace orc::app {

namespace {

using nlohmann::ordered_json;

std::filesystem::path keys_dir(const KeyRequest& request) {
  return request.keys_dir.empty() ? cache::default_keys_dir() : request.keys_dir;
}

}  // namespace

CacheOutput key_generate(const KeyRequest& request) {
  const auto made =
      cache::generate_key(keys_dir(request), request.force ? cache::Overwrite::yes : cache::Overwrite::no);
  if (!made) fail_with(made.error());
  if (request.json)
    return {.out = ordered_json{{"key_id", made->key_id},
                                {"private_key", made->private_key.string()},
                                {"public_key", made->public_key.string()}}
                       .dump(2) +
                   "\n"};
  return {.out = "generated signing key " + made->key_id + "\n  private key: " + made->private_key.string() +
                 " (mode 0600; keep it on this machine)\n  public key:  " + made->public_key.string() +
                 " (trusted here; 'orchestrate key trust' it on every machine that fetches)\n"};
}

CacheOutput key_export(const KeyRequest& request) {
  const auto key = cache::load_public_key(keys_dir(request));
  if (!key) fail_with(key.error());
  if (request.json) return {.out = ordered_json{{"key_id", key->key_id()}, {"public_key", key->pem()}}.dump(2) + "\n"};
  return {.out = key->pem(), .err = "key id " + key->key_id() + "\n"};
}

CacheOutput key_trust(const KeyRequest& request) {
  ordered_json trusted = ordered_json::array();
  std::string text;
  for (const auto& file : request.files) {
    const auto pem = cache::read_key_file(file);
    if (!pem) fail_with({cache::ErrorKind::invalid, pem.error().message});
    const auto id = cache::trust_key(keys_dir(request), *pem);
    if (!id) fail_with({id.error().kind, file + ": " + id.error().message});
    trusted.push_back({{"key_id", *id}, {"file", file}});
    text += "trusted key " + *id + " from " + file + "\n";
  }
  if (request.json) return {.out = ordered_json{{"trusted", std::move(trusted)}}.dump(2) + "\n"};
  return {.out = text};
}

}  // namespace orc::app
