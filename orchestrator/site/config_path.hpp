#pragma once
#include <filesystem>
#include <string>

namespace orc::site {

// Which orchestrate.yaml a command reads: -f when given, else
// $ORCHESTRATE_CONFIG, else ./orchestrate.yaml, else the example in
// ./recipes/ (so commands work from the repository root).
std::filesystem::path locate_config(const std::string& given);

}  // namespace orc::site
