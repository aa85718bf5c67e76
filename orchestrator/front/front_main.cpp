// orchestrate-nvcc: the nvcc front (front.hpp), installed beside
// `orchestrate`. A build copies it into its scratch tree as bin/nvcc, with
// bin/__nvcc_device_query and bin/nvidia-smi linking to it, and writes
// front.conf beside bin/. Linked statically: it runs inside build images
// that hold none of orchestrate's libraries.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "orchestrator/front/front.hpp"
#include "orchestrator/util/env.hpp"
#include "orchestrator/util/process.hpp"
#include "orchestrator/util/strings.hpp"

namespace {

namespace fs = std::filesystem;
using namespace orc;

// An options file or the call log is read only up to this.
constexpr std::uintmax_t k_max_read = 64ull << 20;
constexpr std::size_t k_max_printed = 256;
// What a shell says for a program it could not start.
constexpr int k_not_started = 127;

std::optional<std::string> read_bounded(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec || size > k_max_read) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(size, '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  return text;
}

void append_record(const front::FrontConfig& config, const front::CallRecord& record) {
  // One write() per line with O_APPEND: parallel compiles never interleave.
  const std::string line = front::to_json_line(record);
  const int fd = ::open(config.log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  [[maybe_unused]] const auto written = ::write(fd, line.data(), line.size());
  ::close(fd);
}

[[noreturn]] void exec_as_is(const fs::path& program, int argc, char** argv) {
  std::vector<char*> args;
  std::string first = program.string();
  args.push_back(first.data());
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execv(first.c_str(), args.data());
  std::fprintf(stderr, "orchestrate: error: nvcc front: cannot run %s: %s\n", first.c_str(), std::strerror(errno));
  std::exit(127);
}

int run(const fs::path& program, const std::vector<std::string>& args,
        std::vector<std::pair<std::string, std::string>> env, std::string* printed) {
  util::ProcessSpec spec;
  spec.argv.push_back(program.string());
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = std::move(env);
  if (printed) {
    spec.capture_cap = 64 * 1024;
    spec.on_output = [printed](util::OutputStream s, std::string_view bytes) {
      if (s == util::OutputStream::out && printed->size() < k_max_printed)
        printed->append(bytes.substr(0, k_max_printed - printed->size()));
      std::fwrite(bytes.data(), 1, bytes.size(), s == util::OutputStream::out ? stdout : stderr);
    };
  } else {
    spec.output = util::OutputMode::inherit;
  }
  auto result = util::run_process(spec);
  if (!result) {
    std::fprintf(stderr, "orchestrate: error: nvcc front: %s\n", result.error().message.c_str());
    return k_not_started;
  }
  return result->status();
}

std::string flattened(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// __nvcc_device_query and nvidia-smi: run the real one, say what it said.
int probe(const front::FrontConfig& config, const std::string& tool, const fs::path& own_bin, int argc, char** argv) {
  // The real one: beside the real nvcc (the toolkit's bin), else on PATH
  // past the front's own bin.
  std::optional<std::string> real;
  const fs::path beside = config.real_nvcc.parent_path() / tool;
  if (::access(beside.c_str(), X_OK) == 0) {
    real = beside.string();
  } else {
    std::string path;
    for (const auto& dir : util::split_any(util::env_value("PATH"), ":"))
      if (dir != own_bin.string()) path += (path.empty() ? "" : ":") + dir;
    real = util::find_program(tool, path);
    if (real && ::access(real->c_str(), X_OK) != 0) real.reset();
  }
  front::CallRecord record;
  record.tool = tool;
  record.outcome = front::Outcome::probe;
  record.cwd = fs::current_path().string();
  for (int i = 1; i < argc; ++i) record.arch_flags.push_back(argv[i]);
  auto uses = front::find_tool_uses(config.source, tool, 1);
  if (!uses.empty()) record.origin = uses.front();
  int status = 127;
  if (!real) {
    record.note = "is not on this build machine";
    std::fprintf(stderr, "%s: not found (orchestrate's nvcc front: the build has no GPU to probe)\n", tool.c_str());
  } else {
    std::vector<std::string> args(argv + 1, argv + argc);
    status = run(*real, args, {}, &record.printed);
    record.exit_code = status;
    record.note = "exited " + std::to_string(status) +
                  (record.printed.empty() ? ", printing nothing" : ", printing '" + flattened(record.printed) + "'");
  }
  append_record(config, record);
  return status;
}

std::vector<std::string> flags_from(std::string_view name) { return front::split_flags(util::env_value(name)); }

int nvcc(const front::FrontConfig& config, int argc, char** argv) {
  const std::vector<std::string> prepend = flags_from("NVCC_PREPEND_FLAGS");
  const std::vector<std::string> append = flags_from("NVCC_APPEND_FLAGS");
  const std::vector<std::string> given(argv + 1, argv + argc);
  std::vector<std::string> args = prepend;
  for (auto& a : front::expand_options_files(given, read_bounded)) args.push_back(std::move(a));
  args.insert(args.end(), append.begin(), append.end());
  const front::NvccCall call = front::read_nvcc_call(args);

  front::CallContext context{.cwd = fs::current_path(), .dryrun = {}, .probes = {}};
  const bool nvcc_decides = call.choice == front::ArchChoice::native || call.choice == front::ArchChoice::all ||
                            call.choice == front::ArchChoice::all_major;
  if (nvcc_decides && (call.kind == front::CallKind::compile || call.kind == front::CallKind::device_link)) {
    // nvcc alone knows what these mean here; its --dryrun says.
    util::ProcessSpec dry{.argv = {config.real_nvcc.string()}, .merge_stderr = true};
    dry.argv.insert(dry.argv.end(), given.begin(), given.end());
    dry.argv.push_back("--dryrun");
    if (auto ran = util::run_process(dry)) context.dryrun = front::targets_from_dryrun(ran->out);
  }
  front::Decision d = front::decide(config, args, call, context);
  using Action = front::Decision::Action;
  if (d.action == Action::refuse) {
    // Only a refusal names the GPU probes before it: the log is read then,
    // not on every call (a project of thousands of calls would read it
    // thousands of times).
    if (auto log = read_bounded(config.log.string()))
      for (auto& r : front::read_call_log(*log))
        if (r.outcome == front::Outcome::probe) context.probes.push_back(std::move(r));
    if (!context.probes.empty()) d = front::decide(config, args, call, context);
  }
  if (d.action == Action::refuse) {
    append_record(config, d.record);
    for (const auto& line : d.message) std::fprintf(stderr, "%s\n", line.c_str());
    return 1;
  }
  if (d.action == Action::run_as_asked) {
    append_record(config, d.record);
    exec_as_is(config.real_nvcc, argc, argv);
  }
  // Enforced: the plan's archs, and none from NVCC_*_FLAGS (they were read
  // into args and stripped with the rest).
  const int status = run(config.real_nvcc, d.argv, {{"NVCC_PREPEND_FLAGS", ""}, {"NVCC_APPEND_FLAGS", ""}}, nullptr);
  d.record.exit_code = status;
  append_record(config, d.record);
  if (status != 0 && status != k_not_started) {
    // nvcc's own errors above say why; an arch is one cause among others
    // (a public project failed here on an API CUDA 13 removed), so the
    // note says what was changed, not what went wrong.
    const std::string prefix = config.source.string() + "/";
    std::string files;
    for (const auto& s : call.sources)
      files += (files.empty() ? "" : " ") + (s.starts_with(prefix) ? s.substr(prefix.size()) : s);
    std::fprintf(stderr,
                 "orchestrate: note: %s failed under `nvcc: enforce`, compiled for %s's plan (%s) instead of %s; "
                 "nvcc's errors above say why (code that needs a newer GPU than the plan's oldest is one cause)\n",
                 files.empty() ? "this nvcc call" : files.c_str(), config.tier.c_str(),
                 front::describe({.code = config.plan, .lto = {}}).c_str(), front::describe(d.record.asked).c_str());
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path bin = exe.parent_path();
  const fs::path conf_file = bin.parent_path() / "front.conf";
  const auto text = read_bounded(conf_file.string());
  if (!text) {
    std::fprintf(stderr,
                 "orchestrate: error: nvcc front: no %s; this program runs inside `orchestrate build` steps only\n",
                 conf_file.c_str());
    return 2;
  }
  auto config = front::parse_config(*text);
  if (!config) {
    std::fprintf(stderr, "orchestrate: error: %s: %s\n", conf_file.c_str(), config.error().c_str());
    return 2;
  }
  const std::string name = fs::path(argc > 0 ? argv[0] : "nvcc").filename().string();
  if (name == "__nvcc_device_query" || name == "nvidia-smi") return probe(*config, name, bin, argc, argv);
  return nvcc(*config, argc, argv);
}
