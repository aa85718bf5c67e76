#pragma once
// The image-catalog feed (issue 14): what a Debian archive offers now for
// the packages of our offline build images (images/offline/, the catalog in
// compat/image_catalog.cpp). Each image's suite and components are read from
// the archive's own index, dists/SUITE/COMPONENT/binary-amd64/Packages(.xz,
// .gz), the file apt reads, so a new nvidia-cuda-toolkit (or g++) in the
// suite shows up the way a new registry tag does: as an offer naming the
// image and the version of each of its packages.
#include <compare>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/net/http.hpp"
#include "orchestrator/util/version.hpp"
#include "orchestrator/watch/feeds.hpp"

namespace orc::watch {

// dpkg's order of two version strings ([epoch:]upstream[-revision]; '~'
// sorts before everything, even the end): "12.4.131~12.4.1-2" <
// "12.4.131~12.4.1-2+b1" < "1:1.0".
std::strong_ordering compare_debian_versions(std::string_view a, std::string_view b);

// The CUDA release a Debian nvidia-cuda-toolkit version packages: Debian
// writes NVCC_VERSION~RELEASE ("11.8.89~11.8.0-5~deb12u1" is CUDA 11.8.0,
// "12.4.131~12.4.1-2" 12.4.1); without the '~' part the upstream version
// itself. nullopt when neither parses.
std::optional<util::Version> cuda_release_of(std::string_view debian_version);

// An offline image as the feed watches it.
struct WatchedImage {
  std::string name;                     // "12.4-trixie"
  std::string reference;                // "orchestrate/cuda:12.4-trixie"
  std::string suite;                    // "trixie"
  std::vector<std::string> components;  // "main", "contrib", "non-free"
  std::vector<std::string> packages;    // the catalog's: "nvidia-cuda-toolkit", "g++-13", ...
};

// The Debian archive at `mirror` ("http://deb.debian.org/debian", or a
// copy on 127.0.0.1) as a feed: one offer per image, `debian` set, with
// the newest version (dpkg's order) of each catalog package the suite's
// components hold for amd64 (or all) in `packages` ("name=version"), the
// ones it lacks in `missing`, and for an image with nvidia-cuda-toolkit
// the CUDA release it packages as `toolkit`. Each index is read once per
// poll however many images share it, as it streams in (packages_index.hpp).
// A poll fails when an image's indexes hold none of its packages (an empty
// index, a page that is no index): that is no archive to judge by.
std::unique_ptr<Feed> debian_feed(std::string mirror, std::vector<WatchedImage> images,
                                  std::shared_ptr<net::Transport> transport);

}  // namespace orc::watch
