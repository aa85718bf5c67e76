#pragma once
// `orchestrate images push NAME...|--all`: the build images `images build`
// made, from the engine to the remote as OCI images, so a cluster can pull
// them (k8s render's build Jobs name them by digest).
//
//   repository  <remote>/<the image's own repository>: with the remote
//               http://HOST/team/artifacts, orchestrate/cuda:12.4-trixie goes
//               to HOST/team/artifacts/orchestrate/cuda:12.4-trixie
//   manifest    OCI image manifest; config the engine's own image config
//               (so its digest is the image ID), layers as the engine's
//               archive holds them (uncompressed tars: a layer's digest is
//               its diff ID)
//
// The image is read once, as it streams from the engine (GET
// /images/{id}/get), each layer spooled to one file under <cache>/tmp while
// it is hashed, then pushed (blobs the registry has are not sent) and
// removed. The pushed reference with its manifest digest is recorded in the
// image's record (site/image_state.hpp); a push of an image recorded as
// pushed there, whose manifest the remote still has, sends nothing.
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/util/diagnostic.hpp"

namespace orc::app {

struct ImagePushRequest {
  std::vector<std::string> names;                      // catalog names or references
  bool all = false;                                    // every image the state file records
  std::filesystem::path config;                        // its `remote:` (ORCHESTRATE_REMOTE wins); may be absent
  std::optional<std::filesystem::path> engine_socket;  // else discovered
  std::optional<std::filesystem::path> state_file;     // default site::image_state_path()
};

struct PushedImage {
  std::string name;         // "12.4-trixie"
  std::string reference;    // in the engine: "orchestrate/cuda:12.4-trixie"
  std::string pushed;       // "HOST/REPO@sha256:..."
  std::uint64_t bytes = 0;  // of the layers and config
  int uploaded = 0;         // blobs sent
  int skipped = 0;          // blobs the registry had
  bool up_to_date = false;  // recorded and still there: nothing read or sent
};

struct ImagePushReport {
  std::string remote;  // without credentials
  std::vector<PushedImage> images;
  util::ExitCode exit_code = util::ExitCode::ok;
};

// "HOST[:PORT]/REPO/<the image's repository>" for a remote URL and a
// local reference ("orchestrate/cuda:12.4-trixie"): what a pod pulls,
// before "@sha256:...". Throws util::Failure (bad input) for a malformed
// remote.
std::string pushed_repository(std::string_view remote_url, std::string_view reference);

// Throws util::Failure: bad_input for an unknown or unbuilt image, an image
// the engine no longer has as it was built, no remote; outside_failure for
// the engine or the registry.
ImagePushReport push_images(const ImagePushRequest& request, std::ostream& progress);

}  // namespace orc::app
