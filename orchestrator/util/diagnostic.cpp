#include "orchestrator/util/diagnostic.hpp"

#include <algorithm>

#include "orchestrator/util/redact.hpp"

namespace orc::util {

namespace {

const char* severity_word(Severity s) {
  switch (s) {
    case Severity::error:
      return "error";
    case Severity::warning:
      return "warning";
    case Severity::note:
      return "note";
  }
  return "error";
}

std::string joined_message(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) {
    if (!out.empty()) out += '\n';
    out += d.headline();
  }
  return out;
}

}  // namespace

std::string Diagnostic::headline() const {
  std::string out = "orchestrate: ";
  out += severity_word(severity);
  out += ": ";
  if (!where.file.empty()) {
    out += where.file;
    if (where.line > 0) {
      out += ':' + std::to_string(where.line);
      if (where.col > 0) out += ':' + std::to_string(where.col);
    }
    out += ": ";
  }
  out += message;
  if (!suggestion.empty()) out += " (did you mean '" + suggestion + "'?)";
  // Messages quote what users wrote (a path, a name, a CLI argument), which
  // may be a URL with a password in it.
  return redact_credentials(out);
}

std::string Diagnostic::render() const {
  std::string out = headline() + '\n';
  if (!source_line.empty() && where.col > 0) {
    // The line is redacted here, where every excerpt is printed, because a
    // line that failed to parse was never seen as a URL by anything else.
    const std::string shown = redact_credentials(source_line);
    out += "    " + shown + '\n';
    std::string pad;
    const auto col = std::min<std::size_t>(static_cast<std::size_t>(where.col - 1), source_line.size());
    const auto upto = std::min(redacted_offset(source_line, col), shown.size());
    for (std::size_t i = 0; i < upto; ++i) pad += shown[i] == '\t' ? '\t' : ' ';
    out += "    " + pad + "^\n";
  }
  return out;
}

Failure::Failure(ExitCode code, std::vector<Diagnostic> diagnostics)
    : std::runtime_error(joined_message(diagnostics)), m_code(code), m_diagnostics(std::move(diagnostics)) {}

Failure::Failure(ExitCode code, std::string message)
    : Failure(code, std::vector<Diagnostic>{Diagnostic{.message = std::move(message)}}) {}

void fail_input(std::string message) { throw Failure(ExitCode::bad_input, std::move(message)); }

void fail_input(SourceLocation where, std::string message, std::string suggestion) {
  throw Failure(ExitCode::bad_input,
                std::vector<Diagnostic>{Diagnostic{.where = std::move(where),
                                                   .message = std::move(message),
                                                   .suggestion = std::move(suggestion)}});
}

}  // namespace orc::util
