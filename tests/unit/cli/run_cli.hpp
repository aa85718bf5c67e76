#pragma once
// Runs the command line in-process, as a user runs it, and keeps what they
// would see.
#include <sstream>
#include <string>
#include <vector>

#include "orchestrator/cli/cli.hpp"

namespace orc::cli::testing {

struct CliResult {
  int code = 0;
  std::string out;
  std::string err;
};

inline CliResult run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "orchestrate");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = static_cast<int>(run(static_cast<int>(argv.size()), argv.data(), out, err));
  return {code, out.str(), err.str()};
}

}  // namespace orc::cli::testing
