#include "orchestrator/compat/image_catalog.hpp"

#include <algorithm>
#include <array>

#include "orchestrator/util/diagnostic.hpp"

namespace orc::compat {

namespace {

struct OfficialRow {
  std::string_view cuda;
  std::string_view os;
  bool has_cudnn;
  std::string_view cudnn_version;
  std::string_view source;
};

constexpr bool k_cudnn = true;
constexpr bool k_no_cudnn = false;

// cuda-compat.md section 7: the newest patch of each minor in NVIDIA's
// supported-tags list (the newer stored revision where it moved on: 12.8.2,
// 13.0.3, 13.1.2, 13.2.1). Ubuntu 22.04 where it exists (from 11.7.1),
// 20.04 before. NV_CUDNN_VERSION from section 7's table; for 13.0.3, 13.1.2
// and 13.2.1 from their dist/<ver>/ubuntu2204/devel/cudnn/Dockerfile (the
// GitHub mirror the reference reads); not recorded for 11.0-11.7. 11.3 has no
// image left, nor 12.7 (never shipped), 13.3 or 13.4 (none listed yet).
constexpr std::array k_official_rows = {
    OfficialRow{"11.0.3", "ubuntu20.04", k_cudnn, "", "supported-tags (ubuntu20.04)"},
    OfficialRow{"11.1.1", "ubuntu20.04", k_cudnn, "", "supported-tags (ubuntu20.04)"},
    OfficialRow{"11.2.2", "ubuntu20.04", k_cudnn, "", "supported-tags (ubuntu20.04)"},
    OfficialRow{"11.4.3", "ubuntu20.04", k_cudnn, "", "supported-tags (ubuntu20.04)"},
    OfficialRow{"11.5.2", "ubuntu20.04", k_cudnn, "", "supported-tags (ubuntu20.04)"},
    OfficialRow{"11.6.2", "ubuntu20.04", k_cudnn, "", "supported-tags (ubuntu20.04)"},
    OfficialRow{"11.7.1", "ubuntu22.04", k_cudnn, "", "supported-tags (ubuntu22.04)"},
    OfficialRow{"11.8.0", "ubuntu22.04", k_cudnn, "8.9.6.50", "section 7 NV_CUDNN_VERSION"},
    OfficialRow{"12.0.1", "ubuntu22.04", k_cudnn, "8.8.0.121", "section 7 NV_CUDNN_VERSION"},
    OfficialRow{"12.1.1", "ubuntu22.04", k_cudnn, "8.9.0.131", "section 7 NV_CUDNN_VERSION"},
    OfficialRow{"12.2.2", "ubuntu22.04", k_cudnn, "8.9.6.50", "section 7 NV_CUDNN_VERSION"},
    OfficialRow{"12.3.2", "ubuntu22.04", k_cudnn, "9.0.0.312", "section 7 NV_CUDNN_VERSION"},
    OfficialRow{"12.4.1", "ubuntu22.04", k_cudnn, "9.1.0.70", "section 7 NV_CUDNN_VERSION"},
    OfficialRow{"12.5.1", "ubuntu22.04", k_cudnn, "9.2.1.18", "section 7 NV_CUDNN_VERSION"},
    OfficialRow{"12.6.3", "ubuntu22.04", k_cudnn, "9.5.1.17", "section 7 NV_CUDNN_VERSION"},
    OfficialRow{"12.8.2", "ubuntu22.04", k_no_cudnn, "", "section 7 newer revision: 12.8.2 has no cudnn flavour"},
    OfficialRow{"12.9.1", "ubuntu22.04", k_cudnn, "9.10.2.21", "section 7 NV_CUDNN_VERSION"},
    OfficialRow{"13.0.3", "ubuntu22.04", k_cudnn, "9.14.0.64", "dist/13.0.3/ubuntu2204/devel/cudnn/Dockerfile"},
    OfficialRow{"13.1.2", "ubuntu22.04", k_cudnn, "9.17.1.4", "dist/13.1.2/ubuntu2204/devel/cudnn/Dockerfile"},
    OfficialRow{"13.2.1", "ubuntu22.04", k_cudnn, "9.20.0.48", "dist/13.2.1/ubuntu2204/devel/cudnn/Dockerfile"},
};

util::Version version_of(std::string_view text) {
  auto v = util::Version::parse(text);
  if (!v) throw util::Failure(util::ExitCode::bad_input, "image catalog: bad version '" + std::string(text) + "'");
  return *v;
}

std::vector<OfficialImage> build_official() {
  std::vector<OfficialImage> table;
  for (const OfficialRow& row : k_official_rows) {
    OfficialImage image{.cuda = version_of(row.cuda),
                        .os = row.os,
                        .has_cudnn = row.has_cudnn,
                        .cudnn_version = row.cudnn_version,
                        .source = row.source};
    if (!table.empty() && !(table.back().cuda.truncated(2) < image.cuda.truncated(2)))
      throw util::Failure(util::ExitCode::bad_input,
                          "image catalog: official rows out of order at " + image.cuda.str());
    table.push_back(image);
  }
  return table;
}

// What the two Debian images lack of compat's part table, from the package
// lists (apt-cache show, dpkg-deb -c; bookworm 11.8.89~11.8.0-5~deb12u1 and
// trixie 12.4.127~12.4.1-2): nvidia-cuda-toolkit depends on nvidia-cuda-dev,
// which holds the headers and development links of cudart, cuBLAS(Lt),
// cuFFT, cuRAND, cuSPARSE, cuSOLVER, NPP, nvJPEG, NVRTC (and nvJitLink in
// 12.4) and depends on their libraries, libcupti-dev and libcu++-dev /
// libcub-dev / libthrust-dev. Neither image installs cuDNN (Debian's
// nvidia-cudnn only downloads it at install time) nor NCCL (bookworm has no
// libnccl-dev; trixie's contrib one is not in the image); nvJitLink began
// with CUDA 12.0.
const std::vector<ToolkitPart> k_bookworm_lacks = {ToolkitPart::nvjitlink, ToolkitPart::cudnn, ToolkitPart::nccl};
const std::vector<ToolkitPart> k_trixie_lacks = {ToolkitPart::cudnn, ToolkitPart::nccl};

// Debian's compilers that each toolkit's host_config.h accepts: CUDA 11.8
// takes GCC <= 11 (bookworm's default is 12), 12.4 takes <= 13 (trixie's
// default is 14). The host-mount image keeps bookworm's g++ 12, which CUDA
// 12.x and 13.x accept.
std::vector<OfflineImage> build_offline() {
  return {
      OfflineImage{.name = "11.8-bookworm",
                   .suite = "bookworm",
                   .components = "main,contrib,non-free",
                   .packages = {"nvidia-cuda-toolkit", "g++-11", "cmake", "make", "ninja-build", "python3"},
                   .toolkit = util::Version(11, 8),
                   .nvcc = "/usr/bin/nvcc",
                   .host_compiler = "g++-11",
                   .host_mount = false,
                   .summary = "Debian bookworm, non-free nvidia-cuda-toolkit 11.8, g++-11 (about 5.4 GB)",
                   .lacks = k_bookworm_lacks},
      OfflineImage{.name = "12.4-trixie",
                   .suite = "trixie",
                   .components = "main,contrib,non-free",
                   .packages = {"nvidia-cuda-toolkit", "g++-13", "cmake", "make", "ninja-build", "python3"},
                   .toolkit = util::Version(12, 4),
                   .nvcc = "/usr/bin/nvcc",
                   .host_compiler = "g++-13",
                   .host_mount = false,
                   .summary = "Debian trixie, non-free nvidia-cuda-toolkit 12.4, g++-13",
                   .lacks = k_trixie_lacks},
      OfflineImage{.name = "host-bookworm",
                   .suite = "bookworm",
                   .components = "main",
                   .packages = {"g++", "cmake", "make", "ninja-build", "python3"},
                   .toolkit = {},
                   .nvcc = "/usr/local/cuda/bin/nvcc",
                   .host_compiler = "g++",
                   .host_mount = true,
                   .summary = "Debian bookworm with g++; the host's /usr/local/cuda mounted read-only",
                   .lacks = {}},
  };
}

bool same_minor(const util::Version& a, const util::Version& b) { return a.truncated(2) == b.truncated(2); }

void note_cudnn(ImageChoice& choice, const CudnnRelease* wanted) {
  if (!wanted) return;
  const std::string planned = wanted->version.str();
  if (!choice.cudnn) {
    choice.notes.push_back(choice.reference + " carries no cuDNN (the plan chose " + planned +
                           "): the build must bring its own");
    return;
  }
  auto carried = util::Version::parse(*choice.cudnn);
  if (carried && !same_minor(*carried, wanted->version))
    choice.notes.push_back(choice.reference + " carries cuDNN " + *choice.cudnn + ", not the planned " + planned);
}

// The parts of `needed` an offline image lacks, as MissingParts naming the
// files a tree would hold; for the host-mount image, the host tree's.
std::vector<MissingPart> image_lacks(const OfflineImage& image, const std::optional<HostCuda>& host,
                                     std::span<const ToolkitPart> needed) {
  std::vector<MissingPart> out;
  if (image.host_mount) {
    if (host)
      for (const MissingPart* m : host->inventory.lacking(needed)) out.push_back(*m);
    return out;
  }
  for (const ToolkitPart p : needed) {
    if (std::ranges::find(image.lacks, p) == image.lacks.end()) continue;
    const ToolkitPartInfo& info = part_info(p);
    MissingPart missing{.part = p, .files = {}};
    for (const auto file : info.libraries) missing.files.emplace_back(file);
    for (const auto file : info.headers) missing.files.emplace_back(file);
    out.push_back(std::move(missing));
  }
  return out;
}

std::optional<ImageChoice> offline_choice(const Toolkit& toolkit, const CudnnRelease* cudnn,
                                          const std::optional<HostCuda>& host, std::span<const ToolkitPart> needed) {
  // A self-contained image first: it does not depend on what the host has.
  for (const OfflineImage& image : offline_images()) {
    if (image.host_mount || !same_minor(image.toolkit, toolkit.version)) continue;
    if (!image_lacks(image, host, needed).empty()) continue;
    ImageChoice choice{.reference = image.reference(),
                       .source = ImageSource::offline,
                       .toolkit = image.toolkit,
                       .nvcc = std::string(image.nvcc),
                       .host_compiler = std::string(image.host_compiler)};
    note_cudnn(choice, cudnn);
    return choice;
  }
  if (!host || !same_minor(host->toolkit, toolkit.version)) return std::nullopt;
  for (const OfflineImage& image : offline_images()) {
    if (!image.host_mount || !image_lacks(image, host, needed).empty()) continue;
    ImageChoice choice{.reference = image.reference(),
                       .source = ImageSource::host_mount,
                       .toolkit = host->toolkit,
                       .mounts = {ImageMount{.host = host->root, .container = std::string(k_default_host_cuda)}},
                       .nvcc = std::string(image.nvcc),
                       .host_compiler = std::string(image.host_compiler)};
    note_cudnn(choice, cudnn);
    return choice;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(ImageSource source) {
  switch (source) {
    case ImageSource::offline:
      return "offline";
    case ImageSource::official:
      return "official";
    case ImageSource::host_mount:
      return "host_mount";
  }
  return "?";
}

std::string_view to_string(ImagePreference preference) {
  return preference == ImagePreference::official ? "official" : "offline";
}

std::optional<ImagePreference> parse_image_preference(std::string_view text) {
  if (text == "offline" || text == "offline-first") return ImagePreference::offline_first;
  if (text == "official") return ImagePreference::official;
  return std::nullopt;
}

std::string OfficialImage::tag(bool with_cudnn) const {
  std::string t = cuda.str() + "-";
  if (with_cudnn && has_cudnn) t += std::string(cudnn_flavor(cuda)) + "-";
  return t + "devel-" + std::string(os);
}

std::string OfficialImage::reference(bool with_cudnn, std::string_view registry) const {
  return std::string(registry) + ":" + tag(with_cudnn);
}

std::string_view cudnn_flavor(const util::Version& cuda) {
  const util::Version minor = cuda.truncated(2);
  if (minor < util::Version(12, 3)) return "cudnn8";
  if (minor < util::Version(12, 4)) return "cudnn9";
  return "cudnn";
}

std::span<const OfficialImage> official_images() {
  static const std::vector<OfficialImage> k_table = build_official();
  return k_table;
}

const OfficialImage* find_official_image(const util::Version& toolkit) {
  for (const OfficialImage& image : official_images())
    if (same_minor(image.cuda, toolkit)) return &image;
  return nullptr;
}

std::string OfflineImage::reference() const { return std::string(k_offline_repository) + ":" + std::string(name); }

std::span<const OfflineImage> offline_images() {
  static const std::vector<OfflineImage> k_table = build_offline();
  return k_table;
}

const OfflineImage* find_offline_image(std::string_view name) {
  for (const OfflineImage& image : offline_images())
    if (image.name == name || image.reference() == name) return &image;
  return nullptr;
}

std::vector<std::string> offline_image_names() {
  std::vector<std::string> names;
  for (const OfflineImage& image : offline_images()) names.emplace_back(image.name);
  return names;
}

std::optional<ImageChoice> official_choice(const Toolkit& toolkit, const CudnnRelease* cudnn) {
  const OfficialImage* image = find_official_image(toolkit.version);
  if (!image) return std::nullopt;
  const bool with_cudnn = cudnn != nullptr && image->has_cudnn;
  ImageChoice choice{.reference = image->reference(with_cudnn),
                     .source = ImageSource::official,
                     .toolkit = image->cuda,
                     .nvcc = "/usr/local/cuda/bin/nvcc",
                     .host_compiler = "g++"};
  if (with_cudnn) {
    // The flavour's major is certain even where the exact version is not.
    const std::string_view flavour = cudnn_flavor(image->cuda);
    choice.cudnn = !image->cudnn_version.empty() ? std::string(image->cudnn_version)
                   : flavour == "cudnn8"         ? std::string("8")
                                                 : std::string("9");
    if (image->cudnn_version.empty())
      choice.notes.push_back(choice.reference + " carries cuDNN " + *choice.cudnn +
                             ".x (its exact version is not recorded)");
  }
  note_cudnn(choice, cudnn);
  return choice;
}

std::optional<ImageChoice> choose_image(const Toolkit& toolkit, const CudnnRelease* cudnn, ImagePreference preference,
                                        const std::optional<HostCuda>& host, std::span<const ToolkitPart> needed) {
  if (preference == ImagePreference::official) {
    if (auto official = official_choice(toolkit, cudnn)) return official;
    return offline_choice(toolkit, cudnn, host, needed);
  }
  if (auto offline = offline_choice(toolkit, cudnn, host, needed)) return offline;
  return official_choice(toolkit, cudnn);
}

std::vector<std::string> images_lacking(const Toolkit& toolkit, const std::optional<HostCuda>& host,
                                        std::span<const ToolkitPart> needed) {
  std::vector<std::string> out;
  for (const OfflineImage& image : offline_images()) {
    const bool serves = image.host_mount ? host && same_minor(host->toolkit, toolkit.version)
                                         : same_minor(image.toolkit, toolkit.version);
    if (!serves) continue;
    const auto lacks = image_lacks(image, host, needed);
    if (lacks.empty()) continue;
    std::vector<const MissingPart*> pointers;
    for (const auto& m : lacks) pointers.push_back(&m);
    out.push_back(image.reference() + " lacks " + describe_missing(pointers) +
                  (image.host_mount ? " (the host's toolkit at " + host->root + ")" : ""));
  }
  return out;
}

std::optional<util::Version> parse_nvcc_version(std::string_view text) {
  // The V form carries the patch level; the release form is the fallback.
  for (std::string_view marker : {std::string_view(", V"), std::string_view("release ")}) {
    const auto at = text.find(marker);
    if (at == std::string_view::npos) continue;
    std::string_view rest = text.substr(at + marker.size());
    const auto end = rest.find_first_not_of("0123456789.");
    rest = rest.substr(0, end);
    while (!rest.empty() && rest.back() == '.') rest.remove_suffix(1);
    if (auto v = util::Version::parse(rest); v && v->size() >= 2) return *v;
  }
  return std::nullopt;
}

}  // namespace orc::compat
