#pragma once
// The command line: parses argv, dispatches to app/, prints, and turns every
// failure into the one error format and exit code.
#include <iosfwd>

#include "orchestrator/util/diagnostic.hpp"

namespace orc::cli {

// Returns the process exit code; main turns it into an int, once.
util::ExitCode run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace orc::cli
