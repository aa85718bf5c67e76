#pragma once
// Where `orchestrate inspect` reads a whole image from (issue 16):
//   docker://REF                  an image of the local engine, streamed out
//                                 through the Engine API (GET /images/REF/get)
//   oci://HOST[:PORT]/REPO:TAG    a registry image, each layer streamed from
//   oci://HOST/REPO@sha256:...    the registry, never written whole to disk
//                                 (HTTPS; plain HTTP for 127.0.0.1, ::1 and
//                                 localhost; oci+http:// forces plain HTTP)
//   DIR                           an unpacked root file system, or a directory
//                                 of wheels and tarballs
// A multi-platform index is read for linux/amd64.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "orchestrator/digest/image_reference.hpp"
#include "orchestrator/inspect/image.hpp"
#include "orchestrator/inspect/inspection.hpp"

namespace orc::app {

enum class ImageSourceKind { docker, registry, directory };

struct ImageSource {
  ImageSourceKind kind = ImageSourceKind::directory;
  // The argument as written, less the USER:PASSWORD@ of oci://USER:PASSWORD@HOST/...:
  // the one form messages, reports and stamp's output print.
  std::string given;
  std::string reference;    // docker: the engine's reference; registry: the tag or digest
  // docker: `reference` parsed, when it parses (an image ID parses as a
  // repository without tag); registry: HOST[:PORT]/PATH[:TAG][@DIGEST],
  // without credentials.
  std::optional<digest::ImageReference> image;
  // registry: "http://127.0.0.1:5000/team/cuda", with the credentials given
  // (the client takes them out and sends them): never printed.
  std::string registry;
  std::filesystem::path directory;
};

// nullopt when `arg` is neither a scheme above nor a directory (a file);
// throws util::Failure (bad_input) for a malformed docker:// or oci://.
std::optional<ImageSource> parse_image_source(std::string_view arg);

struct ScannedImage {
  std::string source;    // as given
  std::string identity;  // the image ID (docker), the manifest digest (registry); empty for a directory
  inspect::ImageContent content;
  std::string config;          // the image config's JSON; empty for a directory
  double seconds = 0;          // the scan's wall time
};

// Throws util::Failure: bad_input (2) for content refused or damaged, an
// image the engine does not have; outside_failure (3) when the engine or
// the registry fails or serves bytes that do not match their digest.
ScannedImage scan_image(const ImageSource& source, const inspect::InspectOptions& options);

}  // namespace orc::app
