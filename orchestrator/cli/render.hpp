#pragma once
// The renderers of the command line: each use case's report as the text a
// person reads or the JSON a script reads. Only these make strings of a
// report; app/ returns values.
#include <string>

#include "orchestrator/app/cache/cache_cmd.hpp"
#include "orchestrator/app/doctor/doctor.hpp"
#include "orchestrator/app/inspect/inspect.hpp"
#include "orchestrator/app/smoke/smoke.hpp"
#include "orchestrator/app/tables/tables.hpp"
#include "orchestrator/cli/commands.hpp"

namespace orc::cli {

enum class Format { text, json };

std::string render(const app::GpusReport& report, Format format);
std::string render(const app::ToolkitsReport& report, Format format);
std::string render(const app::DoctorReport& report, Format format);

// The result as smoke::render_smoke_* prints it, plus the attestations
// (`attestations` in the JSON object, an "attested: ..." line each in
// text). No driver or no GPU is an error on stderr (exit 3), never a line of
// the report; the JSON document still says it in "driver_error".
void emit(Io& io, const app::SmokeOutput& output, Format format);

// The table and where it runs, or {"files": [...], "warnings": [...]}; in
// text the warnings go to stderr. List mode passes cuobjdump's streams and
// exit code through.
void emit(Io& io, const app::InspectReport& report, Format format);

// cache ls: the table (or "no artifact sets" on stderr), or {"store", "sets"};
// verify and gc: their text or JSON, the lock's progress lines on stderr.
void emit(Io& io, const app::CacheLsReport& report, Format format);
void emit(Io& io, const app::CacheVerifyReport& report, Format format);
void emit(Io& io, const app::CacheGcReport& report, Format format);

}  // namespace orc::cli
