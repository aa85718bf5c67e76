#pragma once
// The fetched sets of a coverage report judged per set (app/inspect/
// fetched_sets.hpp), in words: what render_coverage.cpp's text, JSON, HTML
// and Markdown share about them.
#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "orchestrator/app/inspect/coverage.hpp"

namespace orc::cli {

inline constexpr std::string_view k_per_set =
    "each judged against its own tier (--all-tiers: every file against every tier)";

// "tier-new, from recipes/orchestrate.yaml", "tier-new, from its signed
// manifest (...)", "none: why; ...".
std::string tier_from_text(const app::ImageReport& r, const app::FetchedSet& s);
// "sha256:3f2a9c1d4e5f", "-" for a record that cannot be read.
std::string set_manifest(const app::FetchedSet& s);
// "runs", "runs (2 jit)", "does not run: 3 none", "no device code", "not
// judged against its tier": from the set's table.
std::string set_result(const app::ImageReport& r, std::size_t index);
// A table's title: the tier, after the set it judges in a per-set report.
std::string table_title(const app::ImageReport& r, const app::CoverageTier& t);
// The sets as a table (a blank line first); empty when not per set.
std::string sets_text(const app::ImageReport& r);
// {"dir", "recipe", "tier", "manifest", "signature": {"status", "key_id",
// "detail"}, "judged_against", "tier_from": "configuration" | "manifest" |
// null, "configuration", "gpus", "why", "added_since", "result"} per set.
nlohmann::json sets_json(const app::ImageReport& r);

}  // namespace orc::cli
