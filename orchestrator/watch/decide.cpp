#include "orchestrator/watch/decide.hpp"

#include <algorithm>
#include <functional>

#include "orchestrator/compat/toolkits.hpp"
#include "orchestrator/digest/image_reference.hpp"
#include "orchestrator/util/strings.hpp"
#include "orchestrator/watch/debian.hpp"

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

// "name" -> "version" of a "name=version" list.
std::optional<std::string_view> version_in(const std::vector<std::string>& packages, std::string_view name) {
  for (const std::string& p : packages)
    if (p.size() > name.size() && p.starts_with(name) && p[name.size()] == '=')
      return std::string_view(p).substr(name.size() + 1);
  return std::nullopt;
}

// The Debian offer for the set's offline image, when there is one: stale
// (out.stale) or a declined line; false when no offer concerns the image.
bool judge_debian(const Current& current, const std::vector<Offer>& offers, Policy policy, Decision& out,
                  const std::function<void(std::string)>& decline) {
  for (const Offer& o : offers) {
    if (!o.debian || image_key(o.image) != image_key(current.image)) continue;
    const std::string what = "image " + o.image + " (" + o.feed + ", " + o.detail + ")";
    if (!current.image_record) {
      decline(what + ": nothing records what the image was made from here (`orchestrate images build` records it)");
      return true;
    }
    if (!o.missing.empty()) {
      decline(what + ": the suite no longer has " + util::join(o.missing, ", ") + ": the image cannot be made again");
      return true;
    }
    std::vector<std::string> changes;
    for (const std::string& p : o.packages) {
      const std::string_view name = std::string_view(p).substr(0, p.find('='));
      const std::string_view now = std::string_view(p).substr(name.size() + 1);
      const auto then = version_in(current.image_record->packages, name);
      if (!then || *then != now)
        changes.push_back(std::string(name) + " " + (then ? std::string(*then) : std::string("(none)")) + " -> " +
                          std::string(now));
    }
    const auto recorded = version_in(current.image_record->packages, "nvidia-cuda-toolkit");
    const auto then_release = recorded ? cuda_release_of(*recorded) : std::nullopt;
    if (!changes.empty() && o.toolkit.size() >= 2 && then_release && o.toolkit != *then_release) {
      if (o.toolkit.truncated(2) != then_release->truncated(2)) {
        decline(what + ": the suite now packages CUDA " + o.toolkit.str() + ", and the image is made for CUDA " +
                then_release->truncated(2).str() + ": the image catalog needs an image for " +
                o.toolkit.truncated(2).str());
        return true;
      }
      if (!policy_allows(policy, *then_release, o.toolkit)) {
        decline(what + ": CUDA " + then_release->str() + " -> " + o.toolkit.str() + ": policy " +
                std::string(to_string(policy)) + " takes no new toolkit");
        return true;
      }
    }
    if (!changes.empty()) {
      out.stale = true;
      out.take = o;
      out.make_image = true;
      out.reason = o.detail + ": " + util::join(changes, ", ") + "; " + o.image + " is made again";
      return true;
    }
    // A host-mount image's digest carries the host toolkit after it
    // ("sha256:... + host cuda 13.0.88"): the image is the part before.
    const std::string built_in = current.image_digest.substr(0, current.image_digest.find(' '));
    if (!built_in.empty() && !current.image_record->id.empty() && current.image_record->id != built_in) {
      out.stale = true;
      out.take = o;
      out.reason = o.image + " was made again since this set was built (" + short_digest(built_in) +
                   " -> " + short_digest(current.image_record->id) + ")";
    }
    return true;
  }
  return false;
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
  const auto reference = digest::ImageReference::parse(image);
  if (!reference || !reference->tag()) return recorded;
  const auto tag = parse_cuda_tag(*reference->tag());
  if (tag && tag->toolkit.truncated(2) == recorded.truncated(2)) return tag->toolkit;
  return recorded;
}

std::string image_key(std::string_view reference) {
  const auto parsed = digest::ImageReference::parse(reference);
  if (!parsed || parsed->domain().empty()) return std::string(reference);
  return parsed->to_string().substr(parsed->domain().size() + 1);
}

Decision decide(const Current& current, const std::vector<Offer>& offers, Policy policy,
                const std::vector<Probe>& probes) {
  Decision out;
  // A set that records only major.minor cannot tell a patch release from
  // what it was built with.
  const bool patch_known = current.toolkit.size() >= 3;
  const Offer* best = nullptr;
  const auto decline_for = [&out](std::optional<util::Version> toolkit, std::string line) {
    if (std::ranges::find(out.declined, line) != out.declined.end()) return;
    out.declined.push_back(std::move(line));
    out.declined_toolkits.push_back(std::move(toolkit));
  };
  const auto decline = [&](std::string line) { decline_for(std::nullopt, std::move(line)); };
  const auto some_image_offers = [&](const util::Version& toolkit) {
    return std::ranges::any_of(offers,
                               [&](const Offer& o) { return !o.debian && !o.image.empty() && o.toolkit == toolkit; });
  };
  for (const Offer& o : offers) {
    if (o.debian) continue;  // judged against the image's record below
    if (o.toolkit.size() < 2) continue;  // a cuDNN offer for a CUDA major: no toolkit of its own
    if (!(current.toolkit < o.toolkit)) continue;
    if (o.image.empty() && some_image_offers(o.toolkit)) continue;  // the image offer speaks for it
    const std::string what = "CUDA " + o.toolkit.str() + " (" + o.feed + ")";
    if (!patch_known && o.toolkit.truncated(2) == current.toolkit.truncated(2)) {
      decline_for(o.toolkit, what + ": the set records CUDA " + current.toolkit.str() +
                                 " without its patch level, so a patch release cannot be told from it");
      continue;
    }
    if (!policy_allows(policy, current.toolkit, o.toolkit)) {
      const std::string stays = policy == Policy::pinned ? "takes no new toolkit"
                                : policy == Policy::minor
                                    ? "stays on CUDA " + std::to_string(current.toolkit.major()) + ".x"
                                    : "stays on CUDA " + current.toolkit.truncated(2).str() + ".x";
      decline_for(o.toolkit, what + ": policy " + std::string(to_string(policy)) + " " + stays);
      continue;
    }
    if (current.cuda && !current.cuda->contains(o.toolkit)) {
      decline_for(o.toolkit, what + ": outside the recipe's cuda range " + current.cuda->text());
      continue;
    }
    const Probe* probe = find_probe(probes, o.digest);
    if (probe && probe->nvcc.truncated(2) != o.toolkit.truncated(2)) {
      decline_for(o.toolkit, what + ": its image's nvcc is " + probe->nvcc.str() + " (probed), not CUDA " +
                                 o.toolkit.truncated(2).str());
      continue;
    }
    const compat::Toolkit* row = compat::find_toolkit(o.toolkit);
    if (!row && !probe && o.image.empty()) {
      decline_for(o.toolkit, what + ": not in the toolkit tables, and no watched image offers it to probe");
      continue;
    }
    if (row && !row->released) {
      decline_for(o.toolkit, what + ": the tables say CUDA " + row->version.str() + " was never released");
      continue;
    }
    if (!current.allowed.empty() && std::ranges::none_of(current.allowed, [&](const util::Version& v) {
          return v.truncated(2) == o.toolkit.truncated(2);
        })) {
      decline_for(o.toolkit, what + ": not among the configuration's toolkits");
      continue;
    }
    if (current.driver && (!row || !row->driver_meets_minimum(*current.driver))) {
      decline_for(o.toolkit,
                  what + ": tier " + current.tier + "'s driver " + current.driver->str() +
                      " is older than its minimum " +
                      (!row || row->min_driver.empty() ? std::string("(not known)") : row->min_driver.str()));
      continue;
    }
    const std::vector<std::string> gone = probe ? dropped_by_probe(*probe, current.gpus)
                                          : row ? dropped(*row, current.gpus)
                                                : std::vector<std::string>{};
    if (!gone.empty()) {
      const compat::Toolkit* last = last_serving(current.gpus);
      decline_for(o.toolkit, what + ": drops " + util::join(gone, ", ") + ", which tier " + current.tier + " needs" +
                                 (probe ? " (its nvcc --list-gpu-code, probed)" : "") +
                                 "; the last toolkit that serves the tier is " +
                                 (last ? "CUDA " + last->version.str() : std::string("none")));
      continue;
    }
    if (o.image.empty()) {
      decline_for(o.toolkit, what + ": released, but no watched image offers it yet");
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
  if (judge_debian(current, offers, policy, out, decline)) return out;
  // The same image rebuilt under its tag.
  for (const Offer& o : offers) {
    if (o.debian || o.image.empty() || image_key(o.image) != image_key(current.image) || current.image_digest.empty()) continue;
    if (o.digest == current.image_digest) continue;
    out.stale = true;
    out.take = o;
    out.reason =
        "base image moved: " + o.image + " " + short_digest(current.image_digest) + " -> " + short_digest(o.digest);
    return out;
  }
  return out;
}

const std::string* Decision::declined_for(const util::Version& toolkit) const {
  for (std::size_t i = 0; i < declined.size() && i < declined_toolkits.size(); ++i)
    if (declined_toolkits[i] == toolkit) return &declined[i];
  return nullptr;
}

}  // namespace orc::watch
