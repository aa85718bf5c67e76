#include "tests/inspect/fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>

#include "tests/integration/process.hpp"

namespace orc::inspect_test {

namespace {

using integration::env_or;
using integration::run_process;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
    text.replace(at, from.size(), to);
  return text;
}

// "13.0" from "Cuda compilation tools, release 13.0, V13.0.88".
std::string release_of(const fs::path& tool) {
  if (!fs::exists(tool)) return "";
  const auto r = run_process({tool.string(), "--version"});
  std::smatch m;
  if (r.exit_code == 0 && std::regex_search(r.output, m, std::regex(R"(release (\d+\.\d+),)"))) return m[1];
  return "";
}

// Owns the temp directory the fixtures are built in, for the whole run; the
// build itself waits until a test asks, so a filtered run pays only for
// what it uses.
class FixturesEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    std::lock_guard lock(m_mutex);
    m_temp.reset();
  }

  const FixtureSet& get(std::string_view toolkit) {
    std::lock_guard lock(m_mutex);
    if (m_sets.empty()) build();
    const auto it = m_sets.find(std::string(toolkit));
    if (it == m_sets.end()) throw std::logic_error("no fixture set " + std::string(toolkit));
    return it->second;
  }

  fs::path scratch() {
    std::lock_guard lock(m_mutex);
    if (!m_temp) m_temp = std::make_unique<integration::TempDir>("orc-inspect");
    return m_temp->path() / ("run" + std::to_string(m_runs++));
  }

 private:
  void build() {
    if (!m_temp) m_temp = std::make_unique<integration::TempDir>("orc-inspect");
    const fs::path toolchains = env_or("ORC_TOOLCHAINS", ORC_SOURCE_DIR "/toolchains");
    const fs::path cuda13 = env_or("ORC_CUDA13", "/usr/local/cuda");
    const fs::path script = source_dir() / "tests/inspect/fixtures/make-fixtures.sh";

    struct Candidate {
      std::string toolkit;
      fs::path bin;
    };
    const std::vector<Candidate> candidates = {
        {"11.8", toolchains / "cuda-11.8/bin"}, {"12.4", toolchains / "cuda-12.4/bin"}, {"13.0", cuda13 / "bin"}};
    std::vector<std::vector<std::string>> commands;
    std::vector<FixtureSet*> building;
    for (const auto& c : candidates) {
      FixtureSet& set = m_sets[c.toolkit];
      set.toolkit = c.toolkit;
      const fs::path nvcc = c.bin / "nvcc";
      const std::string release = release_of(nvcc);
      if (release.empty()) {
        set.missing = "nvcc " + c.toolkit + " not found at " + nvcc.string();
        continue;
      }
      if (release.substr(0, release.find('.')) != c.toolkit.substr(0, c.toolkit.find('.'))) {
        set.missing = nvcc.string() + " is release " + release + ", not " + c.toolkit;
        continue;
      }
      if (release_of(c.bin / "cuobjdump") == release) set.cuobjdump = c.bin / "cuobjdump";
      set.dir = m_temp->path() / c.toolkit;
      commands.push_back({script.string(), nvcc.string(), set.dir.string(), c.toolkit});
      building.push_back(&set);
    }
    const unsigned jobs = static_cast<unsigned>(std::max(1, std::atoi(env_or("ORC_NVCC_JOBS", "2").c_str())));
    const auto results = integration::run_parallel(commands, jobs);
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (results[i].exit_code != 0) {
        building[i]->build_error = integration::quoted(commands[i]) + " failed:\n" + results[i].output;
        building[i]->dir.clear();
      }
    }

    // Both generations in one fatbin: an sm_35 cubin from 11.8 and an
    // sm_100 one from 13.0. cuobjdump 12.4 reads both (13.0 refuses sm_35,
    // 11.8 misreads sm_100), so it is the live oracle here.
    FixtureSet& mixed = m_sets["mixed"];
    mixed.toolkit = "mixed";
    const FixtureSet& old_set = m_sets["11.8"];
    const FixtureSet& new_set = m_sets["13.0"];
    if (old_set.dir.empty() || new_set.dir.empty()) {
      mixed.missing = "needs the 11.8 and 13.0 fixtures (" + old_set.missing + old_set.build_error +
                      (old_set.dir.empty() && new_set.dir.empty() ? "; " : "") + new_set.missing + new_set.build_error +
                      ")";
    } else {
      mixed.dir = m_temp->path() / "mixed";
      const std::vector<std::string> command = {script.string(), "--mixed", old_set.dir.string(), new_set.dir.string(),
                                                mixed.dir.string()};
      const auto r = run_process(command);
      if (r.exit_code != 0) {
        mixed.build_error = integration::quoted(command) + " failed:\n" + r.output;
        mixed.dir.clear();
      }
      const fs::path c124 = toolchains / "cuda-12.4/bin/cuobjdump";
      if (release_of(c124) == "12.4") mixed.cuobjdump = c124;
    }
  }

  std::mutex m_mutex;
  std::unique_ptr<integration::TempDir> m_temp;
  std::map<std::string, FixtureSet> m_sets;
  int m_runs = 0;
};

FixturesEnvironment* const g_environment =
    static_cast<FixturesEnvironment*>(::testing::AddGlobalTestEnvironment(new FixturesEnvironment));

}  // namespace

const std::array<Mode, 4>& modes() {
  static const std::array<Mode, 4> k_modes = {
      Mode{"lelf", {"-lelf"}, {.elf = true, .exact = true}},
      Mode{"lptx", {"-lptx"}, {.ptx = true, .exact = true}},
      Mode{"lelf-lptx", {"-lelf", "-lptx"}, {.elf = true, .ptx = true, .exact = true}},
      Mode{
          "all-lelf-lptx", {"-all", "-lelf", "-lptx"}, {.elf = true, .ptx = true, .all_sections = true, .exact = true}},
  };
  return k_modes;
}

std::string describe(const Listing& l) {
  return "--- stdout ---\n" + l.out + "--- stderr ---\n" + l.err + "--- rc ---\n" + std::to_string(l.exit_code) + "\n";
}

std::optional<Listing> read_golden(const fs::path& file, const fs::path& fixture_dir) {
  if (!fs::exists(file)) return std::nullopt;
  const std::string text = replace_all(read_file(file), "@DIR@", fixture_dir.string());
  constexpr std::string_view k_out = "--- stdout ---\n", k_err = "--- stderr ---\n", k_rc = "--- rc ---\n";
  if (!text.starts_with(k_out)) return std::nullopt;
  const std::size_t err = text.find(k_err, k_out.size());
  const std::size_t rc = err == std::string::npos ? err : text.find(k_rc, err + k_err.size());
  if (rc == std::string::npos) return std::nullopt;
  Listing l;
  l.out = text.substr(k_out.size(), err - k_out.size());
  l.err = text.substr(err + k_err.size(), rc - err - k_err.size());
  l.exit_code = std::atoi(text.c_str() + rc + k_rc.size());
  return l;
}

std::vector<std::string> FixtureSet::files() const {
  std::vector<std::string> names;
  if (dir.empty()) return names;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) names.push_back(e.path().filename().string());
  std::ranges::sort(names);
  return names;
}

const FixtureSet& fixture_set(std::string_view toolkit) { return g_environment->get(toolkit); }

fs::path source_dir() { return ORC_SOURCE_DIR; }
fs::path golden_dir() { return source_dir() / "tests/inspect/golden"; }

Listing run_cuobjdump(const fs::path& cuobjdump, const std::vector<std::string>& flags, const fs::path& input,
                      const fs::path& cwd) {
  const fs::path base = g_environment->scratch();
  const fs::path out = base.string() + ".out", err = base.string() + ".err";
  fs::create_directories(base.parent_path());
  std::vector<std::string> argv = {
      "/bin/sh",         "-c", "o=$1 e=$2; shift 2; exec \"$@\" >\"$o\" 2>\"$e\"", "sh", out.string(), err.string(),
      cuobjdump.string()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back(input.string());
  const auto r = run_process(argv, cwd);
  Listing l{read_file(out), read_file(err), r.exit_code};
  fs::remove(out);
  fs::remove(err);
  return l;
}

Listing list(const fs::path& input, inspect::ListOptions options) {
  auto r = inspect::list_device_code(input, options);
  return {std::move(r.out), std::move(r.err), r.exit_code};
}

}  // namespace orc::inspect_test
