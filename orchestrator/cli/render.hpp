#pragma once
// The renderers of the command line: each use case's report as the text a
// person reads or the JSON a script reads. Only these make strings of a
// report; app/ returns values.
#include <string>

#include "orchestrator/app/build/build.hpp"
#include "orchestrator/app/cache/cache_cmd.hpp"
#include "orchestrator/app/cluster/slurm.hpp"
#include "orchestrator/app/doctor/doctor.hpp"
#include "orchestrator/app/images/images.hpp"
#include "orchestrator/app/inspect/coverage.hpp"
#include "orchestrator/app/inspect/inspect.hpp"
#include "orchestrator/app/key/key_cmd.hpp"
#include "orchestrator/app/plan/plan.hpp"
#include "orchestrator/app/smoke/smoke.hpp"
#include "orchestrator/app/stamp/stamp.hpp"
#include "orchestrator/app/tables/tables.hpp"
#include "orchestrator/app/transfer/fetch.hpp"
#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/app/watch/watch.hpp"
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

// An image's coverage: the terminal grid (ANSI colours with `colour`), the
// JSON document, the self-contained HTML page and Markdown for a pull
// request comment; emit prints text or JSON on stdout, warnings and damage
// on stderr, and sets the exit code.
std::string coverage_text(const app::ImageReport& report, bool colour);
std::string coverage_json(const app::ImageReport& report);
std::string coverage_html(const app::ImageReport& report);
std::string coverage_markdown(const app::ImageReport& report);
void emit(Io& io, const app::ImageReport& report, Format format, bool colour);
// stamp --json: {"coverage": coverage_json, "stamped", "identity", "NVIDIA_REQUIRE_CUDA",
// "NVIDIA_REQUIRE_ARCH", "unbounded", "refused_gpus", "removed": the config's
// Env entries taken out, as "NVIDIA_DISABLE_REQUIRE=1"}.
std::string stamp_json(const app::StampReport& report);

// watch --once: each feed's state, then each recipe x tier: stale (with the
// reason and what it takes), up to date, or not built yet, each with the
// newer offers it declined and what the cycle did (rebuilt, failed, locked);
// or app::watch_json. The report's exit code.
void emit(Io& io, const app::WatchReport& report, Format format);

// cache ls: the table (or "no artifact sets" on stderr), or {"store", "sets"};
// verify and gc: their text or JSON, the lock's progress lines on stderr.
void emit(Io& io, const app::CacheLsReport& report, Format format);
void emit(Io& io, const app::CacheVerifyReport& report, Format format);
void emit(Io& io, const app::CacheGcReport& report, Format format);

// plan: per tier a heading and a row per recipe (toolkit, cuDNN, archs) in
// the one table, its image, host toolkit and variables beneath (and with
// `explain` the reasons), each warning once with the plans it concerns; or
// {"plans": [...], "warnings": [...]} (the configuration's warnings).
std::string render(const app::PlanReport& report, Format format, bool explain = false);
// The configuration's warnings on stderr, the plan on stdout; exit 1 when a
// recipe x tier is unsatisfiable.
void emit(Io& io, const app::PlanReport& report, Format format, bool explain);

// images list: the offline images' table (and which the engine has), the
// official tags, the engine; or {"engine", "state_file", "offline",
// "official"}. images build: the record and the step timings.
std::string render(const app::ImagesReport& report, Format format);
std::string render(const app::ImageBuildResult& result, Format format);
void emit(Io& io, const app::ImagesReport& report, Format format);
void emit(Io& io, const app::ImageBuildResult& result, Format format);

// key generate: its id and files; export: the PEM on stdout (its id on
// stderr), or {"key_id", "public_key"}; trust: a line per key, or
// {"trusted": [{"key_id", "file"}]}.
void emit(Io& io, const app::KeyGenerateReport& report, Format format);
void emit(Io& io, const app::KeyExportReport& report, Format format);
void emit(Io& io, const app::KeyTrustReport& report, Format format);

// push: a line per set, or {"remote", "pushed": [{"recipe", "tier",
// "manifest", "artifact", "tag", "uploaded", "skipped", "latest"}]}.
// pull: "pulled ..." or "already stored: ...", or {"recipe", "tier",
// "digest", "downloaded", "verified"}. fetch: what went where, or
// {"recipe", "tier", "digest", "dir", "from", "files": [{"path", "sha256",
// "sass", "ptx"}], "verified": {"digest", "signature", "archs"[, "smoke"]},
// "warnings": [...]} ("smoke" only under --require-smoke; "warnings" what
// stderr said, such as --insecure's, else empty). emit adds the warnings
// on stderr and the exit code.
std::string render(const app::PushReport& report, Format format);
std::string render(const app::PromoteReport& report, Format format);
std::string render(const app::PullReport& report, Format format);
std::string render(const app::FetchReport& report, Format format);
void emit(Io& io, const app::PushReport& report, Format format);
void emit(Io& io, const app::PromoteReport& report, Format format);
void emit(Io& io, const app::PullReport& report, Format format);
void emit(Io& io, const app::FetchReport& report, Format format);

// build: JSON on stdout, or each build's line and artifacts (errors are not
// in it); and every build's errors, each as "orchestrate: error: RECIPE x
// TIER: ..." (stderr).
std::string render_build_json(const app::BuildReport& report);
std::string render_build_text(const app::BuildReport& report, bool explain);
std::string render_build_errors(const app::BuildReport& report);

// build/smoke --engine slurm: a line per job, or JSON.
std::string render_slurm_text(const app::SlurmReport& report);
std::string render_slurm_json(const app::SlurmReport& report);

// smoke's result: the driver, each GPU's load and kernels (text), or the
// same as JSON (what `smoke --json` prints before its attestations).
std::string render_smoke_text(const smoke::SmokeResult& result);
std::string render_smoke_json(const smoke::SmokeResult& result);

}  // namespace orc::cli
