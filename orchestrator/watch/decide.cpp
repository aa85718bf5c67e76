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

// The GPUs of the tier a probed nvcc does not list.
std::vector<std::string> dropped_by_probe(const Probe& probe, const std::vector<arch::ComputeCapability>& gpus) {
  std::vector<std::string> out;
  for (const auto& cc : gpus)
    if (std::ranges::find(probe.sass, cc.base()) == probe.sass.end() &&
        std::ranges::find(out, cc.base().sm()) == out.end())
      out.push_back(cc.base().sm());
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

util::Version built_release(const util::Version& recorded, std::string_view image) {
  const auto colon = image.rfind(':');
  const auto slash = image.rfind('/');
  if (colon == std::string_view::npos || (slash != std::string_view::npos && colon < slash)) return recorded;
  const auto tag = parse_cuda_tag(image.substr(colon + 1));
  if (tag && tag->toolkit.truncated(2) == recorded.truncated(2)) return tag->toolkit;
  return recorded;
}

std::string image_key(std::string_view reference) {
  // A first component with a '.' or ':' (or "localhost") is a registry host.
  const auto slash = reference.find('/');
  if (slash != std::string_view::npos) {
    const std::string_view first = reference.substr(0, slash);
    if (first.find_first_of(".:") != std::string_view::npos || first == "localhost") reference.remove_prefix(slash + 1);
  }
  return std::string(reference);
}

Decision decide(const Current& current, const std::vector<Offer>& offers, Policy policy,
                const std::vector<Probe>& probes) {
  Decision out;
  // A set that records only major.minor cannot tell a patch release from
  // what it was built with.
  const bool patch_known = current.toolkit.size() >= 3;
  const Offer* best = nullptr;
  const auto decline = [&out](std::string line) {
    if (std::ranges::find(out.declined, line) == out.declined.end()) out.declined.push_back(std::move(line));
  };
  const auto some_image_offers = [&](const util::Version& toolkit) {
    return std::ranges::any_of(offers, [&](const Offer& o) { return !o.image.empty() && o.toolkit == toolkit; });
  };
  for (const Offer& o : offers) {
    if (o.toolkit.size() < 2) continue;  // a cuDNN offer for a CUDA major: no toolkit of its own
    if (!(current.toolkit < o.toolkit)) continue;
    if (o.image.empty() && some_image_offers(o.toolkit)) continue;  // the image offer speaks for it
    const std::string what = "CUDA " + o.toolkit.str() + " (" + o.feed + ")";
    if (!patch_known && o.toolkit.truncated(2) == current.toolkit.truncated(2)) {
      decline(what + ": the set records CUDA " + current.toolkit.str() +
              " without its patch level, so a patch release cannot be told from it");
      continue;
    }
    if (!policy_allows(policy, current.toolkit, o.toolkit)) {
      const std::string stays = policy == Policy::pinned ? "takes no new toolkit"
                                : policy == Policy::minor
                                    ? "stays on CUDA " + std::to_string(current.toolkit.major()) + ".x"
                                    : "stays on CUDA " + current.toolkit.truncated(2).str() + ".x";
      decline(what + ": policy " + std::string(to_string(policy)) + " " + stays);
      continue;
    }
    if (current.cuda && !current.cuda->contains(o.toolkit)) {
      decline(what + ": outside the recipe's cuda range " + current.cuda->text());
      continue;
    }
    const Probe* probe = find_probe(probes, o.digest);
    if (probe && probe->nvcc.truncated(2) != o.toolkit.truncated(2)) {
      decline(what + ": its image's nvcc is " + probe->nvcc.str() + " (probed), not CUDA " +
              o.toolkit.truncated(2).str());
      continue;
    }
    const compat::Toolkit* row = compat::find_toolkit(o.toolkit);
    if (!row && !probe && o.image.empty()) {
      decline(what + ": not in the toolkit tables, and no watched image offers it to probe");
      continue;
    }
    if (row && !row->released) {
      decline(what + ": the tables say CUDA " + row->version.str() + " was never released");
      continue;
    }
    if (!current.allowed.empty() && std::ranges::none_of(current.allowed, [&](const util::Version& v) {
          return v.truncated(2) == o.toolkit.truncated(2);
        })) {
      decline(what + ": not among the configuration's toolkits");
      continue;
    }
    if (current.driver && (!row || !row->driver_meets_minimum(*current.driver))) {
      decline(what + ": tier " + current.tier + "'s driver " + current.driver->str() + " is older than its minimum " +
              (!row || row->min_driver.empty() ? std::string("(not known)") : row->min_driver.str()));
      continue;
    }
    const std::vector<std::string> gone = probe ? dropped_by_probe(*probe, current.gpus)
                                          : row ? dropped(*row, current.gpus)
                                                : std::vector<std::string>{};
    if (!gone.empty()) {
      const compat::Toolkit* last = last_serving(current.gpus);
      decline(what + ": drops " + util::join(gone, ", ") + ", which tier " + current.tier + " needs" +
              (probe ? " (its nvcc --list-gpu-code, probed)" : "") + "; the last toolkit that serves the tier is " +
              (last ? "CUDA " + last->version.str() : std::string("none")));
      continue;
    }
    if (o.image.empty()) {
      decline(what + ": released, but no watched image offers it yet");
      continue;
    }
    if (!best || best->toolkit < o.toolkit) best = &o;
  }
  if (best) {
    out.stale = true;
    out.take = *best;
    out.reason = "CUDA " + current.toolkit.str() + " -> " + best->toolkit.str() + " (" + best->image + ")";
    const compat::Toolkit* row = compat::find_toolkit(best->toolkit);
    if (!find_probe(probes, best->digest) && (!row || row->is_unconfirmed("archs"))) {
      out.unprobed = true;
      out.reason +=
          row ? "; the tables' archs of CUDA " + row->version.str() + " are unconfirmed: its nvcc is probed first"
              : "; not in the tables yet: its nvcc is probed first";
    }
    return out;
  }
  // The same image rebuilt under its tag.
  for (const Offer& o : offers) {
    if (o.image.empty() || image_key(o.image) != image_key(current.image) || current.image_digest.empty()) continue;
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
