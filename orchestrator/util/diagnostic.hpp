#pragma once
// Diagnostics users see, in the one format every command shares:
//   orchestrate: error: FILE:LINE:COL: message (did you mean 'x'?)
// followed, where the source text is known, by the line and a caret.
#include <stdexcept>
#include <string>
#include <vector>

namespace orc::util {

// Process exit codes, the contract scripts rely on.
enum class ExitCode : int {
  ok = 0,
  check_failed = 1,     // the thing checked failed (verification, smoke test)
  bad_input = 2,        // bad usage, bad configuration, bad input file
  outside_failure = 3,  // an outside system failed (engine, registry, network)
};

enum class Severity { error, warning, note };

struct SourceLocation {
  std::string file;
  int line = 0;  // 1-based; 0 = unknown
  int col = 0;   // 1-based; 0 = unknown
};

struct Diagnostic {
  Severity severity = Severity::error;
  SourceLocation where;
  std::string message;
  std::string suggestion;   // the 'x' of "(did you mean 'x'?)"; empty = none
  std::string source_line;  // the offending line, shown with a caret; may be empty

  // The one-line form, without trailing newline.
  std::string headline() const;
  // headline() plus the source line and caret when known, newline-terminated.
  std::string render() const;
};

// The project's one exception type (error tier b: bad configuration, broken
// invariants). Caught once, in main, which prints every diagnostic and exits
// with the code.
class Failure : public std::runtime_error {
 public:
  Failure(ExitCode code, std::vector<Diagnostic> diagnostics);
  Failure(ExitCode code, std::string message);

  ExitCode code() const { return m_code; }
  const std::vector<Diagnostic>& diagnostics() const { return m_diagnostics; }

 private:
  ExitCode m_code;
  std::vector<Diagnostic> m_diagnostics;
};

// Shorthands for the common cases.
[[noreturn]] void fail_input(std::string message);
[[noreturn]] void fail_input(SourceLocation where, std::string message, std::string suggestion = {});

}  // namespace orc::util
