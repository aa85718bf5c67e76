#pragma once
// The renderers of the command line: each use case's report as the text a
// person reads or the JSON a script reads. Only these make strings of a
// report; app/ returns values.
#include <string>

#include "orchestrator/app/tables.hpp"

namespace orc::cli {

enum class Format { text, json };

std::string render(const app::GpusReport& report, Format format);
std::string render(const app::ToolkitsReport& report, Format format);

}  // namespace orc::cli
