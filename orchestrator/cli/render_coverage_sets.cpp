#include <nlohmann/json.hpp>

#include "orchestrator/cli/coverage_sets.hpp"
#include "orchestrator/cli/table.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::cli {

// Where a set's tier came from, in words.
std::string tier_from_text(const app::ImageReport& r, const app::FetchedSet& s) {
  switch (s.from) {
    case app::TierFrom::configuration:
      return s.judged->name + ", from " + r.config.string();
    case app::TierFrom::manifest:
      return s.judged->name + ", from its signed manifest (the GPUs it was built for; " +
             (r.config.empty() ? std::string("no configuration here")
                               : r.config.string() + " declares no tier '" + s.tier + "'") +
             ")";
    case app::TierFrom::none:
      break;
  }
  return "none: " + s.why + "; its files are judged as files outside the sets";
}

std::string set_manifest(const app::FetchedSet& s) { return s.manifest ? s.manifest->short_string(12) : "-"; }

// Whether the set runs on its tier, from its table's cells.
std::string set_result(const app::ImageReport& r, std::size_t index) {
  using inspect::Outcome;
  for (const auto& t : r.tiers) {
    if (t.set != index) continue;
    if (const auto n = t.count(Outcome::none)) return "does not run: " + std::to_string(n) + " none";
    if (t.rows.empty()) return "no device code";
    if (const auto n = t.count(Outcome::jit)) return "runs (" + std::to_string(n) + " jit)";
    return "runs";
  }
  return "not judged against its tier";
}

// A table's title: the tier, with the set it judges in per-set reports.
std::string table_title(const app::ImageReport& r, const app::CoverageTier& t) {
  if (t.set) return r.sets[*t.set].dir + ": " + t.name;
  if (!r.sets.empty()) return "outside the fetched sets: " + t.name;
  return t.name;
}

std::string sets_text(const app::ImageReport& r) {
  if (r.sets.empty()) return {};
  std::string out = "\n" + std::to_string(r.sets.size()) + (r.sets.size() == 1 ? " fetched set, " : " fetched sets, ") +
                    std::string(k_per_set) + ":\n";
  Table t({"set", "recipe", "manifest", "result", "judged against"});
  for (std::size_t i = 0; i < r.sets.size(); ++i) {
    const auto& s = r.sets[i];
    t.add_row({util::printable(s.dir), util::printable(s.recipe), set_manifest(s), set_result(r, i),
               util::printable(tier_from_text(r, s))});
    if (!s.added_since.empty())
      t.add_note("  " + util::printable(s.judged->name) +
                 " in the configuration has GPUs the set was not built for: " + util::join(s.added_since, ", "));
  }
  return out + t.render(2);
}

nlohmann::json sets_json(const app::ImageReport& r) {
  using nlohmann::json;
  const auto s = [](std::string_view t) { return util::utf8_escaped(t); };
  json sets = json::array();
  for (std::size_t i = 0; i < r.sets.size(); ++i) {
    const auto& set = r.sets[i];
    json gpus = json::array();
    if (set.judged)
      for (const auto& g : set.judged->gpus) gpus.push_back(g.label());
    static constexpr const char* k_from[] = {"configuration", "manifest"};
    sets.push_back(
        {{"dir", s(set.dir)},
         {"recipe", s(set.recipe)},
         {"tier", s(set.tier)},
         {"manifest", set.manifest ? json(set.manifest->to_string()) : json(nullptr)},
         {"signature",
          {{"status", cache::to_string(set.signature.status)},
           {"key_id", set.signature.key_id},
           {"detail", s(set.signature.detail)}}},
         {"judged_against", set.judged ? json(s(set.judged->name)) : json(nullptr)},
         {"tier_from", set.from == app::TierFrom::none ? json(nullptr) : json(k_from[static_cast<int>(set.from)])},
         {"configuration", set.from == app::TierFrom::configuration ? json(r.config.string()) : json(nullptr)},
         {"gpus", gpus},
         {"why", s(set.why)},
         {"added_since", set.added_since},
         {"result", set_result(r, i)}});
  }
  return sets;
}

}  // namespace orc::cli
