#pragma once
// The build-image catalog: which container image compiles for a toolkit (and
// cuDNN). Two kinds of image serve a toolkit:
//   - the official nvidia/cuda images (cuda-compat.md section 7), for sites
//     that can pull from docker.io or nvcr.io;
//   - images this project builds itself from Debian packages
//     (`orchestrate images build NAME`), for sites with no registry: two carry
//     Debian's non-free nvidia-cuda-toolkit, one bind-mounts the host's own
//     toolkit read-only and serves whatever version that is.
// Pure data and lookup; which images exist in an engine is app/images/images.hpp's.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/compat/cudnn.hpp"
#include "orchestrator/compat/toolkit_parts.hpp"
#include "orchestrator/compat/toolkits.hpp"
#include "orchestrator/util/version.hpp"

namespace orc::compat {

enum class ImageSource {
  offline,     // built here from Debian packages, toolkit inside
  official,    // nvidia/cuda from a registry
  host_mount,  // built here, toolkit bind-mounted from the host at run time
};
std::string_view to_string(ImageSource source);

// Which kind of image a site wants first. offline_first is the default: a
// site without a registry cannot pull nvidia/cuda, and our images are made
// from the Debian mirror it does have.
enum class ImagePreference { offline_first, official };
std::string_view to_string(ImagePreference preference);
// "offline" (or "offline-first"), "official"; anything else -> nullopt.
std::optional<ImagePreference> parse_image_preference(std::string_view text);

inline constexpr std::string_view k_docker_hub_cuda = "docker.io/nvidia/cuda";
inline constexpr std::string_view k_ngc_cuda = "nvcr.io/nvidia/cuda";
inline constexpr std::string_view k_offline_repository = "orchestrate/cuda";
inline constexpr std::string_view k_default_host_cuda = "/usr/local/cuda";

// One minor release's newest nvidia/cuda tag: the registries keep only the
// last patch of each minor, so older patches are not listed.
struct OfficialImage {
  util::Version cuda;              // 12.4.1
  std::string_view os;             // "ubuntu22.04"
  bool has_cudnn = true;           // a cudnn*-devel flavour exists (12.8.2 has none)
  std::string_view cudnn_version;  // NV_CUDNN_VERSION of the cudnn flavour; empty = not recorded
  std::string_view source;

  // "12.4.1-cudnn-devel-ubuntu22.04" when `with_cudnn` and a flavour exists,
  // else "12.4.1-devel-ubuntu22.04".
  std::string tag(bool with_cudnn) const;
  std::string reference(bool with_cudnn, std::string_view registry = k_docker_hub_cuda) const;
};

// The cuDNN part of a tag for a CUDA version: "cudnn8" for 11.x-12.2,
// "cudnn9" for 12.3, "cudnn" from 12.4.
std::string_view cudnn_flavor(const util::Version& cuda);

std::span<const OfficialImage> official_images();                        // ascending
const OfficialImage* find_official_image(const util::Version& toolkit);  // by major.minor

// An image built from a debootstrap root file system: the suite and
// packages say what goes in; images/offline/<name>/setup.sh puts it there.
struct OfflineImage {
  std::string_view name;                   // "11.8-bookworm": the tag and the images/offline/ folder
  std::string_view suite;                  // Debian suite for debootstrap
  std::string_view components;             // debootstrap --components ("main,contrib,non-free")
  std::vector<std::string_view> packages;  // installed by setup.sh
  // The toolkit inside, major.minor; empty for the host-mount image, whose
  // toolkit is the host's (found at run time with nvcc --version).
  util::Version toolkit;
  std::string_view nvcc;           // "/usr/bin/nvcc", "/usr/local/cuda/bin/nvcc"
  std::string_view host_compiler;  // for nvcc -ccbin / CUDAHOSTCXX
  bool host_mount = false;         // needs the host's CUDA bind-mounted at /usr/local/cuda
  std::string_view summary;
  // The parts of compat's table its packages do not install (what
  // nvidia-cuda-toolkit pulls in through nvidia-cuda-dev's Depends); a plan
  // whose recipe needs one never picks the image. Empty for the host-mount
  // image, which has what the host's toolkit has (HostCuda::inventory).
  std::vector<ToolkitPart> lacks;

  std::string reference() const;  // "orchestrate/cuda:11.8-bookworm"
};

std::span<const OfflineImage> offline_images();
// By name ("host-bookworm") or reference ("orchestrate/cuda:host-bookworm").
const OfflineImage* find_offline_image(std::string_view name);
std::vector<std::string> offline_image_names();

struct ImageMount {
  std::string host;
  std::string container;
  bool read_only = true;
};

// What the image chosen for a plan is, and how it differs from the plan.
struct ImageChoice {
  std::string reference;
  ImageSource source = ImageSource::offline;
  util::Version toolkit;             // what the image's nvcc is (12.4.1, 11.8, the host's 13.0)
  std::optional<std::string> cudnn;  // the cuDNN the image carries; nullopt: none
  std::vector<ImageMount> mounts;    // binds a container of this image needs
  std::string nvcc;
  std::string host_compiler;
  // Where the image differs from what was asked, in words: "carries no
  // cuDNN (the plan chose 9.8)".
  std::vector<std::string> notes;
};

// The host's toolkit, as `ROOT/bin/nvcc --version` reported it.
struct HostCuda {
  util::Version toolkit;
  std::string root{k_default_host_cuda};
  ToolkitInventory inventory;  // what the host's tree lacks (site::inspect_toolkit_tree)
};

// The image for `toolkit` and, when the framework uses it, `cudnn`.
// offline_first: a Debian-built image carrying the toolkit, else the
// host-mount image when the host's toolkit is this one, else the official
// tag. official: the official tag, else the offline ones. nullopt when no
// image serves the toolkit at all (12.7, 11.3, 13.3, anything before 11.0).
// An offline or host-mount image that lacks one of `needed` is passed over
// (the official devel tags carry every CUDA library and NCCL; their cuDNN is
// the cudnn flavour's, chosen by `cudnn`).
std::optional<ImageChoice> choose_image(const Toolkit& toolkit, const CudnnRelease* cudnn,
                                        ImagePreference preference = ImagePreference::offline_first,
                                        const std::optional<HostCuda>& host = std::nullopt,
                                        std::span<const ToolkitPart> needed = {});

// The offline and host-mount images for `toolkit` that lack a part of
// `needed`, each with what it lacks: "orchestrate/cuda:12.4-trixie lacks
// NCCL (libnccl.so, nccl.h)". Empty when none lacks anything needed.
std::vector<std::string> images_lacking(const Toolkit& toolkit, const std::optional<HostCuda>& host,
                                        std::span<const ToolkitPart> needed);
// Only the official tag (what a site with registry access would use).
std::optional<ImageChoice> official_choice(const Toolkit& toolkit, const CudnnRelease* cudnn);

// "Cuda compilation tools, release 13.0, V13.0.88" -> 13.0.88 (the V
// version, else the release); nullopt when the text has neither.
std::optional<util::Version> parse_nvcc_version(std::string_view nvcc_output);

}  // namespace orc::compat
