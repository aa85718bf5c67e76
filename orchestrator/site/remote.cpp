#include "orchestrator/site/remote.hpp"

#include <cstdlib>
#include <iostream>

#include "orchestrator/recipe/config.hpp"
#include "orchestrator/registry/protocol.hpp"
#include "orchestrator/util/env.hpp"

namespace orc::site {

namespace {

constexpr std::string_view k_separator = "--";

}  // namespace

std::optional<RemoteChoice> choose_remote(const char* env_value, const recipe::Config* config) {
  if (env_value && *env_value) {
    // Checked here, as `remote:` is when the file is read, so a malformed
    // value (which may hold a password) is never quoted by what uses it.
    if (const std::string problem = recipe::remote_url_problem(env_value); !problem.empty())
      util::fail_input("invalid ORCHESTRATE_REMOTE: " + problem);
    return RemoteChoice{.url = env_value, .origin = "ORCHESTRATE_REMOTE"};
  }
  if (config && !config->remote.empty())
    return RemoteChoice{.url = config->remote,
                        .origin = config->remote_where.file + ":" + std::to_string(config->remote_where.line)};
  return std::nullopt;
}

std::string display_remote(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const auto host = scheme + 3;
  const auto at = url.find('@', host);
  const auto slash = url.find('/', host);
  if (at == std::string_view::npos || (slash != std::string_view::npos && at > slash)) return std::string(url);
  return std::string(url.substr(0, host)) + std::string(url.substr(at + 1));
}

std::string set_tag(std::string_view recipe, std::string_view tier, const digest::Digest& manifest) {
  return latest_tag(recipe, tier) + std::string(k_separator) + manifest.hex().substr(0, k_tag_digest_chars);
}

std::string latest_tag(std::string_view recipe, std::string_view tier) {
  return std::string(recipe) + std::string(k_separator) + std::string(tier);
}

bool is_set_tag_of(std::string_view tag, std::string_view recipe, std::string_view tier) {
  const std::string prefix = latest_tag(recipe, tier) + std::string(k_separator);
  if (!tag.starts_with(prefix)) return false;
  const std::string_view hex = tag.substr(prefix.size());
  return hex.size() == k_tag_digest_chars && hex.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

util::ExitCode exit_code_for(const registry::Error& error) {
  switch (error.kind) {
    case registry::ErrorKind::digest_mismatch:
      return util::ExitCode::check_failed;
    case registry::ErrorKind::invalid:
      return util::ExitCode::bad_input;
    default:
      return util::ExitCode::outside_failure;
  }
}

std::unique_ptr<registry::Client> make_client(const std::string& url, const registry::DeadlinePolicy& deadlines) {
  registry::ClientOptions options{.url = url,
                                  .retry = {.max_attempts = 4,
                                            .base_delay = std::chrono::milliseconds(200),
                                            .max_delay = std::chrono::milliseconds(2'000)},
                                  .deadlines = deadlines};
  if (util::env_get("ORCHESTRATE_REGISTRY_LOG"))
    options.log = [](std::string_view line) { std::clog << "registry: " << line << '\n'; };
  return std::make_unique<registry::Client>(std::move(options), registry::make_curl_transport());
}

}  // namespace orc::site
