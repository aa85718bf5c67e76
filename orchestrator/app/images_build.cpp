// `orchestrate images build NAME`: rootfs tar (cached) -> import through the
// engine API -> inspect -> nvcc --version in a container -> state record.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include <optional>
#include "orchestrator/app/images.hpp"
#include "orchestrator/app/images_detail.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/engine/docker_engine.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/file_lock.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using util::ExitCode;
using util::Failure;

namespace {

// Bumped when what goes into a rootfs changes in a way the key's inputs do
// not show (the debootstrap variant, the tar options).
constexpr std::string_view k_rootfs_layout = "orchestrate rootfs v1";

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double secs(std::chrono::milliseconds ms) { return static_cast<double>(ms.count()) / 1000.0; }

std::string fixed(double s) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << s;
  return out.str();
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string sha256_of(std::string_view text) {
  return digest::sha256(std::as_bytes(std::span(text.data(), text.size()))).hex();
}

bool has_scripts(const fs::path& dir) {
  std::error_code ec;
  return !dir.empty() && fs::is_regular_file(dir / "offline" / "common.sh", ec);
}

// images/ beside the sources: given, ORCHESTRATE_IMAGES_DIR, ./images, or
// next to the executable (a build tree's ../images, an install's share/).
fs::path locate_images_dir(const fs::path& given) {
  if (!given.empty()) return given;
  if (const char* env = std::getenv("ORCHESTRATE_IMAGES_DIR"); env && *env) return env;
  if (has_scripts("images")) return fs::absolute("images");
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (const fs::path& candidate : {exe / ".." / "images", exe / ".." / "share" / "orchestrate" / "images"})
    if (has_scripts(candidate)) return fs::weakly_canonical(candidate, ec);
  return "images";
}

// The rootfs key: every input that decides the tree's content, as typed,
// delimited fields (the mirror is not one: a suite's packages are the same
// from any mirror of the same snapshot).
std::string rootfs_key(const compat::OfflineImage& image, const fs::path& scripts) {
  std::string text = std::string(k_rootfs_layout) + "\n";
  text += "suite=" + std::string(image.suite) + "\n";
  text += "components=" + std::string(image.components) + "\n";
  text += "packages=";
  for (auto p : image.packages) text += std::string(p) + " ";
  text += "\ncommon.sh=" + sha256_of(read_text(scripts / "common.sh")) + "\n";
  text += "setup.sh=" + sha256_of(read_text(scripts / image.name / "setup.sh")) + "\n";
  return sha256_of(text);
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

class CollectingSink final : public engine::LogSink {
 public:
  void on_output(engine::OutputStream, std::string_view bytes) override { m_text.append(bytes); }
  const std::string& text() const { return m_text; }

 private:
  std::string m_text;
};

// `nvcc --version` in a container of the image, with no network; the
// host-mount image gets the host's toolkit mounted read-only.
std::string nvcc_in_image(engine::DockerEngine& engine, const compat::OfflineImage& image, const std::string& reference,
                          const std::optional<compat::HostCuda>& host) {
  engine::BuildSpec spec{.image = reference, .argv = {std::string(image.nvcc), "--version"}, .network = "none"};
  if (image.host_mount)
    spec.mounts.push_back(engine::Mount{.host = host->root, .container = std::string(compat::k_default_host_cuda)});
  CollectingSink sink;
  auto ran = engine.run(spec, sink);
  if (!ran)
    throw Failure(ExitCode::outside_failure, "running nvcc --version in " + reference + ": " + ran.error().message);
  if (ran->exit_code != 0)
    throw Failure(ExitCode::check_failed, "nvcc --version in " + reference + " exited " +
                                              std::to_string(ran->exit_code) + ":\n" +
                                              images_detail::last_lines(sink.text(), 10));
  auto version = compat::parse_nvcc_version(sink.text());
  if (!version)
    throw Failure(ExitCode::check_failed, "nvcc --version in " + reference + " said nothing we can read:\n" +
                                              images_detail::last_lines(sink.text(), 10));
  if (!image.host_mount && version->truncated(2) != image.toolkit.truncated(2))
    throw Failure(ExitCode::check_failed,
                  "nvcc in " + reference + " is " + version->str() + ", the catalog says " + image.toolkit.str());
  return version->str();
}

}  // namespace

ImageBuildResult build_image(const ImageBuildRequest& request, std::ostream& progress) {
  const auto start = Clock::now();
  const compat::OfflineImage* image = compat::find_offline_image(request.name);
  if (!image) {
    const auto names = compat::offline_image_names();
    throw Failure(ExitCode::bad_input, {util::Diagnostic{.message = "unknown image '" + request.name +
                                                                    "' (known: " + util::join(names, ", ") + ")",
                                                         .suggestion = util::did_you_mean(request.name, names)}});
  }
  const std::string reference = image->reference();
  const fs::path scripts = locate_images_dir(request.images_dir) / "offline";
  for (const fs::path& script : {scripts / "common.sh", scripts / image->name / "setup.sh"})
    if (!fs::is_regular_file(script))
      throw Failure(ExitCode::bad_input, "no " + script.string() +
                                             ": run from the repository root, or pass --images-dir / set "
                                             "ORCHESTRATE_IMAGES_DIR to the images/ folder");

  // The engine first: finding it missing after minutes of debootstrap helps nobody.
  auto socket = images_detail::engine_socket(request.engine_socket);
  if (!socket) throw Failure(ExitCode::outside_failure, socket.error());
  auto connected = engine::DockerEngine::connect(*socket);
  if (!connected)
    throw Failure(ExitCode::outside_failure,
                  "cannot reach the engine at " + socket->string() + ": " + connected.error().message);
  engine::DockerEngine& engine = *connected;

  std::optional<compat::HostCuda> host;
  if (image->host_mount) {
    host = detect_host_cuda();
    if (!host)
      throw Failure(ExitCode::outside_failure,
                    "the host has no CUDA toolkit at " +
                        std::string(std::getenv("ORCHESTRATE_HOST_CUDA") ? std::getenv("ORCHESTRATE_HOST_CUDA")
                                                                         : compat::k_default_host_cuda) +
                        " (bin/nvcc): " + reference + " mounts it and would serve nothing");
  }

  ImageBuildResult result;
  const std::string key = rootfs_key(*image, scripts);
  const fs::path cache = request.cache_dir.value_or(cache_root() / "rootfs.v1");
  fs::create_directories(cache);
  const fs::path tar = cache / (std::string(image->name) + "-" + key.substr(0, 16) + ".tar");
  const fs::path packages_file = tar.string() + ".packages";
  std::vector<std::string> packages;
  // Held from the cache check to the rename: a second build of the same image
  // (another shell, a parallel test) waits, then finds the tar made.
  std::optional<util::FileLock> rootfs_lock(std::in_place, cache / (std::string(image->name) + ".lock"), progress);
  if (!request.rebuild && fs::is_regular_file(tar) && fs::is_regular_file(packages_file)) {
    result.rootfs_cached = true;
    packages = util::split_any(read_text(packages_file), "\n");
    progress << "images: rootfs tar cached: " << tar.string() << std::endl;
  } else {
    if (::geteuid() != 0)
      throw Failure(ExitCode::bad_input, "building the rootfs of " + reference + " needs root (debootstrap, chroot)");
    const std::string mirror = !request.mirror.empty() ? request.mirror : images_detail::debian_mirror().value_or("");
    if (mirror.empty())
      throw Failure(ExitCode::outside_failure,
                    "no Debian mirror: set ORCHESTRATE_DEBIAN_MIRROR (the host's apt sources name none)");
    const auto made = images_detail::make_rootfs_tar({.image = image,
                                                      .mirror = mirror,
                                                      .scripts = scripts,
                                                      .work = cache / (std::string(image->name) + ".work"),
                                                      .tar = tar},
                                                     progress);
    packages = made.packages;
    std::ofstream(packages_file) << util::join(packages, "\n") << "\n";
    result.debootstrap_s = secs(made.debootstrap);
    result.setup_s = secs(made.setup);
    result.tar_s = secs(made.tar);
    remove_stale_tars(cache, *image, tar);
  }
  rootfs_lock.reset();

  const fs::path state_file = request.state_file.value_or(image_state_path());
  const std::optional<ImageRecord> previous = find_built_image(reference, state_file);
  auto present = engine.inspect_image(reference);
  const bool up_to_date =
      !request.rebuild && previous && previous->rootfs_key == key && present && present->id == previous->id;
  if (!up_to_date) {
    progress << "images: importing " << tar.filename().string() << " as " << reference << std::endl;
    const auto import_start = Clock::now();
    auto imported = engine.import_image(tar, compat::k_offline_repository, image->name);
    if (!imported) throw Failure(ExitCode::outside_failure, "importing " + reference + ": " + imported.error().message);
    result.import_s = since(import_start);
    result.imported = true;
    present = engine.inspect_image(reference);
    if (!present)
      throw Failure(ExitCode::outside_failure,
                    "inspecting " + reference + " after its import: " + present.error().message);
    progress << "images: imported in " << fixed(result.import_s) << " s" << std::endl;
  } else {
    progress << "images: " << reference << " is up to date in the engine" << std::endl;
  }

  const auto nvcc_start = Clock::now();
  const std::string toolkit = nvcc_in_image(engine, *image, reference, host);
  result.nvcc_s = since(nvcc_start);

  result.record = ImageRecord{.name = std::string(image->name),
                              .reference = reference,
                              .id = present->id,
                              .digests = present->digests,
                              .created = up_to_date ? previous->created : images_detail::utc_now(),
                              .toolkit = toolkit,
                              .packages = packages,
                              .rootfs_key = key,
                              .engine = socket->string()};
  save_image_record(state_file, result.record);
  result.total_s = since(start);
  return result;
}

std::string render_build_result(const ImageBuildResult& r, bool json) {
  if (json) {
    nlohmann::ordered_json j;
    j["image"] = {{"name", r.record.name},        {"reference", r.record.reference}, {"id", r.record.id},
                  {"digests", r.record.digests},  {"created", r.record.created},     {"toolkit", r.record.toolkit},
                  {"packages", r.record.packages}};
    j["rootfs_cached"] = r.rootfs_cached;
    j["imported"] = r.imported;
    const auto ms = [](double s) { return std::round(s * 1000.0) / 1000.0; };
    j["seconds"] = {{"debootstrap", ms(r.debootstrap_s)}, {"setup", ms(r.setup_s)}, {"tar", ms(r.tar_s)},
                    {"import", ms(r.import_s)},           {"nvcc", ms(r.nvcc_s)},   {"total", ms(r.total_s)}};
    return j.dump(2) + "\n";
  }
  std::string out = r.record.reference + "  " + r.record.id + "  nvcc " + r.record.toolkit + "\n";
  out += r.rootfs_cached ? "  rootfs: cached tar\n"
                         : "  rootfs: debootstrap " + fixed(r.debootstrap_s) + " s, setup " + fixed(r.setup_s) +
                               " s, tar " + fixed(r.tar_s) + " s\n";
  out += r.imported ? "  import: " + fixed(r.import_s) + " s\n" : "  import: none needed (the engine has this image)\n";
  out += "  nvcc --version in a container: " + fixed(r.nvcc_s) + " s\n";
  out += "  total: " + fixed(r.total_s) + " s\n";
  return out;
}

}  // namespace orc::app
