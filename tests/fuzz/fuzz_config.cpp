// libFuzzer target for orchestrate.yaml: parse_config must return (a Config
// or diagnostics) for every input, never throw, crash or hang, and what it
// returns must keep the promises callers rely on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "orchestrator/recipe/config.hpp"
#include "orchestrator/util/redact.hpp"

namespace {

// A broken promise is a crash, so the fuzzer keeps the input that caused it.
void check(bool ok) {
  if (!ok) std::abort();
}

// What a user sees of a diagnostic holds no URL credentials: every userinfo
// left in it is the "***" that replaced one.
void check_redacted(const orc::util::Diagnostic& d) {
  const std::string shown = d.render();
  for (const auto& span : orc::util::credential_spans(shown))
    check(std::string_view(shown).substr(span.begin, span.end - span.begin) == orc::util::k_redacted);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // A directory that does not exist: relative includes in fuzzed text find
  // nothing instead of reading whatever sits in the fuzzer's working directory.
  const auto result = orc::recipe::parse_config(text, "fuzz-nonexistent/orchestrate.yaml");
  if (!result) {
    check(!result.error().empty());
    for (const auto& d : result.error()) {
      check(d.severity == orc::util::Severity::error);
      check(!d.message.empty());
      // parse_config turns an escaped exception into "internal error" rather
      // than crash a user's run; here that is a bug to find.
      check(!d.message.starts_with("internal error"));
      check(d.where.line >= 0 && d.where.col >= 0);
      check(!d.headline().empty());
      check_redacted(d);
    }
    return 0;
  }
  for (const auto& w : result->warnings) check_redacted(w);
  // A Config is only returned whole: every recipe names known tiers and
  // every tier has devices.
  for (const auto& tier : result->tiers) check(!tier.gpus.empty());
  for (const auto& recipe : result->recipes) {
    check(!recipe.name.empty());
    check(!recipe.tiers.empty());
    check(result->find_recipe(recipe.name) == &recipe);
    for (const auto& name : recipe.tiers) check(result->find_tier(name) != nullptr);
    if (recipe.source.kind == orc::recipe::Source::Kind::path) check(recipe.source.path.is_absolute());
    for (const auto& step : recipe.build) check(!step.argv.empty() || step.script.is_absolute());
  }
  return 0;
}
