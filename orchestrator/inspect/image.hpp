#pragma once
// Container images read as streams (issue 16): each layer is a tar stream
// (plain, gzip, zstd or xz) read once, as it arrives, never written whole
// anywhere. What a layer holds is kept per (path, layer): its entries (for
// the merge of layers.hpp), the reports of its ELF files (as inspect_files
// makes them) and the few small text files the bill of materials reads.
// Only at the end, once the layer order is known (an image archive names
// it in manifest.json, which `docker save` writes after the layers), are
// the layers applied and the files a later layer deleted or replaced left
// out.
//
// Refused, with the layer and entry named: a name with a '..' component,
// a hard link out of the image, a regular file over 4 GiB, more paths or
// more bytes of names than any image has (LayerMerge's and this file's
// caps: names are kept once, in a PathTree). Nothing is written for a refused layer: the scan keeps
// only what it read, in memory (members over 64 MiB in an unnamed
// temporary file, as package.hpp says).
//
// Read: ELF files (shared objects, executables, cubins) and standalone
// fatbins. Static libraries and object files are for linking, which does
// not happen in a running container; wheels in a pip cache are not what
// the image runs; neither is opened.
#include <atomic>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/inspect/bom_text.hpp"
#include "orchestrator/inspect/inspection.hpp"
#include "orchestrator/inspect/package.hpp"
#include "orchestrator/inspect/path_tree.hpp"

namespace orc::inspect {

struct ImageContent {
  // The files that hold device code or link a CUDA runtime, as the layers
  // left them; paths are absolute in the image ("/usr/lib/x.so").
  std::vector<FileReport> files;
  // The non-directory paths whose names the bill of materials and the needs
  // read (bom_path(): CUDA libraries' files and links, wheels' .dist-info
  // entries), absolute, sorted; a link's target is in `links`.
  std::vector<std::string> paths;
  std::map<std::string, std::string> links;  // symbolic link -> its target, as stored
  // The links of `links` that lead to no file of the image (a target
  // missing, or out of the image's root): no library the image carries.
  std::map<std::string, std::string> dangling;
  // What the bill of materials read from dpkg's status and version.json
  // files (bom_text.hpp), by absolute path; and what it did not read.
  std::map<std::string, BomEvidence> evidence;
  std::vector<std::string> unread;
  // Files with device code that an upper layer deleted or replaced, with
  // the layer (1-based) that held them: "/usr/lib/libold.so (layer 2)".
  std::vector<std::string> hidden;
  std::size_t layers = 0;
  std::uint64_t layer_bytes = 0;  // every layer's bytes as they streamed (compressed where they are)
};

struct ImageError {
  std::string message;   // names the layer and the entry; untrusted names escaped
  bool refused = false;  // the content was refused (hostile, malformed), not cut short
};

class ImageScanner {
 public:
  explicit ImageScanner(InspectOptions options);
  ~ImageScanner();
  ImageScanner(const ImageScanner&) = delete;
  ImageScanner& operator=(const ImageScanner&) = delete;

  // Reads one layer to its end (past the tar's end blocks), keyed by `id` (its digest, or its path in
  // an image archive). Several layers may be read at once, from several
  // threads. An error leaves the scanner unusable.
  std::expected<void, ImageError> add_layer(const std::string& id, const StreamRead& read);
  // The image's files with the layers applied in `order` (ids given to
  // add_layer, bottom first; one may repeat). Once: the layers' reports
  // move into the content.
  std::expected<ImageContent, ImageError> finish(const std::vector<std::string>& order);

  // Bytes of names (components and link targets) and of the paths the
  // scan keeps (reports, bill-of-materials paths): far above any image's.
  static constexpr std::uint64_t k_max_name_bytes = 64ull << 20;
  static constexpr std::uint64_t k_max_kept_bytes = 64ull << 20;
  // Docker stacks at most 127; an archive of a million tiny "layers" is no
  // image.
  static constexpr std::size_t k_max_layers = 4096;

 private:
  struct Layer;
  // The entry being read: a regular file's node and path.
  struct Current {
    std::optional<PathTree::Id> node;
    std::string path;   // absolute
    bool text = false;  // bom_text()
  };
  // Records an entry in `layer`; a message refuses it.
  std::optional<std::string> record(Layer& layer, const std::string& where, const EntryInfo& e, Current& current);
  // Counts `bytes` more kept; false past k_max_kept_bytes.
  bool keep(std::uint64_t bytes);
  InspectOptions m_options;
  std::map<std::string, std::unique_ptr<Layer>> m_layers;
  std::mutex m_mutex;  // guards m_layers, m_tree and m_link_bytes
  PathTree m_tree;
  std::uint64_t m_link_bytes = 0;
  BomTexts m_texts;
  std::atomic<std::size_t> m_entries = 0;
  std::atomic<std::size_t> m_started = 0;  // layers added
  std::atomic<std::uint64_t> m_kept = 0;   // bytes of the paths kept
};

// An image archive as the Engine API's GET /images/{name}/get and
// `docker save` write it (Docker 25 and later: an OCI layout with
// manifest.json beside it; earlier Docker and Podman: <id>/layer.tar and
// <id>.json), read as one stream: layers scanned as they come, the order
// and the config from manifest.json's first image.
struct ImageArchive {
  ImageContent content;
  std::string config;  // the image config's JSON, as stored
};
std::expected<ImageArchive, ImageError> scan_image_archive(const StreamRead& read, const InspectOptions& options);

}  // namespace orc::inspect
