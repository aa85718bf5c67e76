#pragma once
// The watcher's feeds (issue 14): each reads one source and says what it
// offers now, behind one interface, so a decision never cares where an offer
// came from and one failing feed never stops the others.
//   - An OCI registry repository (nvidia/cuda, or a mirror of it): its tag
//     list (Link pagination followed) and, for each tag the feed's filter
//     keeps, the tag's manifest digest, so a rebuilt base under an old tag
//     is a change too.
//   - NVIDIA's redistributable index: the redistrib_X.Y.Z.json manifests of
//     a directory (CUDA or cuDNN) and the versions each names.
//   - A Debian archive's package index, for our offline images (debian.hpp).
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/net/http.hpp"
#include "orchestrator/registry/client.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::watch {

// One thing a source offers: a toolkit (with the cuDNN it carries, when it
// says), and for images the reference and manifest digest.
struct Offer {
  std::string feed;                    // the feed's name()
  util::Version toolkit;               // 13.0.2 (the toolkit's release, not nvcc's build number)
  std::optional<util::Version> cudnn;  // 9.14.0.64; a flavour tag gives only the major ("cudnn9" -> 9)
  std::string image;                   // "127.0.0.1:5000/nvidia/cuda:13.0.2-cudnn-devel-ubuntu24.04"; empty for redist
  std::string digest;                  // "sha256:..." of the tag's manifest; empty for redist
  std::string detail;                  // "devel ubuntu24.04", "redistrib_13.0.2.json (2025-10-09)"
  // The image-catalog feed (debian.hpp): `image` is one of our offline
  // images and these say what the Debian archive would install in it now.
  bool debian = false;
  std::vector<std::string> packages;  // "nvidia-cuda-toolkit=12.4.131~12.4.1-2", one per catalog package found
  std::vector<std::string> missing;   // catalog packages the suite no longer has
};

class Feed {
 public:
  virtual ~Feed() = default;
  virtual std::string name() const = 0;
  // Everything the source offers now; an error says what failed (the feed
  // is then skipped for this cycle).
  virtual std::expected<std::vector<Offer>, std::string> poll() = 0;
};

// nvidia/cuda's tag scheme: VERSION[-cudnn|-cudnnN]-FLAVOUR-OS, FLAVOUR one
// of base, runtime, devel ("13.0.2-cudnn-devel-ubuntu24.04",
// "11.8.0-cudnn8-runtime-ubuntu22.04", "12.6.3-base-ubuntu24.04"). nullopt
// for any other tag ("latest", "13.0.2-tensorrt-devel-ubuntu24.04").
struct CudaTag {
  util::Version toolkit;
  std::optional<std::string> cudnn;  // "cudnn", "cudnn8", "cudnn9"
  std::string flavour;               // "devel"
  std::string os;                    // "ubuntu24.04"
};
std::optional<CudaTag> parse_cuda_tag(std::string_view tag);

// Which tags of a registry feed count: `flavour` and `os` when not empty
// ("devel", "ubuntu22.04"), and whether a cuDNN variant is wanted.
struct TagFilter {
  std::string flavour = "devel";
  std::string os;
  bool cudnn = false;
  bool keeps(const CudaTag& tag) const;
};

// A registry repository as a feed; `options.url` names it
// ("http://127.0.0.1:5000/nvidia/cuda"). `page_size` 0 lets the registry
// choose how many tags a page of the list holds. A repository with no tag
// the filter keeps is a failed poll that says what was expected.
std::unique_ptr<Feed> registry_feed(registry::ClientOptions options, TagFilter filter,
                                    std::shared_ptr<net::Transport> transport, std::size_t page_size = 0);

// What one redistrib_X.Y.Z.json says: its product ("cuda", "cudnn"), label
// (13.0.2), release date and the version of each component ("cuda_nvcc":
// "13.0.88", "cudnn": "9.14.0.64").
struct RedistManifest {
  std::string product;
  util::Version label;
  std::string release_date;
  std::vector<std::pair<std::string, std::string>> components;  // as the file orders them
  std::vector<std::string> cuda_variants;                       // cuDNN: the CUDA majors it has builds for
  std::optional<std::string> component(std::string_view name) const;
};
std::expected<RedistManifest, std::string> parse_redistrib(std::string_view json);
// The redistrib_X.Y.Z.json names a directory listing links to, in order,
// each once (NVIDIA's index pages and Python's http.server both write
// <a href="redistrib_13.0.2.json">). As many as the page links: the listing
// is a held response (4 MiB at most), and the feed refuses one that links
// more than k_max_redist_manifests.
std::vector<std::string> redistrib_names(std::string_view listing);
// The most manifests a redist feed follows (one GET each).
inline constexpr std::size_t k_max_redist_manifests = 512;

// NVIDIA's redistributable index as a feed: `base_url` is the directory
// (".../compute/cuda/redist/" or ".../compute/cudnn/redist/"). CUDA
// manifests become toolkit offers; cuDNN manifests become cuDNN offers for
// each CUDA major they have builds for (`cuda_variant`), with the toolkit
// left as that major. A page that links no manifest, more than
// k_max_redist_manifests, or manifests of neither is a failed poll.
std::unique_ptr<Feed> redist_feed(std::string base_url, std::shared_ptr<net::Transport> transport);

}  // namespace orc::watch
