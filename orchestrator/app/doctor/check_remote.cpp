// The remote registry (its /v2/ and its repository, with the configured
// credentials) and the keys: this machine's signing key, the trusted ones.
// Nothing here prints a credential: the registry client's messages and
// site::display_remote leave them out.
#include <algorithm>
#include <cstdlib>

#include "orchestrator/app/doctor/site_checks_detail.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/keys.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/site/trust.hpp"
#include "orchestrator/util/env.hpp"

namespace orc::app::doctor_detail {

namespace {

// What a refusal means, with the credentials the URL carries or not.
std::string refused(const registry::Error& e, bool has_credentials, const std::string& origin) {
  if (e.kind == registry::ErrorKind::unauthorized)
    return has_credentials ? "the registry refused the credentials of " + origin + " (" + e.message + ")"
                           : "the registry wants credentials and " + origin + " gives none (" + e.message + ")";
  if (e.kind == registry::ErrorKind::denied)
    return "the credentials of " + origin + " may not read the repository (" + e.message + ")";
  return e.message;
}

}  // namespace

void check_remote(SiteContext& site) {
  std::optional<site::RemoteChoice> remote;
  try {
    remote = site::choose_remote(util::env_value("ORCHESTRATE_REMOTE").c_str(), site.config.get());
  } catch (const util::Failure& failure) {
    site.add(CheckId::remote, "ORCHESTRATE_REMOTE", CheckStatus::fail, failure_words(failure));
    return;
  }
  if (!remote) {
    site.add(CheckId::remote, "", CheckStatus::skipped,
             std::string("no remote configured (ORCHESTRATE_REMOTE is unset") +
                 (site.config ? ", and the configuration has no remote:)" : ", and no configuration was read)") +
                 ": sets stay in this machine's store");
    return;
  }
  const std::string shown = site::display_remote(remote->url);
  const bool has_credentials = shown != remote->url;
  const std::string origin =
      remote->origin == "ORCHESTRATE_REMOTE" ? "ORCHESTRATE_REMOTE" : "remote: (" + remote->origin + ")";
  std::unique_ptr<registry::Client> client;
  try {
    client = site::make_client(remote->url, {.base = site.request.timeout});
  } catch (const util::Failure& failure) {
    site.add(CheckId::remote, shown, CheckStatus::fail, failure_words(failure));
    return;
  }
  const std::string fix_credentials = std::string(check_info(CheckId::remote).fix);
  if (auto pinged = client->ping(); !pinged) {
    const bool auth = pinged.error().kind == registry::ErrorKind::unauthorized;
    site.add(CheckId::remote, shown, CheckStatus::fail,
             "from " + origin + ": " + refused(pinged.error(), has_credentials, origin),
             auth ? fix_credentials : "start the registry, or correct the host and port in " + origin);
    return;
  }
  auto tags = client->first_tags(1);
  if (!tags) {
    site.add(CheckId::remote, shown, CheckStatus::fail,
             "from " + origin + ": /v2/ answers, but the repository cannot be listed: " +
                 refused(tags.error(), has_credentials, origin),
             fix_credentials);
    return;
  }
  site.add(
      CheckId::remote, shown, CheckStatus::ok,
      "from " + origin + ": /v2/ answers" + (has_credentials ? " with the credentials given" : "") +
          (*tags ? "; the repository lists tags" : "; the repository holds nothing yet (the first push makes it)"));
}

void check_keys(SiteContext& site) {
  const std::filesystem::path dir = cache::default_keys_dir();
  // Read, never made here: the first build or smoke run makes it.
  if (auto key = cache::load_signing_key(dir)) {
    site.add(CheckId::signing_key, dir.string(), CheckStatus::ok, "key " + key->public_key().key_id());
  } else if (key.error().kind == cache::ErrorKind::not_found) {
    site.add(CheckId::signing_key, dir.string(), CheckStatus::warn,
             "none yet: the first build or smoke run makes one; until then nothing this machine stores is signed");
  } else {
    site.add(CheckId::signing_key, dir.string(), CheckStatus::fail, key.error().message,
             "orchestrate key generate --force (replaces the key: other machines must trust the new one)");
  }

  std::optional<cache::TrustedKeys> trusted;
  try {
    trusted = site::trusted_keys(site.config.get());
  } catch (const util::Failure& failure) {
    site.add(CheckId::trusted_keys, dir.string(), CheckStatus::fail, failure_words(failure),
             "remove or replace the file named (trusted_keys: entries and trusted/ hold public keys only)");
    return;
  }
  if (!trusted->empty()) {
    std::string ids;
    for (const auto& [id, key] : *trusted) ids += (ids.empty() ? "" : ", ") + id;
    site.add(CheckId::trusted_keys, dir.string(), CheckStatus::ok,
             std::to_string(trusted->size()) + " trusted: " + ids);
    return;
  }
  // Without a trusted key every signed set a fetch or pull meets is refused.
  const bool remote = std::ranges::any_of(
      site.out, [](const CheckResult& c) { return c.id == CheckId::remote && c.status != CheckStatus::skipped; });
  site.add(CheckId::trusted_keys, dir.string(), remote ? CheckStatus::fail : CheckStatus::warn,
           remote ? "no key is trusted: fetch and pull refuse every set of the configured remote"
                  : "no key is trusted: a set fetched or pulled later would be refused");
}

}  // namespace orc::app::doctor_detail
