#include "orchestrator/imaging/offline_image.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <ostream>
#include <span>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/file_lock.hpp"
#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::imaging {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using util::ExitCode;
using util::Failure;

namespace {

// Bumped when what goes into a rootfs changes in a way the key's inputs do
// not show (the debootstrap variant, the tar options).
constexpr std::string_view k_rootfs_layout = "orchestrate rootfs v1";

std::string sha256_of(std::string_view text) {
  return digest::sha256(std::as_bytes(std::span(text.data(), text.size()))).hex();
}

std::string tar_stem(const compat::OfflineImage& image, const std::string& key) {
  return std::string(image.name) + "-" + key.substr(0, 16);
}

// The files of `image` in the cache folder: its tars ("NAME-KEY16.tar"),
// their package lists and step logs, and a half-written tar.
bool image_file(const compat::OfflineImage& image, const std::string& file) {
  const std::string prefix = std::string(image.name) + "-";
  const std::size_t dot = prefix.size() + 16;
  if (!file.starts_with(prefix) || file.size() <= dot || file[dot] != '.') return false;
  if (!std::ranges::all_of(file.substr(prefix.size(), 16), [](char c) { return std::isxdigit(c) != 0; })) return false;
  const std::string_view rest = std::string_view(file).substr(dot);
  return rest == ".tar" || rest == ".tar.packages" || rest == ".tar.partial" || rest == ".debootstrap.log" ||
         rest == ".setup.log";
}

// Everything of `image` in the cache but `kept` (names) removed, each with its size.
CacheLeft leave_only(const fs::path& cache, const compat::OfflineImage& image, const std::vector<std::string>& kept) {
  CacheLeft left;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(cache, ec)) {
    const std::string file = entry.path().filename().string();
    if (!image_file(image, file)) continue;
    const std::uintmax_t bytes = entry.file_size(ec);
    const CachedFile found{.path = entry.path(), .bytes = ec ? 0 : bytes};
    if (std::ranges::find(kept, file) != kept.end()) {
      left.kept.push_back(found);
    } else if (fs::remove(entry.path(), ec)) {
      left.removed.push_back(found);
    }
  }
  std::ranges::sort(left.kept, {}, &CachedFile::path);
  std::ranges::sort(left.removed, {}, &CachedFile::path);
  return left;
}

std::vector<std::string> kept_names(const RootfsRequest& request) {
  if (!request.keep) return {};
  const std::string stem = tar_stem(*request.image, request.key);
  return {stem + ".tar", stem + ".tar.packages", stem + ".debootstrap.log", stem + ".setup.log"};
}

void say_left(const CacheLeft& left, std::ostream& progress) {
  std::uintmax_t removed = 0;
  for (const auto& f : left.removed) removed += f.bytes;
  if (!left.removed.empty())
    progress << "images: removed " << left.removed.size() << " rootfs file(s) of the image from the cache ("
             << removed / (1024 * 1024) << " MiB)" << std::endl;
}

// The kept tar of the key, else a fresh one.
std::filesystem::path tar_for_import(const RootfsRequest& request, Imported& result, std::ostream& progress) {
  const compat::OfflineImage& image = *request.image;
  const fs::path tar = request.cache / (tar_stem(image, request.key) + ".tar");
  const fs::path packages_file = tar.string() + ".packages";
  if (!request.rebuild && fs::is_regular_file(tar) && fs::is_regular_file(packages_file)) {
    result.from_kept_tar = true;
    result.packages = util::split_any(util::read_file(packages_file).value_or(""), "\n");
    progress << "images: using the kept rootfs tar " << tar.string() << std::endl;
    return tar;
  }
  if (::geteuid() != 0)
    throw Failure(ExitCode::bad_input,
                  "building the rootfs of " + image.reference() + " needs root (debootstrap, chroot)");
  const std::string mirror = !request.mirror.empty() ? request.mirror : debian_mirror().value_or("");
  if (mirror.empty())
    throw Failure(ExitCode::outside_failure,
                  "no Debian mirror: set ORCHESTRATE_DEBIAN_MIRROR (the host's apt sources name none)");
  result.made = make_rootfs_tar({.image = &image,
                                 .mirror = mirror,
                                 .scripts = request.scripts,
                                 .work = request.cache / (std::string(image.name) + ".work"),
                                 .tar = tar,
                                 .keep = request.keep,
                                 .progress = request.progress},
                                progress);
  result.packages = result.made.packages;
  if (request.keep)
    if (auto written = util::write_file_atomic(packages_file, util::join(result.packages, "\n") + "\n"); !written)
      throw Failure(ExitCode::outside_failure, "cannot write " + written.error().message);
  return tar;
}

class CollectingSink final : public engine::LogSink {
 public:
  void on_output(engine::OutputStream, std::string_view bytes) override { m_text.append(bytes); }
  const std::string& text() const { return m_text; }

 private:
  std::string m_text;
};

}  // namespace

std::string rootfs_key(const compat::OfflineImage& image, const SetupScripts& scripts) {
  std::string text = std::string(k_rootfs_layout) + "\n";
  text += "suite=" + std::string(image.suite) + "\n";
  text += "components=" + std::string(image.components) + "\n";
  text += "packages=";
  for (auto p : image.packages) text += std::string(p) + " ";
  text += "\ncommon.sh=" + sha256_of(scripts.common) + "\n";
  text += "setup.sh=" + sha256_of(scripts.setup) + "\n";
  return sha256_of(text);
}

Imported import_offline_image(engine::DockerEngine& engine, const RootfsRequest& request, std::ostream& progress) {
  const compat::OfflineImage& image = *request.image;
  const std::string reference = image.reference();
  fs::create_directories(request.cache);
  // Held from the cache check to the tar's removal: a second build of the
  // same image (another shell, a parallel test) waits, then finds a kept
  // tar, and never a tar removed under its import.
  const util::FileLock lock(request.cache / (std::string(image.name) + ".lock"), progress);
  Imported result;
  const fs::path tar = tar_for_import(request, result, progress);
  result.tar_bytes = fs::file_size(tar);
  progress << "images: importing the rootfs tar (" << result.tar_bytes / (1024 * 1024) << " MiB) as " << reference
           << std::endl;
  const auto start = Clock::now();
  auto imported = engine.import_image(tar, compat::k_offline_repository, image.name);
  if (!imported) {
    // Gigabytes nobody asked to keep: the next build makes the tree again
    // (--keep-rootfs keeps it, for retries).
    std::error_code ec;
    if (!request.keep) fs::remove(tar, ec);
    throw Failure(ExitCode::outside_failure, "importing " + reference + ": " + imported.error().message);
  }
  result.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  progress << "images: imported in " << seconds(result.took) << " s" << std::endl;
  auto present = engine.inspect_image(reference);
  if (!present)
    throw Failure(ExitCode::outside_failure,
                  "inspecting " + reference + " after its import: " + present.error().message);
  result.image = *present;
  result.cache = leave_only(request.cache, image, kept_names(request));
  say_left(result.cache, progress);
  return result;
}

CacheLeft tidy_rootfs_cache(const RootfsRequest& request, std::ostream& progress) {
  std::error_code ec;
  if (!fs::is_directory(request.cache, ec)) return {};
  const util::FileLock lock(request.cache / (std::string(request.image->name) + ".lock"), progress);
  CacheLeft left = leave_only(request.cache, *request.image, kept_names(request));
  say_left(left, progress);
  return left;
}

std::string nvcc_in_image(engine::DockerEngine& engine, const compat::OfflineImage& image,
                          const std::optional<compat::HostCuda>& host) {
  const std::string reference = image.reference();
  engine::BuildSpec spec{.image = reference, .argv = {std::string(image.nvcc), "--version"}, .network = "none"};
  if (image.host_mount)
    spec.mounts.push_back(engine::Mount{.host = host->root, .container = std::string(compat::k_default_host_cuda)});
  CollectingSink sink;
  auto ran = engine.run(spec, sink);
  if (!ran)
    throw Failure(ExitCode::outside_failure, "running nvcc --version in " + reference + ": " + ran.error().message);
  if (ran->exit_code != 0)
    throw Failure(ExitCode::check_failed, "nvcc --version in " + reference + " exited " +
                                              std::to_string(ran->exit_code) + ":\n" + last_lines(sink.text(), 10));
  auto version = compat::parse_nvcc_version(sink.text());
  if (!version)
    throw Failure(ExitCode::check_failed,
                  "nvcc --version in " + reference + " said nothing we can read:\n" + last_lines(sink.text(), 10));
  if (!image.host_mount && version->truncated(2) != image.toolkit.truncated(2))
    throw Failure(ExitCode::check_failed,
                  "nvcc in " + reference + " is " + version->str() + ", the catalog says " + image.toolkit.str());
  return version->str();
}

}  // namespace orc::imaging
