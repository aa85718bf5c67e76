#include "orchestrator/app/build/build_drivers.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

namespace fs = std::filesystem;
using Argv = std::vector<std::string>;

// The PATH of a Debian image: what a container starts with when the image
// sets none we know of.
constexpr std::string_view k_container_path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// `cmake -S . -B build ...` configures; `cmake --build`, `-E`, `-P` and
// `--install` do not, and get no cache variables.
bool is_cmake_configure(const Argv& argv) {
  if (argv.empty() || fs::path(argv.front()).filename() != "cmake") return false;
  return std::ranges::none_of(argv, [](const std::string& a) {
    return a == "--build" || a == "--install" || a == "-E" || a == "-P" || a == "--version" || a == "--help";
  });
}

// The recipe's steps as argv: argv lists as they are, scripts mounted
// read-only and run by bash from /orc/steps.
void recipe_steps(const recipe::Recipe& r, DriverPlan& out) {
  std::vector<std::string> names;
  for (const auto& step : r.build) {
    if (!step.argv.empty()) {
      out.steps.push_back(step.argv);
      continue;
    }
    std::string name = step.script.filename().string();
    // Two scripts of one name from different directories must not share a mount point.
    if (std::ranges::find(names, name) != names.end()) name = std::to_string(names.size()) + "-" + name;
    names.push_back(name);
    const std::string target = std::string(k_steps_dir) + "/" + name;
    out.mounts.push_back({.host = step.script, .container = target, .access = engine::Access::read_only});
    out.steps.push_back({"bash", target});
  }
}

void append_cache_args(DriverPlan& out, const Argv& args) {
  for (auto& step : out.steps)
    if (is_cmake_configure(step)) step.insert(step.end(), args.begin(), args.end());
}

Argv cmake_configure(const DriverInput& in, const Argv& cache_args) {
  Argv argv = {"cmake",
               "-S",
               std::string(k_src_dir),
               "-B",
               std::string(k_build_dir),
               "-G",
               in.generator == CmakeGenerator::ninja ? "Ninja" : "Unix Makefiles",
               "-DCMAKE_BUILD_TYPE=Release"};
  argv.insert(argv.end(), cache_args.begin(), cache_args.end());
  return argv;
}

Argv cmake_build(const DriverInput& in) {
  return {"cmake", "--build", std::string(k_build_dir), "-j", std::to_string(in.jobs)};
}

std::optional<std::string> read_text(const fs::path& file) {
  auto text = util::read_file(file);
  if (!text) return std::nullopt;
  return std::move(*text);
}

// Each framework's steps and files, from its typed variables.
struct FrameworkSteps {
  const DriverInput& in;
  DriverPlan& out;
  bool defaults;  // the recipe names no steps of its own

  using Result = std::expected<void, std::string>;
  Result configure_with(const Argv& args) {
    if (defaults)
      out.steps = {cmake_configure(in, args), cmake_build(in)};
    else
      append_cache_args(out, args);
    return {};
  }
  Result operator()(const flags::CmakeVars& v) {
    return configure_with({"-DCMAKE_CUDA_ARCHITECTURES=" + v.architectures});
  }
  Result operator()(const flags::CaffeCmakeVars& v) {
    Argv args = {"-DCUDA_ARCH_NAME=Manual", "-DCUDA_ARCH_BIN=" + v.bin, "-DCUDA_ARCH_PTX=" + v.ptx};
    if (v.nvcc_flags) args.push_back("-DCUDA_NVCC_FLAGS=" + *v.nvcc_flags);
    return configure_with(args);
  }
  // NVCC_APPEND_FLAGS (from the plan's env) adds the -gencode list to
  // every nvcc the recipe runs; there is nothing to compile by default.
  Result operator()(const flags::NvccVars&) {
    if (defaults)
      return std::unexpected("recipe '" + in.recipe->name + "' (nvcc) has no build steps; nvcc recipes name their own");
    return {};
  }
  Result operator()(const flags::TorchVars&) {
    if (defaults) out.steps = {{"python3", "setup.py", "bdist_wheel"}};
    return {};
  }
  Result operator()(const flags::CaffeVars& v) {
    const auto example = read_text(in.source_dir / "Makefile.config.example");
    if (!example)
      return std::unexpected("recipe '" + in.recipe->name + "' (caffe): the source has no Makefile.config.example");
    out.files.push_back(
        {.relative = "Makefile.config", .text = rewrite_caffe_makefile_config(*example, v.cuda_arch, in.cuda_home)});
    out.notes.push_back("caffe: Makefile.config written from Makefile.config.example with CUDA_ARCH := " + v.cuda_arch);
    if (defaults) out.steps = {{"make", "-j" + std::to_string(in.jobs), "all"}};
    return {};
  }
  Result operator()(const flags::TensorflowVars& v) {
    out.env.emplace_back("TEST_TMPDIR", std::string(k_bazel_dir));  // bazel's output root, kept in the workspace
    out.mounts.push_back(
        {.host = in.workspace / "bazel", .container = std::string(k_bazel_dir), .access = engine::Access::read_write});
    const std::string now = bazel_arch_fingerprint(v);
    if (auto why = bazel_expunge_reason(read_bazel_fingerprint(in.workspace), now)) {
      out.pre_steps.push_back({"bazel", "clean", "--expunge"});
      out.notes.push_back("bazel: running 'bazel clean --expunge' first: " + *why);
    }
    out.bazel_fingerprint = now;
    // The workspace's own .bazelrc, with the plan's variables after its lines
    // (flags::tf_bazelrc_fragment says why there).
    const std::string rc = read_text(in.source_dir / ".bazelrc").value_or("");
    out.files.push_back({.relative = ".bazelrc", .text = rc + flags::tf_bazelrc_fragment(v)});
    out.notes.push_back("bazel: .bazelrc gets --repo_env lines for the plan's variables (build and build:cuda)");
    if (defaults)
      out.steps = {{"python3", "configure.py"},
                   {"bazel", "build", "--config=cuda", "--jobs=" + std::to_string(in.jobs),
                    "//tensorflow/tools/pip_package:wheel"}};
    return {};
  }
};

}  // namespace

std::expected<DriverPlan, std::string> plan_driver(const DriverInput& in) {
  DriverPlan out;
  for (const auto& v : in.plan->framework.env) out.env.emplace_back(v.name, v.value);
  out.env.emplace_back("CUDA_HOME", in.cuda_home);
  // The tier's and the recipe's `env:` (the recipe's wins); PATH from them
  // is the system part, behind the front and the toolkit.
  std::vector<std::pair<std::string, std::string>> chosen;
  const auto choose = [&chosen](const std::vector<recipe::EnvSetting>& settings) {
    for (const auto& s : settings) {
      const auto it = std::ranges::find(chosen, s.name, &std::pair<std::string, std::string>::first);
      if (it != chosen.end())
        it->second = s.value;
      else
        chosen.emplace_back(s.name, s.value);
    }
  };
  if (in.plan->tier) choose(in.plan->tier->env);
  choose(in.recipe->env);
  std::string system_path(k_container_path);
  if (const auto it = std::ranges::find(chosen, "PATH", &std::pair<std::string, std::string>::first);
      it != chosen.end()) {
    system_path = it->second;
    chosen.erase(it);
  }
  const std::string front_bin = std::string(k_front_dir) + "/bin";
  out.env.emplace_back("PATH", front_bin + ":" + in.cuda_home + "/bin:" + system_path);
  // CMake takes its CUDA compiler from CUDACXX before PATH; PyTorch's
  // extension builder (ninja) from PYTORCH_NVCC before CUDA_HOME/bin.
  out.env.emplace_back("CUDACXX", front_bin + "/nvcc");
  out.env.emplace_back("PYTORCH_NVCC", front_bin + "/nvcc");
  out.env.emplace_back("HOME", std::string(k_home_dir));
  out.env.emplace_back("LANG", "C");
  // Parallelism: PyTorch and ninja-driven extensions read MAX_JOBS, `cmake --build` the other.
  out.env.emplace_back("MAX_JOBS", std::to_string(in.jobs));
  out.env.emplace_back("CMAKE_BUILD_PARALLEL_LEVEL", std::to_string(in.jobs));
  for (auto& c : chosen) {
    const auto it = std::ranges::find(out.env, c.first, &std::pair<std::string, std::string>::first);
    if (it != out.env.end())
      it->second = std::move(c.second);
    else
      out.env.push_back(std::move(c));
  }
  recipe_steps(*in.recipe, out);
  if (auto ok = std::visit(FrameworkSteps{.in = in, .out = out, .defaults = in.recipe->build.empty()},
                           in.plan->framework.vars);
      !ok)
    return std::unexpected(ok.error());
  return out;
}

std::string rewrite_caffe_makefile_config(std::string_view example, std::string_view cuda_arch,
                                          std::string_view cuda_dir) {
  const auto lines = [&example] {
    std::vector<std::string> v;
    std::size_t start = 0;
    while (start < example.size()) {
      std::size_t nl = example.find('\n', start);
      if (nl == std::string_view::npos) nl = example.size();
      v.emplace_back(example.substr(start, nl - start));
      start = nl + 1;
    }
    return v;
  }();
  // An assignment "NAME :=" / "NAME =" at the start of a line (not a comment).
  const auto assigns = [](std::string_view line, std::string_view name) {
    const std::string_view t = util::trim(line);
    if (!t.starts_with(name)) return false;
    const std::string_view rest = util::trim(t.substr(name.size()));
    return rest.starts_with(":=") || rest.starts_with("=") || rest.starts_with("?=");
  };
  std::string out;
  bool arch_written = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (assigns(line, "CUDA_ARCH")) {
      // Skip the assignment's continuation lines (a trailing backslash).
      while (i < lines.size() && !lines[i].empty() && util::trim(lines[i]).ends_with('\\')) ++i;
      out += "CUDA_ARCH := " + std::string(cuda_arch) + "\n";
      arch_written = true;
      continue;
    }
    if (assigns(line, "CUDA_DIR")) {
      out += "CUDA_DIR := " + std::string(cuda_dir) + "\n";
      continue;
    }
    out += line + "\n";
  }
  if (!arch_written)
    out += "\n# Set by orchestrate from the tier's plan.\nCUDA_ARCH := " + std::string(cuda_arch) + "\n";
  return out;
}

std::string bazel_arch_fingerprint(const flags::TensorflowVars& vars) {
  // The variables bazel's CUDA configuration (and so its cache) depends on,
  // in the form workspaces already remember.
  std::string out = "TF_CUDA_COMPUTE_CAPABILITIES=" + vars.capabilities +
                    ";HERMETIC_CUDA_COMPUTE_CAPABILITIES=" + (vars.hermetic ? vars.capabilities : std::string()) +
                    ";TF_CUDA_VERSION=" + vars.cuda_version;
  // Hermetic builds fetch a CUDA and cuDNN of their own: those versions are
  // part of the configuration too (a hermetic workspace configured before
  // they were emitted is expunged once). Other fingerprints are unchanged.
  if (vars.hermetic_cuda_version) out += ";HERMETIC_CUDA_VERSION=" + *vars.hermetic_cuda_version;
  if (vars.hermetic_cudnn_version) out += ";HERMETIC_CUDNN_VERSION=" + *vars.hermetic_cudnn_version;
  return out;
}

std::optional<std::string> bazel_expunge_reason(const std::optional<std::string>& last, std::string_view now) {
  if (!last || *last == now) return std::nullopt;
  return "the workspace was configured for " + *last + " and this plan asks for " + std::string(now) +
         "; bazel would reuse outputs built for the old configuration";
}

std::optional<std::string> read_bazel_fingerprint(const fs::path& workspace) {
  auto text = read_text(workspace / k_bazel_fingerprint_file);
  if (!text) return std::nullopt;
  return std::string(util::trim(*text));
}

}  // namespace orc::app
