// `orchestrate smoke`, rendered.
#include <nlohmann/json.hpp>
#include <ostream>

#include "orchestrator/cli/render.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::cli {

namespace {

std::string smoke_json(const app::SmokeOutput& output) {
  auto j = nlohmann::ordered_json::parse(smoke::render_smoke_json(output.result));
  j["attestations"] = output.attestations;
  auto sets = nlohmann::ordered_json::array();
  for (const auto& used : output.current_sets) {
    nlohmann::ordered_json u{{"recipe", used.recipe}, {"set", used.set.to_string()}, {"recorded", used.recorded}};
    if (used.newer) u["newer"] = used.newer->to_string();
    if (used.stale) u["stale_record"] = used.stale->to_string();
    sets.push_back(std::move(u));
  }
  j["current_sets"] = std::move(sets);
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string smoke_text(const app::SmokeOutput& output) {
  std::string text = smoke::render_smoke_text(output.result);
  for (const auto& used : output.current_sets) text += "set: " + app::describe_current(used, output.result.tier) + "\n";
  for (const auto& a : output.attestations) text += "attested: " + a + "\n";
  return text;
}

}  // namespace

void emit(Io& io, const app::SmokeOutput& output, Format format) {
  const smoke::SmokeResult& r = output.result;
  if (format == Format::json) io.out << smoke_json(output);
  if (r.driver_error)
    io.err << util::Diagnostic{.message = *r.driver_error + ": nothing can be proven on this machine"}.render();
  else if (r.gpus.empty())
    io.err << util::Diagnostic{.message = "no CUDA GPU on this machine: nothing can be proven here"}.render();
  else if (format == Format::text)
    io.out << smoke_text(output);
  io.exit_code = r.exit_code();
}

}  // namespace orc::cli
