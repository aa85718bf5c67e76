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
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string smoke_text(const app::SmokeOutput& output) {
  std::string text = smoke::render_smoke_text(output.result);
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
