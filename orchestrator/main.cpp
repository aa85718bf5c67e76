// orchestrate: see README.md. Everything happens in cli::run; main only binds
// the standard streams.
#include <iostream>

#include "orchestrator/cli/cli.hpp"

int main(int argc, char** argv) { return static_cast<int>(orc::cli::run(argc, argv, std::cout, std::cerr)); }
