// libFuzzer target for the small grammars a registry (or whoever answers in
// its place) sends: WWW-Authenticate challenges and the token URL built from
// them, the token endpoint's JSON, Link and Location values, Content-Range
// and the resume decision, the error JSON; and the remote URL a user writes,
// whose password must never survive redaction.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "orchestrator/digest/image_reference.hpp"
#include "orchestrator/registry/auth.hpp"
#include "orchestrator/registry/protocol.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using orc::fuzz::check;
using namespace orc::registry;

void challenges(std::string_view text) {
  for (const Challenge& c : parse_challenges(text)) {
    check(!c.scheme.empty());
    for (const char ch : c.scheme) check(!(ch >= 'A' && ch <= 'Z'));
    const std::string url = token_url(c);
    if (!url.empty()) check(url.starts_with("http://") || url.starts_with("https://"));
  }
}

void remote(std::string_view text) {
  const auto parsed = parse_remote(text);
  if (!parsed) {
    check(!parsed.error().message.empty());
    return;
  }
  check(orc::digest::is_valid_repository(parsed->repository));
  // A password of a few characters could occur elsewhere in the URL by
  // chance; one of eight or more that survives redaction is a leak.
  const std::string shown = redact_url(text);
  if (parsed->credentials && parsed->credentials->password.size() >= 8)
    check(shown.find(parsed->credentials->password) == std::string::npos);
}

void ranges(std::string_view text) {
  if (const auto range = parse_content_range(text)) {
    check(range->first <= range->last);
    if (range->total) check(range->last < *range->total);
    const ResumeAction action = resume_action(range->first, 206, text);
    check(action == ResumeAction::append);
  }
  for (const int status : {200, 206, 416}) (void)resume_action(static_cast<std::uint64_t>(text.size()), status, text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  challenges(text);
  if (const auto token = parse_token_response(text)) check(!token->empty());
  remote(text);
  (void)next_link(text);
  if (const auto url = resolve_url("https://registry.example:5000", text))
    check(url->starts_with("http://") || url->starts_with("https://"));
  ranges(text);
  const RegistryErrors errors = parse_registry_errors(text);
  if (errors.text.empty()) check(errors.first_code.empty());
  (void)redact_url(text);
  return 0;
}
