#pragma once
// The watcher's decision for one recipe x tier (issue 14): what its newest
// verified artifact set was built with, against what the feeds offer now,
// under the recipe's update policy. Pure: the feeds are polled and the store
// read by the caller.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"
#include "orchestrator/util/version.hpp"
#include "orchestrator/watch/feeds.hpp"
#include "orchestrator/watch/probe.hpp"

namespace orc::watch {

// How far a recipe follows new toolkits: patch (default) takes 12.4.0 ->
// 12.4.1, minor 12.4 -> 12.6, major 12.x -> 13.x; pinned takes none, and
// only a moved base image (the same tag rebuilt) triggers. The moved-image
// rule needs the registry digest of the set's image, which builds do not
// record yet (official images record none, our own the engine's image ID).
enum class Policy { patch, minor, major, pinned };
std::string_view to_string(Policy policy);
std::optional<Policy> parse_policy(std::string_view text);

// What the newest verified set of a recipe x tier was built with (its
// manifest), and what the plan asks of a toolkit.
struct Current {
  std::string recipe;
  std::string tier;
  util::Version toolkit;                      // the build's toolkit, as full as the manifest has it (12.4.1)
  std::string image;                          // the build image's reference; "host" for the host engine
  std::string image_digest;                   // empty when unknown
  std::vector<arch::ComputeCapability> gpus;  // the tier's CCs, which a new toolkit must still compile for
  std::optional<util::VersionRange> cuda;     // the recipe's `cuda:` range
  std::vector<util::Version> allowed;         // the configuration's `toolkits:` (major.minor); empty: any
  std::optional<util::Version> driver;        // the tier's `driver:`
  // For a set built in one of our offline images: what `images build`
  // recorded of that image here (its engine ID now and the "name=version"
  // of its catalog packages); nullopt when nothing was recorded.
  struct ImageRecord {
    std::string id;
    std::vector<std::string> packages;
  };
  std::optional<ImageRecord> image_record;
};

// The toolkit a set was built with, as precisely as it can be known: the
// manifest records the table row (13.0); an nvidia/cuda-scheme image tag of
// the same minor gives the patch level (12.4.1 from
// "docker.io/nvidia/cuda:12.4.1-devel-ubuntu22.04").
util::Version built_release(const util::Version& recorded, std::string_view image);

// "nvidia/cuda:12.4.1-devel-ubuntu22.04" from "docker.io/nvidia/cuda:...",
// "127.0.0.1:5000/nvidia/cuda:..." or "registry-1.docker.io/nvidia/cuda:...":
// the repository path and tag without the registry host, so a mirror's tag
// and the official one compare equal.
std::string image_key(std::string_view reference);

struct Decision {
  bool stale = false;
  std::optional<Offer> take;          // what to rebuild with, when stale
  std::string reason;                 // "CUDA 12.4.0 -> 12.4.1 (registry ...)", "base image moved: ..."
  std::vector<std::string> declined;  // newer offers not taken, each with why
  // Beside `declined`: the release each line declines (none for a line
  // about an image of the Debian archive).
  std::vector<std::optional<util::Version>> declined_toolkits;
  bool unprobed = false;              // `take` is judged by no table row or probe yet: probe before use
  bool make_image = false;            // `take` is a Debian offer: make the offline image again first

  // Why `toolkit` was declined; nullptr when it was not.
  const std::string* declined_for(const util::Version& toolkit) const;
};

// `probes` are what images' own nvcc said (probe.hpp), by registry digest:
// an offer whose image was probed is judged by its probe (its nvcc's
// release must be the tag's, its --list-gpu-code must hold every GPU of
// the tier), not by the table's row;
// A Debian offer (debian.hpp) for the set's offline image makes the pair
// stale when the archive's version of a catalog package differs from the
// image's record (`make_image`: the image is made again, then the pair
// rebuilt in it), or when the image was made again since the set was built;
// a Debian toolkit of another minor than the image's is declined (the
// catalog needs an image for it), as is a patch release under `pinned`. an offer of a release the tables do
// not know, or whose row's archs are unconfirmed, is taken only as
// `unprobed` until its image is probed (the watcher probes before it
// builds, then decides again).
Decision decide(const Current& current, const std::vector<Offer>& offers, Policy policy,
                const std::vector<Probe>& probes = {});

}  // namespace orc::watch
