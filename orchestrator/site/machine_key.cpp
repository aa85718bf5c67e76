#include "orchestrator/site/machine_key.hpp"

#include <unistd.h>

#include <array>

#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/keys.hpp"

namespace orc::site {

std::optional<cache::SigningKey> machine_signing_key(const std::function<void(const std::string&)>& say) {
  const std::filesystem::path dir = cache::default_keys_dir();
  auto key = cache::load_signing_key(dir);
  if (!key && key.error().kind == cache::ErrorKind::not_found) {
    auto made = cache::generate_key(dir);
    if (made) {
      say("orchestrate: generated this machine's signing key " + made->key_id + " in " + dir.string() +
          " (`orchestrate key export` prints the public key other machines trust)");
      key = cache::load_signing_key(dir);
    } else {
      key = std::unexpected(made.error());
    }
  }
  if (key) return std::move(*key);
  say("orchestrate: warning: stored UNSIGNED: " + key.error().message);
  return std::nullopt;
}

std::string node_hostname() {
  std::array<char, 256> name{};  // HOST_NAME_MAX is 64 on Linux
  if (::gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') return "localhost";
  return name.data();
}

}  // namespace orc::site
