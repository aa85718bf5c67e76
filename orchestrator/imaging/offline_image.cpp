#include "orchestrator/imaging/offline_image.hpp"

#include <unistd.h>

#include <ostream>
#include <span>

#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/digest/sha256.hpp"
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

bool has_scripts(const fs::path& dir) {
  std::error_code ec;
  return !dir.empty() && fs::is_regular_file(dir / "offline" / "common.sh", ec);
}

// Other keys' tars of the same image: gigabytes nobody will import again.
void remove_stale_tars(const fs::path& cache, const compat::OfflineImage& image, const fs::path& keep) {
  std::error_code ec;
  const std::string prefix = std::string(image.name) + "-";
  for (const auto& entry : fs::directory_iterator(cache, ec)) {
    const std::string file = entry.path().filename().string();
    if (entry.path() != keep && file.starts_with(prefix) && file.ends_with(".tar")) {
      fs::remove(entry.path(), ec);
      fs::remove(entry.path().string() + ".packages", ec);
    }
  }
}

void make_tar(const RootfsRequest& request, Rootfs& rootfs, const fs::path& packages_file, std::ostream& progress) {
  const compat::OfflineImage& image = *request.image;
  if (::geteuid() != 0)
    throw Failure(ExitCode::bad_input,
                  "building the rootfs of " + image.reference() + " needs root (debootstrap, chroot)");
  const std::string mirror = !request.mirror.empty() ? request.mirror : debian_mirror().value_or("");
  if (mirror.empty())
    throw Failure(ExitCode::outside_failure,
                  "no Debian mirror: set ORCHESTRATE_DEBIAN_MIRROR (the host's apt sources name none)");
  rootfs.made = make_rootfs_tar({.image = &image,
                                 .mirror = mirror,
                                 .scripts = request.scripts,
                                 .work = request.cache / (std::string(image.name) + ".work"),
                                 .tar = rootfs.tar},
                                progress);
  rootfs.packages = rootfs.made.packages;
  if (auto written = util::write_file_atomic(packages_file, util::join(rootfs.packages, "\n") + "\n"); !written)
    throw Failure(ExitCode::outside_failure, "cannot write " + written.error().message);
  remove_stale_tars(request.cache, image, rootfs.tar);
}

class CollectingSink final : public engine::LogSink {
 public:
  void on_output(engine::OutputStream, std::string_view bytes) override { m_text.append(bytes); }
  const std::string& text() const { return m_text; }

 private:
  std::string m_text;
};

}  // namespace

fs::path locate_images_dir(const fs::path& given) {
  if (!given.empty()) return given;
  if (auto env = util::env_get("ORCHESTRATE_IMAGES_DIR")) return *env;
  if (has_scripts("images")) return fs::absolute("images");
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (const fs::path& candidate : {exe / ".." / "images", exe / ".." / "share" / "orchestrate" / "images"})
    if (has_scripts(candidate)) return fs::weakly_canonical(candidate, ec);
  return "images";
}

std::string rootfs_key(const compat::OfflineImage& image, const fs::path& scripts) {
  const auto digest = [](const fs::path& file) { return sha256_of(util::read_file(file).value_or("")); };
  std::string text = std::string(k_rootfs_layout) + "\n";
  text += "suite=" + std::string(image.suite) + "\n";
  text += "components=" + std::string(image.components) + "\n";
  text += "packages=";
  for (auto p : image.packages) text += std::string(p) + " ";
  text += "\ncommon.sh=" + digest(scripts / "common.sh") + "\n";
  text += "setup.sh=" + digest(scripts / image.name / "setup.sh") + "\n";
  return sha256_of(text);
}

Rootfs prepare_rootfs(const RootfsRequest& request, std::ostream& progress) {
  const compat::OfflineImage& image = *request.image;
  Rootfs rootfs;
  rootfs.key = rootfs_key(image, request.scripts);
  fs::create_directories(request.cache);
  rootfs.tar = request.cache / (std::string(image.name) + "-" + rootfs.key.substr(0, 16) + ".tar");
  const fs::path packages_file = rootfs.tar.string() + ".packages";
  // Held from the cache check to the rename: a second build of the same image
  // (another shell, a parallel test) waits, then finds the tar made.
  const util::FileLock lock(request.cache / (std::string(image.name) + ".lock"), progress);
  if (!request.rebuild && fs::is_regular_file(rootfs.tar) && fs::is_regular_file(packages_file)) {
    rootfs.cached = true;
    rootfs.packages = util::split_any(util::read_file(packages_file).value_or(""), "\n");
    progress << "images: rootfs tar cached: " << rootfs.tar.string() << std::endl;
  } else {
    make_tar(request, rootfs, packages_file, progress);
  }
  return rootfs;
}

Imported import_rootfs(engine::DockerEngine& engine, const compat::OfflineImage& image, const Rootfs& rootfs,
                       bool current, std::ostream& progress) {
  const std::string reference = image.reference();
  Imported result;
  if (current) {
    progress << "images: " << reference << " is up to date in the engine" << std::endl;
  } else {
    progress << "images: importing " << rootfs.tar.filename().string() << " as " << reference << std::endl;
    const auto start = Clock::now();
    auto imported = engine.import_image(rootfs.tar, compat::k_offline_repository, image.name);
    if (!imported) throw Failure(ExitCode::outside_failure, "importing " + reference + ": " + imported.error().message);
    result.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    result.imported = true;
  }
  auto present = engine.inspect_image(reference);
  if (!present)
    throw Failure(ExitCode::outside_failure, "inspecting " + reference + (result.imported ? " after its import" : "") +
                                                 ": " + present.error().message);
  if (result.imported) progress << "images: imported in " << seconds(result.took) << " s" << std::endl;
  result.image = *present;
  return result;
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
