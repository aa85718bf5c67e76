#include "orchestrator/watch/decide.hpp"

#include <algorithm>

#include "orchestrator/compat/toolkits.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::watch {

namespace {

std::string short_digest(std::string_view digest) {
  const auto colon = digest.find(':');
  return std::string(digest.substr(colon == std::string_view::npos ? 0 : colon + 1, 12));
}

bool policy_allows(Policy policy, const util::Version& from, const util::Version& to) {
  switch (policy) {
    case Policy::patch:
      return to.truncated(2) == from.truncated(2);
    case Policy::minor:
      return to.major() == from.major();
    case Policy::major:
      return true;
    case Policy::pinned:
      return false;
  }
  return false;
}

// The GPUs of the tier `t` has no SASS for, as "sm_70, sm_75".
std::vector<std::string> dropped(const compat::Toolkit& t, const std::vector<arch::ComputeCapability>& gpus) {
  std::vector<std::string> out;
  for (const auto& cc : gpus)
    if (!t.accepts(cc.base()) && std::ranges::find(out, cc.base().sm()) == out.end()) out.push_back(cc.base().sm());
  return out;
}

// The newest released toolkit of the tables that compiles for every GPU.
const compat::Toolkit* last_serving(const std::vector<arch::ComputeCapability>& gpus) {
  const compat::Toolkit* last = nullptr;
  for (const auto& t : compat::toolkit_table())
    if (t.released && dropped(t, gpus).empty()) last = &t;
  return last;
}

}  // namespace

std::string_view to_string(Policy policy) {
  switch (policy) {
    case Policy::patch:
      return "patch";
    case Policy::minor:
      return "minor";
    case Policy::major:
      return "major";
    case Policy::pinned:
      return "pinned";
  }
  return "?";
}

std::optional<Policy> parse_policy(std::string_view text) {
  for (Policy p : {Policy::patch, Policy::minor, Policy::major, Policy::pinned})
    if (text == to_string(p)) return p;
  return std::nullopt;
}

Decision decide(const Current& current, const std::vector<Offer>& offers, Policy policy) {
  Decision out;
  // A set that records only major.minor cannot tell a patch release from
  // what it was built with.
  const bool patch_known = current.toolkit.size() >= 3;
  const Offer* best = nullptr;
  for (const Offer& o : offers) {
    if (o.toolkit.size() < 2) continue;  // a cuDNN offer for a CUDA major: no toolkit of its own
    if (!(current.toolkit < o.toolkit)) continue;
    const std::string what = "CUDA " + o.toolkit.str() + " (" + o.feed + ")";
    if (!patch_known && o.toolkit.truncated(2) == current.toolkit.truncated(2)) {
      out.declined.push_back(what + ": the set records CUDA " + current.toolkit.str() +
                             " without its patch level, so a patch release cannot be told from it");
      continue;
    }
    if (!policy_allows(policy, current.toolkit, o.toolkit)) {
      const std::string stays = policy == Policy::pinned ? "takes no new toolkit"
                                : policy == Policy::minor
                                    ? "stays on CUDA " + std::to_string(current.toolkit.major()) + ".x"
                                    : "stays on CUDA " + current.toolkit.truncated(2).str() + ".x";
      out.declined.push_back(what + ": policy " + std::string(to_string(policy)) + " " + stays);
      continue;
    }
    if (current.cuda && !current.cuda->contains(o.toolkit)) {
      out.declined.push_back(what + ": outside the recipe's cuda range " + current.cuda->text());
      continue;
    }
    const compat::Toolkit* row = compat::find_toolkit(o.toolkit);
    if (!row || !row->released) {
      out.declined.push_back(what + ": not in the toolkit tables; an image of it must be probed before use");
      continue;
    }
    if (const auto gone = dropped(*row, current.gpus); !gone.empty()) {
      const compat::Toolkit* last = last_serving(current.gpus);
      out.declined.push_back(what + ": drops " + util::join(gone, ", ") + ", which tier " + current.tier +
                             " needs; the last toolkit that serves the tier is " +
                             (last ? "CUDA " + last->version.str() : std::string("none")));
      continue;
    }
    if (o.image.empty()) {
      out.declined.push_back(what + ": released, but no watched image offers it yet");
      continue;
    }
    if (!best || best->toolkit < o.toolkit) best = &o;
  }
  if (best) {
    out.stale = true;
    out.take = *best;
    out.reason = "CUDA " + current.toolkit.str() + " -> " + best->toolkit.str() + " (" + best->image + ")";
    return out;
  }
  // The same image rebuilt under its tag.
  for (const Offer& o : offers) {
    if (o.image.empty() || o.image != current.image || current.image_digest.empty()) continue;
    if (o.digest == current.image_digest) continue;
    out.stale = true;
    out.take = o;
    out.reason =
        "base image moved: " + o.image + " " + short_digest(current.image_digest) + " -> " + short_digest(o.digest);
    return out;
  }
  return out;
}

}  // namespace orc::watch
