#pragma once
// The command line: parses argv, dispatches to app/, prints, and turns every
// failure into the one error format and exit code.
#include <iosfwd>

namespace orc::cli {

// Returns the process exit code (util::ExitCode).
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace orc::cli
