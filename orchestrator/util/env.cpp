#include "orchestrator/util/env.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace orc::util {

namespace {

// Sorted: ORCHESTRATE_* first, then the standard ones.
constexpr EnvVariable k_variables[] = {
    {"ORCHESTRATE_CACHE_DIR", "The local store and the image state file.", "$XDG_CACHE_HOME/orchestrate",
     "build, fetch, push, pull, cache, images, smoke, watch"},
    {"ORCHESTRATE_CONFIG", "The configuration file.", "./orchestrate.yaml, else recipes/orchestrate.yaml",
     "plan, build, fetch, push, pull, smoke, cache"},
    {"ORCHESTRATE_DEBIAN_MIRROR", "The Debian mirror debootstrap builds offline images from.", "the host's apt sources",
     "images build"},
    {"ORCHESTRATE_HOST_CUDA", "The host's CUDA toolkit, mounted into the host-mount image and used by host builds.",
     "/usr/local/cuda", "plan, build, images"},
    {"ORCHESTRATE_HOST_TOOLKITS", "Extra CUDA toolkit roots (or folders of them), ':'-separated, for host builds.",
     "none", "plan, build"},
    {"ORCHESTRATE_IMAGE_PREFERENCE", "Which build images a plan chooses: 'offline' or 'official'.", "offline",
     "plan, build"},
    {"ORCHESTRATE_IMAGES_DIR", "An images/ folder whose offline/ setup scripts replace the compiled-in ones.",
     "the scripts compiled into the binary", "images build"},
    {"ORCHESTRATE_KERNELS_DIR", "The smoke-test kernels' sources.", "kernels/ of the source tree", "smoke, build"},
    {"ORCHESTRATE_KEYS_DIR", "The signing key pair and the trusted public keys.", "$XDG_CONFIG_HOME/orchestrate/keys",
     "key, build, fetch, pull, cache verify"},
    {"ORCHESTRATE_MIN_RATE", "The slowest transfer a blob is given time for (--min-rate).", "512KiB",
     "push, pull, fetch"},
    {"ORCHESTRATE_REGISTRY_LOG", "When set, every registry exchange is logged to stderr (credentials redacted).",
     "unset", "push, pull, fetch, build"},
    {"ORCHESTRATE_REMOTE", "The remote cache: an OCI registry URL (overrides remote: in the configuration).",
     "remote: of the configuration, else none", "push, pull, fetch, build, watch, schedule"},
    {"ORCHESTRATE_TIMEOUT", "Seconds one registry operation may take (--timeout).", "60", "push, pull, fetch"},
    {"COLUMNS", "The width tables and help are laid out for (else the terminal's, else 100).", "the terminal's width",
     "every command"},
    {"CONTAINER_HOST", "Podman's engine socket (unix:// only).", "$XDG_RUNTIME_DIR/podman/podman.sock",
     "build, images, watch"},
    {"DOCKER_HOST", "Docker's engine socket (unix:// only).", "/var/run/docker.sock", "build, images, watch"},
    {"HOME", "Where the XDG defaults fall back to (~/.cache, ~/.config).", "the passwd entry's home", "every command"},
    {"NO_COLOR", "When set, terminal output is plain (no colours), as no-color.org asks.", "unset", "inspect"},
    {"NVCC_APPEND_FLAGS", "nvcc's own: options added after every nvcc call's; the nvcc front reads them as nvcc does.",
     "unset", "the nvcc front in build steps"},
    {"NVCC_PREPEND_FLAGS", "nvcc's own: options put before every nvcc call's; the nvcc front reads them as nvcc does.",
     "unset", "the nvcc front in build steps"},
    {"SLURM_CONF", "The Slurm configuration sbatch, squeue, scontrol and scancel read (--engine slurm).",
     "Slurm's built-in path", "build, smoke"},
    {"SLURM_JOB_ID", "Set by Slurm in a job: the job whose comment `orchestrate job` writes its set into.", "unset",
     "job"},
    {"PATH", "Where nvcc and the host build's tools are found.", "/usr/bin:/bin", "build, doctor, images"},
    {"TMPDIR", "Where inspect spills package members it unpacks.", "/var/tmp", "inspect"},
    {"XDG_CACHE_HOME", "The base of the default store.", "~/.cache", "build, fetch, push, pull, cache, images"},
    {"XDG_CONFIG_HOME", "The base of the default keys folder.", "~/.config", "key, build, fetch, pull, cache"},
    {"XDG_RUNTIME_DIR", "Where the rootless Podman socket is looked for.", "unset", "build, images"},
};

const EnvVariable* find(std::string_view name) {
  for (const auto& v : k_variables)
    if (v.name == name) return &v;
  return nullptr;
}

// `text` broken at spaces into lines of at most `width` characters.
std::vector<std::string> wrap(std::string_view text, std::size_t width) {
  std::vector<std::string> lines(1);
  while (!text.empty()) {
    const auto space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    if (!lines.back().empty() && lines.back().size() + 1 + word.size() > width) lines.emplace_back();
    lines.back() += (lines.back().empty() ? "" : " ") + std::string(word);
    text.remove_prefix(space == std::string_view::npos ? text.size() : space + 1);
  }
  return lines;
}

}  // namespace

std::span<const EnvVariable> environment_variables() { return k_variables; }

std::optional<std::string> env_get(std::string_view name) {
  if (!find(name)) throw std::logic_error("env_get: " + std::string(name) + " is not in util/env.cpp's table");
  const char* value = std::getenv(std::string(name).c_str());
  if (!value || !*value) return std::nullopt;
  return std::string(value);
}

std::string env_value(std::string_view name) { return env_get(name).value_or(""); }

std::string render_environment_help(std::size_t width) {
  std::size_t name_width = 0;
  for (const auto& v : k_variables) name_width = std::max(name_width, v.name.size());
  const std::size_t indent = 2 + name_width + 2;
  const std::size_t text_width = width > indent + 20 ? width - indent : 40;
  std::string out = "Environment variables orchestrate reads:\n";
  for (const auto& v : k_variables) {
    const std::string body = std::string(v.meaning) + " Default: " + std::string(v.default_value) +
                             ". Read by: " + std::string(v.read_by) + ".";
    const auto lines = wrap(body, text_width);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      std::string head = i == 0 ? "  " + std::string(v.name) : std::string();
      head.resize(indent, ' ');
      out += head + lines[i] + "\n";
    }
  }
  return out;
}

}  // namespace orc::util
