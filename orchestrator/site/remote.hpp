#pragma once
// The remote side of push, pull and fetch: which OCI repository (the
// ORCHESTRATE_REMOTE variable beats the config's `remote:`), how artifact
// sets are named there, and how registry failures map to exit codes.
//
// The tags, <recipe>--<tier>--<16 hex> per set and the moving <recipe>--<tier>,
// are described with the rest of the layout in docs/remote.md ("Registry
// layout"). A recipe or tier that itself holds "--" can make two pairs share
// a prefix, so every listing is confirmed by the manifest's own recipe and
// tier annotations.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "orchestrator/registry/client.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::recipe {
struct Config;
}

namespace orc::site {

inline constexpr std::size_t k_tag_digest_chars = 16;

struct RemoteChoice {
  std::string url;     // may hold credentials: print display_remote(url) instead
  std::string origin;  // "ORCHESTRATE_REMOTE" or "FILE:LINE" of `remote:`
};

// `env_value` is ORCHESTRATE_REMOTE's value (null or empty: unset); it wins
// over the configuration's `remote:`. nullopt when neither names one; a
// malformed ORCHESTRATE_REMOTE throws util::Failure (bad input) that says what
// is wrong without quoting it.
std::optional<RemoteChoice> choose_remote(const char* env_value, const recipe::Config* config);

// The URL without credentials, for messages.
std::string display_remote(std::string_view url);

std::string set_tag(std::string_view recipe, std::string_view tier, const digest::Digest& manifest);
std::string latest_tag(std::string_view recipe, std::string_view tier);
// Whether `tag` is set_tag(recipe, tier, ...) of some manifest.
bool is_set_tag_of(std::string_view tag, std::string_view recipe, std::string_view tier);

// The exit code a registry failure means: digest_mismatch 1 (a check
// failed), invalid 2 (our input), everything else 3 (the outside failed).
util::ExitCode exit_code_for(const registry::Error& error);

// A client over libcurl with the retry policy the commands use and the
// deadlines given (--timeout, --min-rate); `log` hears nothing unless
// ORCHESTRATE_REGISTRY_LOG is set (then every request, credentials
// redacted). Throws util::Failure (bad input) for a malformed URL.
std::unique_ptr<registry::Client> make_client(const std::string& url, const registry::DeadlinePolicy& deadlines = {});

}  // namespace orc::site
