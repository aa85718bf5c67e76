#include "orchestrator/cache/smoke_run.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <span>
#include <tuple>

#include "orchestrator/digest/sha256.hpp"

namespace orc::cache {

namespace {

constexpr std::string_view k_run_type = "orchestrate.smoke-run.v1";

auto identity(const SmokeAttestation& run) { return std::tie(run.node, run.key_id, run.ordinal); }

}  // namespace

digest::Digest smoke_subject(const Manifest& manifest) {
  Manifest build = manifest;
  build.smoke.clear();
  build.created.clear();
  for (auto& f : build.files) f.mode.reset();
  const std::string bytes = canonical_json(build);
  return digest::sha256(std::as_bytes(std::span(bytes.data(), bytes.size())));
}

std::string smoke_run_bytes(const SmokeAttestation& run, std::string_view tier, const digest::Digest& subject) {
  // nlohmann::json keeps object keys sorted, which makes these bytes canonical.
  const nlohmann::json j{
      {"type", k_run_type},   {"subject", subject.to_string()}, {"tier", tier},           {"node", run.node},
      {"key_id", run.key_id}, {"ordinal", run.ordinal},         {"gpu", run.gpu},         {"cc", run.cc},
      {"member", run.member}, {"driver", run.driver},           {"outcome", run.outcome}, {"time", run.time}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void sign_smoke_run(SmokeAttestation& run, const SigningKey& key, std::string_view tier,
                    const digest::Digest& subject) {
  run.key_id = key.public_key().key_id();
  run.signature = key.sign(smoke_run_bytes(run, tier, subject));
}

RunSignature verify_smoke_run(const SmokeAttestation& run, std::string_view tier, const digest::Digest& subject,
                              const TrustedKeys& trusted) {
  if (!run.is_signed()) return RunSignature::not_signed;
  const auto key = trusted.find(run.key_id);
  if (key == trusted.end()) return RunSignature::unknown_key;
  return key->second.verify(smoke_run_bytes(run, tier, subject), run.signature) ? RunSignature::verified
                                                                                : RunSignature::bad_signature;
}

void record_smoke_run(std::vector<SmokeAttestation>& runs, SmokeAttestation run) {
  const auto same = std::ranges::find_if(
      runs, [&](const SmokeAttestation& r) { return r.is_signed() && identity(r) == identity(run); });
  if (same != runs.end())
    *same = std::move(run);
  else
    runs.push_back(std::move(run));
  std::ranges::stable_sort(runs, [](const SmokeAttestation& a, const SmokeAttestation& b) {
    if (a.is_signed() != b.is_signed()) return !a.is_signed();
    return a.is_signed() && identity(a) < identity(b);
  });
}

}  // namespace orc::cache
