#include "orchestrator/front/origin.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <set>

namespace orc::front {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t k_max_shown = 160;
// A logical line: a CMake command's parentheses or a Makefile's backslash
// continuations, at most this many physical lines.
constexpr int k_max_joined = 20;

constexpr std::array<std::string_view, 12> k_arch_words = {"CUDA_ARCHITECTURES",
                                                           "CUDAARCHS",
                                                           "CUDA_ARCH",
                                                           "TORCH_CUDA_ARCH_LIST",
                                                           "gencode",
                                                           "generate-code",
                                                           "gpu-architecture",
                                                           "-arch",
                                                           "arch=",
                                                           "sm_",
                                                           "compute_",
                                                           "TF_CUDA_COMPUTE"};

bool build_file(const fs::path& p) {
  const std::string name = p.filename().string();
  const std::string ext = p.extension().string();
  return name == "CMakeLists.txt" || ext == ".cmake" || name.starts_with("Makefile") || name == "makefile" ||
         name == "GNUmakefile" || ext == ".mk" || ext == ".mak" || name == "setup.py" || ext == ".sh" ||
         ext == ".bash" || ext == ".bzl" || name == ".bazelrc" || name == "meson.build" || name == "BUILD" ||
         name == "BUILD.bazel" || name == "pyproject.toml";
}

// Project files, shallow first, in name order within a depth; build trees
// (CMakeCache.txt) and hidden directories are not the project's.
std::vector<fs::path> project_files(const fs::path& root, const OriginLimits& limits) {
  std::vector<fs::path> out;
  std::vector<fs::path> level = {root};
  std::size_t seen = 0;
  for (int depth = 0; depth <= limits.max_depth && !level.empty(); ++depth) {
    std::vector<fs::path> next;
    std::sort(level.begin(), level.end());
    for (const auto& dir : level) {
      std::error_code ec;
      if (fs::exists(dir / "CMakeCache.txt", ec) && dir != root) continue;
      std::vector<fs::directory_entry> entries;
      for (const auto& e : fs::directory_iterator(dir, fs::directory_options::skip_permission_denied, ec)) {
        if (++seen > limits.max_files * 4) break;
        entries.push_back(e);
      }
      std::sort(entries.begin(), entries.end());
      for (const auto& e : entries) {
        const std::string name = e.path().filename().string();
        if (e.is_directory(ec) && !e.is_symlink(ec)) {
          if (!name.starts_with(".") && name != "CMakeFiles" && name != "node_modules") next.push_back(e.path());
        } else if (e.is_regular_file(ec) && build_file(e.path()) && e.file_size(ec) <= limits.max_file_bytes) {
          out.push_back(e.path());
          if (out.size() >= limits.max_files) return out;
        }
      }
    }
    level = std::move(next);
  }
  return out;
}

std::vector<std::string> read_lines(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string shown(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  std::string out(text.substr(0, k_max_shown));
  if (text.size() > k_max_shown) out += "...";
  return out;
}

// The command starting at lines[i], joined: continuation backslashes and
// open CMake parentheses carry it on.
std::string logical_line(const std::vector<std::string>& lines, std::size_t i) {
  std::string out = lines[i];
  int depth = 0;
  for (char c : lines[i]) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
  for (int n = 1; n < k_max_joined && i + n < lines.size(); ++n) {
    const bool continued = !out.empty() && out.back() == '\\';
    if (!continued && depth <= 0) break;
    if (continued) out.pop_back();
    const std::string& more = lines[i + n];
    for (char c : more) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    out += " " + more;
  }
  return out;
}

// The CC numbers a line names: "75", "8.6" (86), "sm_90a" (90), "120".
std::set<int> numbers_in(std::string_view text) {
  std::set<int> out;
  for (std::size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    // A number glued to a word ("cuda12", "x86_64") is no arch.
    const bool glued = i > 0 && (std::isalpha(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '-');
    const bool after_underscore = i > 0 && text[i - 1] == '_';
    std::size_t j = i;
    int value = 0;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) && value < 10000)
      value = value * 10 + (text[j++] - '0');
    if (j + 1 < text.size() && text[j] == '.' && std::isdigit(static_cast<unsigned char>(text[j + 1])) && value < 20) {
      value = value * 10 + (text[j + 1] - '0');
      j += 2;
    }
    const std::string_view before = text.substr(0, i);
    const bool underscore_ok = before.ends_with("sm_") || before.ends_with("compute_") || before.ends_with("lto_");
    if ((!glued && !after_underscore) || underscore_ok) out.insert(value);
    i = j;
  }
  return out;
}

bool names_arch(std::string_view line) {
  return std::ranges::any_of(k_arch_words, [&](std::string_view w) { return line.find(w) != std::string_view::npos; });
}

bool comment(std::string_view line) {
  const auto first = line.find_first_not_of(" \t");
  return first != std::string_view::npos && line[first] == '#';
}

std::set<int> asked_numbers(const NvccCall& call) {
  std::set<int> out;
  for (const auto& cc : call.targets.code.sass) out.insert(cc.number());
  for (const auto& cc : call.targets.code.ptx) out.insert(cc.number());
  for (const auto& cc : call.targets.lto) out.insert(cc.number());
  return out;
}

}  // namespace

std::string Origin::str() const { return file + ":" + std::to_string(line) + ": " + text; }

std::optional<Origin> find_arch_origin(const fs::path& root, const NvccCall& call, const OriginLimits& limits) {
  if (call.choice == ArchChoice::native) {
    auto uses = find_tool_uses(root, "native", 1, limits);
    if (!uses.empty()) return uses.front();
    return std::nullopt;
  }
  const std::set<int> asked = asked_numbers(call);
  if (asked.empty()) return std::nullopt;
  std::optional<Origin> best;
  std::size_t best_score = 0;
  for (const auto& file : project_files(root, limits)) {
    const auto lines = read_lines(file);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (comment(lines[i]) || !names_arch(lines[i])) continue;
      const std::string joined = logical_line(lines, i);
      std::size_t score = 0;
      for (int n : numbers_in(joined)) score += asked.contains(n) ? 1 : 0;
      // A setting of the CMake variable outranks a line that only uses it.
      if (score > 0 && joined.find("CUDA_ARCHITECTURES") != std::string::npos &&
          (joined.find("set(") != std::string::npos || joined.find("set (") != std::string::npos ||
           joined.find("PROPERTIES") != std::string::npos))
        score += asked.size();
      if (score > best_score) {
        best_score = score;
        best =
            Origin{.file = fs::relative(file, root).string(), .line = static_cast<int>(i + 1), .text = shown(lines[i])};
      }
    }
  }
  if (best) return best;
  // No line names the numbers: they came through a variable (a probe's
  // answer, the environment). The line that writes the nvcc option is the
  // one to change; a probe line when there is none. A call with no arch
  // option at all got nvcc's default: only a probe can explain that.
  const auto settings = find_arch_settings(root, 8, limits);
  if (call.choice == ArchChoice::nvcc_default) {
    for (const auto& s : settings)
      if (s.text.find("__nvcc_device_query") != std::string::npos || s.text.find("nvidia-smi") != std::string::npos)
        return s;
    return std::nullopt;
  }
  for (const auto& s : settings)
    if (s.text.find("-gencode") != std::string::npos || s.text.find("-arch") != std::string::npos ||
        s.text.find("generate-code") != std::string::npos || s.text.find("gpu-architecture") != std::string::npos)
      return s;
  if (!settings.empty()) return settings.front();
  return std::nullopt;
}

std::vector<Origin> find_arch_settings(const fs::path& root, std::size_t max, const OriginLimits& limits) {
  // Signals of a project's own choice; a CMake file's arch words count only
  // in a set()/property, a build script's in an nvcc option.
  constexpr std::array<std::string_view, 7> k_options = {"-gencode",     "--generate-code",        "-arch=sm_",
                                                         "-arch sm_",    "--gpu-architecture=sm_", "-arch=native",
                                                         "arch=compute_"};
  constexpr std::array<std::string_view, 2> k_probes = {"__nvcc_device_query", "--query-gpu=compute_cap"};
  std::vector<Origin> out;
  for (const auto& file : project_files(root, limits)) {
    const bool cmake = file.filename() == "CMakeLists.txt" || file.extension() == ".cmake";
    const auto lines = read_lines(file);
    for (std::size_t i = 0; i < lines.size() && out.size() < max; ++i) {
      const std::string& line = lines[i];
      if (comment(line)) continue;
      bool chooses =
          std::ranges::any_of(k_probes, [&](std::string_view p) { return line.find(p) != std::string::npos; });
      if (cmake) {
        const bool sets = line.find("CUDA_ARCHITECTURES") != std::string::npos &&
                          (line.find("set(") != std::string::npos || line.find("set (") != std::string::npos ||
                           line.find("PROPERTIES") != std::string::npos || line.find("PROPERTY") != std::string::npos);
        // The idiom that keeps the build's value: a set() under if(NOT DEFINED ...).
        const bool guarded = i > 0 && lines[i - 1].find("CMAKE_CUDA_ARCHITECTURES") != std::string::npos &&
                             lines[i - 1].find("if") != std::string::npos &&
                             lines[i - 1].find("NOT") != std::string::npos;
        chooses = chooses || (sets && !guarded) ||
                  std::ranges::any_of(k_options, [&](std::string_view o) { return line.find(o) != std::string::npos; });
      } else {
        chooses = chooses ||
                  std::ranges::any_of(k_options, [&](std::string_view o) { return line.find(o) != std::string::npos; });
      }
      if (chooses)
        out.push_back(
            {.file = fs::relative(file, root).string(), .line = static_cast<int>(i + 1), .text = shown(line)});
    }
    if (out.size() >= max) break;
  }
  return out;
}

std::vector<Origin> find_tool_uses(const fs::path& root, std::string_view tool, std::size_t max,
                                   const OriginLimits& limits) {
  std::vector<Origin> out;
  for (const auto& file : project_files(root, limits)) {
    const auto lines = read_lines(file);
    for (std::size_t i = 0; i < lines.size() && out.size() < max; ++i) {
      if (comment(lines[i]) || lines[i].find(tool) == std::string::npos) continue;
      out.push_back(
          {.file = fs::relative(file, root).string(), .line = static_cast<int>(i + 1), .text = shown(lines[i])});
    }
    if (out.size() >= max) break;
  }
  return out;
}

}  // namespace orc::front
