// The command line as a user sees it: stdout, stderr and exit codes, run
// in-process through cli::run.
#include "orchestrator/cli/cli.hpp"

#include <grp.h>
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/unit/cli/cli_fixture.hpp"
#include "tests/unit/cli/run_cli.hpp"
#include "tests/unit/inspect/binary_fixtures.hpp"

namespace orc::cli {
namespace {

using Result = testing::CliResult;
using testing::CliTest;
using testing::fake_host_cuda;
using testing::fatbin;
using testing::FatEntry;
using testing::k_config;
using testing::run_cli;
using testing::ScopedEnv;

TEST_F(CliTest, PlanJsonContract) {
  const auto config = write("orchestrate.yaml", k_config);
  const auto host = fake_host_cuda(m_dir / "cuda", "13.0");
  const auto r = run_cli({"plan", "tier-new", "-f", config, "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // stdout is JSON and nothing else
  ASSERT_EQ(j["plans"].size(), 2u);
  const auto& p = j["plans"][0];
  EXPECT_EQ(p["recipe"], "ext");
  EXPECT_EQ(p["tier"], "tier-new");
  EXPECT_EQ(p["status"], "ok");
  EXPECT_EQ(p["toolkit"], "13.0");
  EXPECT_TRUE(p["cudnn"].is_string());
  EXPECT_EQ(p["image"], "orchestrate/cuda:host-bookworm");  // the host's 13.0, mounted
  EXPECT_EQ(p["gpus"][3]["name"], "H100");
  EXPECT_EQ(p["gpus"][3]["cc"], "9.0");
  EXPECT_EQ(p["sass"], nlohmann::json({"sm_80", "sm_86", "sm_89", "sm_90"}));
  EXPECT_EQ(p["ptx"], nlohmann::json({"compute_90"}));
  EXPECT_EQ(p["env"]["TORCH_CUDA_ARCH_LIST"], "8.0;8.6;8.9;9.0+PTX");
  EXPECT_EQ(p["nvcc_flags"].size(), 5u);
  EXPECT_FALSE(p["reasons"].empty());
  EXPECT_TRUE(p["warnings"].is_array());
  const auto& tf = j["plans"][1];
  EXPECT_EQ(tf["env"]["TF_NEED_CUDA"], "1");
  EXPECT_EQ(tf["env"]["TF_CUDA_COMPUTE_CAPABILITIES"], "sm_80,sm_86,sm_89,compute_90");
  // tensorflow >=2.18: its tested configuration (12.5, cuDNN 9.3), in the
  // full versions hermetic CUDA fetches.
  EXPECT_EQ(tf["toolkit"], "12.5");
  EXPECT_EQ(tf["cudnn"], "9.3");
  EXPECT_EQ(tf["env"]["TF_CUDA_VERSION"], "12.5");
  EXPECT_EQ(tf["env"]["HERMETIC_CUDA_COMPUTE_CAPABILITIES"], "sm_80,sm_86,sm_89,compute_90");
  EXPECT_EQ(tf["env"]["HERMETIC_CUDA_VERSION"], "12.5.1");
  EXPECT_EQ(tf["env"]["HERMETIC_CUDNN_VERSION"], "9.3.0");
  EXPECT_NE(tf["reasons"].dump().find("tensorflow 2.21 is tested with CUDA 12.5 and cuDNN 9.3"), std::string::npos)
      << tf["reasons"].dump();
}

// The example configurations plan cleanly, and each tier's driver picks its
// toolkit: the main one (what the README's command builds) and the
// frameworks one (the same cluster).
TEST_F(CliTest, ExampleConfigurationPlansEveryRecipe) {
  const auto host = fake_host_cuda(m_dir / "cuda", "13.0");
  std::map<std::string, std::set<std::string>> toolkits;
  std::map<std::string, std::set<std::string>> images;
  std::set<std::string> planned;
  for (const char* file : {"/recipes/orchestrate.yaml", "/recipes/frameworks/orchestrate.yaml"}) {
    const auto r = run_cli({"plan", "-f", std::string(ORC_SOURCE_DIR) + file, "--json"});
    ASSERT_EQ(r.code, 0) << file << r.err << r.out;
    const auto j = nlohmann::json::parse(r.out);
    for (const auto& p : j["plans"]) {
      EXPECT_EQ(p["status"], "ok") << p.dump();
      toolkits[p["tier"]].insert(p["toolkit"].get<std::string>());
      // tf-ops on tier-new: TensorFlow's tested 12.5, which only an nvidia/cuda tag serves.
      if (!p["image"].is_null()) images[p["tier"]].insert(p["image"].get<std::string>());
      planned.insert(p["recipe"].get<std::string>() + "/" + p["tier"].get<std::string>());
    }
  }
  // One offline image per toolkit: Debian's 11.8 and 12.4, the host's 13.0.
  EXPECT_EQ(images["tier-old"], std::set<std::string>{"orchestrate/cuda:11.8-bookworm"});
  EXPECT_EQ(images["tier-new"], std::set<std::string>{"orchestrate/cuda:12.4-trixie"});
  EXPECT_EQ(images["tier-next"], std::set<std::string>{"orchestrate/cuda:host-bookworm"});
  EXPECT_EQ(toolkits["tier-old"], std::set<std::string>{"11.8"});  // V100/P100: not 13.x; driver 535: not 12.4
  // driver 550.54.15: not 12.8 or 13.0; tf-ops: TensorFlow's tested 12.5 (under minor-version compatibility)
  EXPECT_EQ(toolkits["tier-new"], (std::set<std::string>{"12.4", "12.5"}));
  EXPECT_EQ(toolkits["tier-next"], std::set<std::string>{"13.0"});  // GB10 needs >= 12.9
  for (const char* expected :
       {"saxpy-cmake/tier-old", "saxpy-cmake/tier-new", "saxpy-cmake/tier-next", "saxpy-nvcc/tier-old",
        "saxpy-nvcc/tier-new", "saxpy-nvcc/tier-next", "caffe-cmake/tier-old", "caffe-cmake/tier-new",
        "caffe-make/tier-old", "tf-ops/tier-new", "vision-ext/tier-old", "vision-ext/tier-new", "vision-ext/tier-next"})
    EXPECT_TRUE(planned.contains(expected)) << expected;
}

TEST_F(CliTest, UnsatisfiablePlanExitsOneWithReasons) {
  const auto config = write("orchestrate.yaml", k_config);
  const auto r = run_cli({"plan", "tier-mixed", "-f", config, "--json"});
  EXPECT_EQ(r.code, 1);
  const auto j = nlohmann::json::parse(r.out);
  const auto& p = j["plans"][0];
  EXPECT_EQ(p["status"], "unsatisfiable");
  EXPECT_TRUE(p["toolkit"].is_null());
  const std::string reasons = p["reasons"].dump();
  EXPECT_NE(reasons.find("Tesla K80 (3.7) needs CUDA <= 11.8, B200 (10.0) needs CUDA >= 12.8"), std::string::npos)
      << reasons;
  // Each part of the split with the toolkit it resolves to.
  EXPECT_EQ(p["split"], nlohmann::json::parse(R"([{"gpus": ["Tesla K80"], "toolkit": "11.8"},
                                                   {"gpus": ["B200"], "toolkit": "13.0"}])"));
}

TEST_F(CliTest, BadConfigIsExitTwoWithFileLineColAndNoOutput) {
  const auto config = write("bad.yaml", "tiers:\n  t:\n    gpus: [A100]\nrecipes:\n  - name: x\n    framwork: cmake\n");
  const auto r = run_cli({"plan", "-f", config, "--json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("orchestrate: error: " + config + ":6:5: unknown key 'framwork' (did you mean 'framework'?)"),
            std::string::npos)
      << r.err;
}

TEST_F(CliTest, MissingConfigAndUnknownTier) {
  auto r = run_cli({"plan", "-f", (m_dir / "nope.yaml").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nope.yaml"), std::string::npos) << r.err;
  const auto config = write("orchestrate.yaml", k_config);
  r = run_cli({"plan", "tier-nwe", "-f", config});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no tier 'tier-nwe' in " + config + " (did you mean 'tier-new'?)"), std::string::npos) << r.err;
}

TEST_F(CliTest, ToolkitsJsonContract) {
  const auto r = run_cli({"toolkits", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  const nlohmann::json* cuda13 = nullptr;
  for (const auto& row : j)
    if (row["version"] == "13.0") cuda13 = &row;
  ASSERT_NE(cuda13, nullptr);
  EXPECT_EQ((*cuda13)["archs"].front(), "sm_75");
  EXPECT_EQ((*cuda13)["archs"].back(), "sm_121f");
  EXPECT_EQ((*cuda13)["default_arch"], "sm_75");
  EXPECT_EQ((*cuda13)["min_driver"], "580.65.06");
  EXPECT_EQ((*cuda13)["max_gcc"], 15);
  EXPECT_TRUE((*cuda13)["deprecated"].is_array());
  EXPECT_EQ(j.front()["version"], "8.0");
  // 13.5: a minimum driver no source gives is null and marked, never a guess.
  const auto& cuda135 = j.back();
  EXPECT_EQ(cuda135["version"], "13.5");
  EXPECT_TRUE(cuda135["min_driver"].is_null());
  EXPECT_EQ(cuda135["ptx_isa"], "9.5");
  EXPECT_NE(std::ranges::find(cuda135["unconfirmed"], "min_driver"), cuda135["unconfirmed"].end());
  const auto text = run_cli({"toolkits"});
  EXPECT_NE(text.out.find("13.5  sm_75..sm_121f  sm_75    unknown    15   21     (UNCONFIRMED:"), std::string::npos)
      << text.out;

  const auto cudnn = run_cli({"toolkits", "--cudnn", "--json"});
  ASSERT_EQ(cudnn.code, 0);
  EXPECT_TRUE(nlohmann::json::parse(cudnn.out).is_array());
}

TEST_F(CliTest, GpusLookupAndDidYouMean) {
  auto r = run_cli({"gpus", "rtx4090", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["cc"], "8.9");
  r = run_cli({"gpus", "RTX 4909"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "orchestrate: error: unknown GPU 'RTX 4909' (did you mean 'GeForce RTX 4090'?)\n");
  r = run_cli({"gpus", "--json"});
  EXPECT_GT(nlohmann::json::parse(r.out).size(), 100u);
}

// Issue 13: `gpus` searches by compute capability, by architecture and by a
// fragment of product names; a search nothing answers is exit 2.
TEST_F(CliTest, GpusSearchesByCcArchitectureAndFragment) {
  const auto names = [](const std::string& out) {
    std::vector<std::string> v;
    for (const auto& g : nlohmann::json::parse(out)) v.push_back(g["name"]);
    return v;
  };
  auto r = run_cli({"gpus", "--cc", "8.6", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& g : nlohmann::json::parse(r.out)) EXPECT_EQ(g["cc"], "8.6") << g["name"];
  auto listed = names(r.out);
  EXPECT_NE(std::ranges::find(listed, "A10G"), listed.end());
  EXPECT_NE(std::ranges::find(listed, "GeForce RTX 3090"), listed.end());

  r = run_cli({"gpus", "Blackwell", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  listed = names(r.out);
  EXPECT_NE(std::ranges::find(listed, "B200"), listed.end());
  EXPECT_NE(std::ranges::find(listed, "B300"), listed.end());  // Blackwell Ultra
  EXPECT_NE(std::ranges::find(listed, "GeForce RTX 5090"), listed.end());
  for (const auto& g : nlohmann::json::parse(r.out))
    EXPECT_EQ(std::string(g["architecture"]).rfind("Blackwell", 0), 0u) << g["name"];

  r = run_cli({"gpus", "RTX 50", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  listed = names(r.out);
  EXPECT_NE(std::ranges::find(listed, "GeForce RTX 5090"), listed.end());
  EXPECT_NE(std::ranges::find(listed, "GeForce RTX 5050"), listed.end());
  EXPECT_EQ(std::ranges::find(listed, "GeForce RTX 4090"), listed.end());

  r = run_cli({"gpus", "Blackwell", "--cc", "10.3", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& g : nlohmann::json::parse(r.out)) EXPECT_EQ(g["cc"], "10.3") << g["name"];

  r = run_cli({"gpus", "--cc", "8.8"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "orchestrate: error: no GPU in the tables has compute capability 8.8\n");
  r = run_cli({"gpus", "--cc", "eight"});
  EXPECT_EQ(r.code, 2);
  // Nothing close: the error says how to look instead.
  r = run_cli({"gpus", "NVIDIA Graphics Device"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "orchestrate: error: unknown GPU 'NVIDIA Graphics Device': list the tables with `orchestrate gpus`, or "
            "search them (`gpus Blackwell`, `gpus \"RTX 50\"`, `gpus --cc 8.6`)\n");
}

TEST_F(CliTest, HelpEverywhereAndUsageErrors) {
  for (const std::string cmd : {"plan", "gpus", "toolkits"}) {
    const auto r = run_cli({cmd, "--help"});
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_NE(r.out.find("--json"), std::string::npos) << cmd << ": " << r.out;
  }
  EXPECT_EQ(run_cli({"--help"}).code, 0);
  auto r = run_cli({"plann"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "orchestrate: error: unknown command 'plann' (did you mean 'plan'?)\n");
  r = run_cli({"toolkits", "--bogus"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(run_cli({}).code, 2);
}

TEST_F(CliTest, InspectJsonContract) {
  const auto file =
      write("k.fatbin", fatbin({{2, 80, 0x11}, {2, 90, 0x100011}, {1, 100, 0x200011}, {1, 90, 0x11}, {2, 80, 0x11}}));
  const auto r = run_cli({"inspect", file, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto j = nlohmann::json::parse(r.out);  // stdout is JSON and nothing else
  ASSERT_EQ(j["files"].size(), 1u);
  const auto& f = j["files"][0];
  EXPECT_EQ(f["path"], file);
  EXPECT_EQ(f["size"], std::filesystem::file_size(file));
  EXPECT_EQ(f["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(f["sha256"].get<std::string>().find_first_not_of("0123456789abcdef"), std::string::npos);
  // Sorted by compute capability, unique, PTX as compute_XX with its suffix.
  EXPECT_EQ(f["sass"], nlohmann::json({"sm_80", "sm_90a"}));
  EXPECT_EQ(f["ptx"], nlohmann::json({"compute_90", "compute_100f"}));
  EXPECT_EQ(f["entries"], 5);
  EXPECT_EQ(f["members"], nlohmann::json::array());
  EXPECT_EQ(f["format"], "fatbin");
  EXPECT_TRUE(f["damage"].is_null());
  EXPECT_EQ(j["warnings"], nlohmann::json::array());
}

TEST_F(CliTest, InspectTableShowsEachFileAndIndentsMembers) {
  const std::string fat = fatbin({{2, 80, 0x11}, {1, 90, 0x11}});
  const auto file = write("k.fatbin", fat);
  // An ar archive holding the same fatbin as member "k.fatbin" (GNU ar header, 60 bytes).
  std::string header = "k.fatbin/       0           0     0     644     " + std::to_string(fat.size());
  header.resize(58, ' ');
  const auto lib = write("libk.a", "!<arch>\n" + header + "`\n" + fat);
  const auto r = run_cli({"inspect", file, lib});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> lines;
  for (std::istringstream in(r.out); std::getline(in, lines.emplace_back());) {
  }
  lines.pop_back();
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_TRUE(lines[0].starts_with("FILE ")) << r.out;
  for (const std::string& line : {lines[1], lines[3]}) {
    EXPECT_NE(line.find("1 elf, 1 ptx"), std::string::npos) << r.out;
    EXPECT_NE(line.find(" sm_80 "), std::string::npos) << r.out;
    EXPECT_TRUE(line.ends_with(" compute_90")) << r.out;
  }
  EXPECT_TRUE(lines[1].starts_with(file + " ")) << r.out;
  EXPECT_TRUE(lines[2].starts_with(lib + " ")) << r.out;
  EXPECT_TRUE(lines[3].starts_with("  k.fatbin ")) << r.out;  // the member, by its name in the archive
  const std::string size = " " + std::to_string(fat.size()) + " B ";
  ASSERT_NE(lines[1].find(size), std::string::npos) << r.out;
  EXPECT_EQ(lines[1].find(size), lines[3].find(size)) << r.out;  // columns line up
}

TEST_F(CliTest, InspectMissingFileIsExitTwo) {
  const auto missing = (m_dir / "nope.so").string();
  const auto r = run_cli({"inspect", missing, "--json"});
  EXPECT_EQ(r.code, 2);
  // The file is an error entry of the report (issue 11: no more all-or-nothing).
  EXPECT_EQ(
      nlohmann::json::parse(r.out)["files"],
      nlohmann::json::parse(R"([{"path": ")" + missing + R"(", "error": "cannot read: No such file or directory"}])"));
  EXPECT_EQ(r.err, "orchestrate: error: " + missing + ": cannot read: No such file or directory\n");
  EXPECT_EQ(run_cli({"inspect", missing}).out, "");  // no table of nothing
  EXPECT_EQ(run_cli({"inspect"}).code, 2);           // no file at all is bad usage
}

bool has_raw_byte(const std::string& text, char byte) { return text.find(byte) != std::string::npos; }

std::string ustar_member(std::string_view name, const std::string& data) {
  return std::string(inspect::as_text(inspect::testing::ustar_member(name, inspect::as_bytes(data))));
}

// `inspect --json` died with json.exception.type_error.316 (exit 3, nothing
// on stdout) on a name with a byte that is not UTF-8; the table printed ESC
// sequences raw, so a file name could clear the terminal.
TEST_F(CliTest, InspectFileNamesThatAreNotUtf8OrHoldEscapesArePrintedEscaped) {
  const std::string bad = write("bad\xff.fatbin", fatbin({{2, 80, 0x11}}));
  const std::string esc = write("esc\x1b[2Jx.fatbin", fatbin({{2, 80, 0x11}}));
  const Result j = run_cli({"inspect", "--json", bad, esc});
  ASSERT_EQ(j.code, 0) << j.err;
  const nlohmann::json report = nlohmann::json::parse(j.out);
  EXPECT_EQ(report["files"][0]["path"], m_dir.string() + "/bad\\xff.fatbin");
  EXPECT_EQ(report["files"][0]["sass"], nlohmann::json({"sm_80"}));
  // Valid UTF-8 stays as it is; JSON writes the ESC as \u001b itself.
  EXPECT_EQ(report["files"][1]["path"], esc);
  EXPECT_FALSE(has_raw_byte(j.out, '\x1b')) << j.out;

  const Result t = run_cli({"inspect", bad, esc});
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find(m_dir.string() + "/bad\\xff.fatbin "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find(m_dir.string() + "/esc\\x1b[2Jx.fatbin "), std::string::npos) << t.out;
  for (const std::string* s : {&t.out, &t.err}) {
    EXPECT_FALSE(has_raw_byte(*s, '\x1b')) << *s;
    EXPECT_FALSE(has_raw_byte(*s, '\xff')) << *s;
  }
}

// Members: their names are the package's bytes, and libarchive's messages
// about them quote them.
TEST_F(CliTest, InspectPackageMemberNamesAreEscapedInTheReportAndInDamage) {
  // The last member is cut short: its damage names it.
  std::string tar = ustar_member("lib\xff.fatbin", fatbin({{2, 80, 0x11}})) +
                    ustar_member("e\x1b[2J.fatbin", fatbin({{2, 80, 0x11}})) +
                    ustar_member("cut\xfe\x1b[1A.bin", std::string(4096, 'z'));
  tar.resize(tar.size() - 2048);
  const std::string file = write("hostile.tar", tar);

  const Result j = run_cli({"inspect", "--json", file});
  EXPECT_EQ(j.code, 2) << j.err;  // the cut member is damage
  const nlohmann::json report = nlohmann::json::parse(j.out);
  const nlohmann::json& members = report["files"][0]["members"];
  ASSERT_EQ(members.size(), 3u) << report.dump(2);
  EXPECT_EQ(members[0]["path"], file + "!/lib\\xff.fatbin");
  EXPECT_EQ(members[0]["sass"], nlohmann::json({"sm_80"}));
  EXPECT_EQ(members[1]["path"], file + "!/e\x1b[2J.fatbin");
  EXPECT_EQ(members[2]["path"], file + "!/cut\\xfe\x1b[1A.bin");
  EXPECT_NE(members[2]["damage"]["what"].get<std::string>().find("member 'cut\\xfe\x1b[1A.bin' cannot be read"),
            std::string::npos)
      << members[2]["damage"];
  EXPECT_FALSE(has_raw_byte(j.out, '\x1b'));

  const Result t = run_cli({"inspect", file});
  EXPECT_EQ(t.code, 2);
  EXPECT_NE(t.out.find("  lib\\xff.fatbin "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("  e\\x1b[2J.fatbin "), std::string::npos) << t.out;
  EXPECT_NE(t.err.find("member 'cut\\xfe\\x1b[1A.bin' cannot be read"), std::string::npos) << t.err;
  for (const std::string* s : {&t.out, &t.err}) {
    EXPECT_FALSE(has_raw_byte(*s, '\x1b')) << *s;
    EXPECT_FALSE(has_raw_byte(*s, '\xff')) << *s;
    EXPECT_FALSE(has_raw_byte(*s, '\xfe')) << *s;
  }
}

// One unreadable argument among several printed no report at all.
TEST_F(CliTest, InspectEveryReadableFileIsReportedAndEachOtherIsAnErrorEntry) {
  const std::string ok = write("ok.fatbin", fatbin({{2, 80, 0x11}}));
  const std::string missing = (m_dir / "missing.so").string();
  const std::string dir = (m_dir / "adir").string();
  std::filesystem::create_directory(dir);
  const std::string fifo = (m_dir / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string other = write("notes.txt", "hello\n");

  const Result j = run_cli({"inspect", "--json", ok, missing, dir, fifo, other});
  EXPECT_EQ(j.code, 2);
  const nlohmann::json files = nlohmann::json::parse(j.out)["files"];
  ASSERT_EQ(files.size(), 5u);
  EXPECT_EQ(files[0]["sass"], nlohmann::json({"sm_80"}));
  EXPECT_EQ(files[1], nlohmann::json({{"path", missing}, {"error", "cannot read: No such file or directory"}}));
  EXPECT_EQ(files[2], nlohmann::json({{"path", dir}, {"error", "cannot read: Is a directory"}}));
  EXPECT_EQ(files[3], nlohmann::json({{"path", fifo}, {"error", "cannot read: not a regular file"}}));
  EXPECT_EQ(files[4]["format"], "other");
  EXPECT_EQ(j.err, "orchestrate: error: " + missing + ": cannot read: No such file or directory\n" +
                       "orchestrate: error: " + dir + ": cannot read: Is a directory\n" +
                       "orchestrate: error: " + fifo + ": cannot read: not a regular file\n");

  const Result t = run_cli({"inspect", ok, missing, other});
  EXPECT_EQ(t.code, 2);
  EXPECT_EQ(t.err, "orchestrate: error: " + missing + ": cannot read: No such file or directory\n");
  std::vector<std::string> lines;
  for (std::istringstream in(t.out); std::getline(in, lines.emplace_back());) {
  }
  lines.pop_back();
  ASSERT_EQ(lines.size(), 3u) << t.out;  // the header, ok.fatbin, notes.txt
  EXPECT_TRUE(lines[1].starts_with(ok + " ")) << t.out;
  EXPECT_TRUE(lines[2].starts_with(other + " ")) << t.out;
}

// The exit code is the worst of all inputs: an unreadable file (2) over a
// GPU without a kernel image (1), with the verdicts still reported.
TEST_F(CliTest, InspectAnUnreadableFileOutranksAFailedVerdict) {
  const std::string sm80 = write("sm80.fatbin", fatbin({{2, 80, 0x11}}));
  const std::string missing = (m_dir / "missing.so").string();
  EXPECT_EQ(run_cli({"inspect", sm80, "--cc", "7.5"}).code, 1);
  const Result j = run_cli({"inspect", sm80, missing, "--cc", "7.5", "--json"});
  EXPECT_EQ(j.code, 2);
  const nlohmann::json files = nlohmann::json::parse(j.out)["files"];
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0]["verdicts"][0]["outcome"], "none");
  EXPECT_EQ(files[1]["error"], "cannot read: No such file or directory");
}

// What an H200 (9.0) really did (cuda-compat.md 6.1), as exit codes.
TEST_F(CliTest, InspectVerdictExitCodes) {
  const auto sm80 = write("sm80.fatbin", fatbin({{2, 80, 0x11}}));
  const auto ptx80 = write("ptx80.fatbin", fatbin({{1, 80, 0x11}}));
  const auto sm90 = write("sm90.fatbin", fatbin({{2, 90, 0x11}}));

  auto r = run_cli({"inspect", sm80, "--gpu", "H200"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("none"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(error 209); add sm_90 or compute_90"), std::string::npos) << r.out;

  r = run_cli({"inspect", ptx80, "--cc", "9.0"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("orchestrate: warning: " + ptx80 + ": CC 9.0 runs by JIT of compute_80 PTX"), std::string::npos)
      << r.err;

  r = run_cli({"inspect", sm90, ptx80, "--gpu", "H200", "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["files"][0]["verdicts"][0]["outcome"], "native");
  EXPECT_EQ(j["files"][0]["verdicts"][0]["decided_by"], "sm_90");
  EXPECT_EQ(j["files"][1]["verdicts"][0]["outcome"], "jit");
  EXPECT_EQ(j["files"][1]["verdicts"][0]["decided_by"], "compute_80");
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(r.err, "");  // JSON mode: the warning is in the document

  // One GPU of a tier without a kernel image fails the whole check.
  const auto config = write("orchestrate.yaml", k_config);
  r = run_cli({"inspect", sm80, "--tier", "tier-new", "-f", config, "--json"});
  EXPECT_EQ(r.code, 1) << r.err;
  std::map<std::string, std::string> outcome;
  const auto tier = nlohmann::json::parse(r.out);
  for (const auto& v : tier["files"][0]["verdicts"])
    outcome[v["tier"].get<std::string>() + ": " + v["name"].get<std::string>() + " (" + v["cc"].get<std::string>() +
            ")"] = v["outcome"].get<std::string>();
  EXPECT_EQ(outcome["tier-new: A100 (8.0)"], "native");
  EXPECT_EQ(outcome["tier-new: GeForce RTX 4090 (8.9)"], "native");
  EXPECT_EQ(outcome["tier-new: H100 (9.0)"], "none");
}

TEST_F(CliTest, InspectVerdictUsageErrors) {
  const auto sm80 = write("sm80.fatbin", fatbin({{2, 80, 0x11}}));
  auto r = run_cli({"inspect", sm80, "--gpu", "H2000"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown GPU 'H2000' (did you mean"), std::string::npos) << r.err;
  r = run_cli({"inspect", sm80, "--cc", "9.0a"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("(did you mean '9.0'?)"), std::string::npos) << r.err;
  const auto config = write("orchestrate.yaml", k_config);
  r = run_cli({"inspect", sm80, "--tier", "tier-nwe", "-f", config});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no tier 'tier-nwe' in " + config + " (did you mean 'tier-new'?)"), std::string::npos) << r.err;
  // A listing is cuobjdump's output: it does not mix with verdicts or JSON.
  EXPECT_EQ(run_cli({"inspect", sm80, "--list-elf", "--json"}).code, 2);
}

TEST_F(CliTest, InspectDamageIsExitTwoWithWhatCameBefore) {
  const auto file = write("junk.fatbin", fatbin({{2, 80, 0x11}}) + "JUNKJUNK");
  const auto r = run_cli({"inspect", file, "--json"});
  EXPECT_EQ(r.code, 2);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["files"][0]["sass"], nlohmann::json({"sm_80"}));
  EXPECT_EQ(j["files"][0]["damage"]["offset"], 88);  // 16-byte container header + 64-byte entry header + 8 payload
  EXPECT_NE(r.err.find("orchestrate: error: " + file + ": damaged at offset 88 (0x58): "), std::string::npos) << r.err;
}

// List mode is cuobjdump's contract: its streams and exit codes, 255 included.
TEST_F(CliTest, InspectListPassesCuobjdumpThrough) {
  const auto file = write("k.fatbin", fatbin({{2, 80, 0x11}, {1, 80, 0x11}}));
  const auto elf = run_cli({"inspect", "--list-elf", file});
  EXPECT_EQ(elf.code, 0) << elf.err;
  EXPECT_TRUE(elf.out.starts_with("ELF file    1: ")) << elf.out;
  EXPECT_EQ(run_cli({"inspect", "-lelf", file}).out, elf.out);  // cuobjdump's spelling
  const auto both = run_cli({"inspect", "-lelf", "-lptx", file});
  EXPECT_NE(both.out.find("PTX file    1: "), std::string::npos) << both.out;
  EXPECT_EQ(both.out, run_cli({"inspect", "--list-elf", "--list-ptx", file}).out);

  // (Under 16 bytes cuobjdump says "Invalid fatbin header" instead.)
  const auto text = write("notes.txt", "just some notes, not a binary\n");
  const auto none = run_cli({"inspect", "--list-elf", text});
  EXPECT_EQ(none.code, 255);
  EXPECT_NE((none.out + none.err).find("does not contain device code"), std::string::npos) << none.out << none.err;

  const auto help = run_cli({"inspect", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("255"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--json"), std::string::npos) << help.out;
}

// push, pull and fetch spell the registry deadlines the same way, say their
// defaults and variables, and refuse a deadline that is not one (exit 2).
TEST_F(CliTest, TransfersTakeTheRegistryDeadlines) {
  for (const char* cmd : {"push", "pull", "fetch"}) {
    SCOPED_TRACE(cmd);
    const auto help = run_cli({cmd, "--help"});
    EXPECT_EQ(help.code, 0);
    for (const char* said :
         {"--timeout", "(default 60)", "ORCHESTRATE_TIMEOUT", "--min-rate", "512KiB (default)", "ORCHESTRATE_MIN_RATE"})
      EXPECT_NE(help.out.find(said), std::string::npos) << said << " not in\n" << help.out;
  }
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--timeout", "0"},
                                              {"--timeout", "soon"},
                                              {"--min-rate", "fast"},
                                              {"--min-rate", "0"}}) {
    std::vector<std::string> args = {"fetch", "saxpy", "--tier", "t"};
    args.insert(args.end(), bad.begin(), bad.end());
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << bad[0] << " " << bad[1] << ": " << r.err;
    EXPECT_NE(r.err.find(bad[0]), std::string::npos) << r.err;
  }
}

// With no host toolkit and no registry, the plan takes the newest toolkit an
// offline image provides and notes the newer one that would also serve,
// with the official tag a site with a registry would use (issue 13).
TEST_F(CliTest, PlanWithoutAnOfflineImageNamesTheOfficialTag) {
  const auto config = write("orchestrate.yaml", k_config);
  const ScopedEnv host("ORCHESTRATE_HOST_CUDA", (m_dir / "no-cuda").string());
  auto r = run_cli({"plan", "tier-new", "-f", config, "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& p = j["plans"][0];
  EXPECT_EQ(p["toolkit"], "12.4");
  EXPECT_EQ(p["image"], "orchestrate/cuda:12.4-trixie");
  EXPECT_EQ(p["notes"], nlohmann::json::array({"CUDA 13.0 would also serve this tier; no image provides it here (with "
                                               "registry access: docker.io/nvidia/cuda:13.0.3-cudnn-devel-ubuntu22.04, "
                                               "ORCHESTRATE_IMAGE_PREFERENCE=official)"}));
  r = run_cli({"plan", "tier-new", "-f", config});
  EXPECT_NE(r.out.find("    note: CUDA 13.0 would also serve this tier; no image provides it here"), std::string::npos)
      << r.out;

  // A site with a registry says so, and gets that tag.
  {
    const ScopedEnv official("ORCHESTRATE_IMAGE_PREFERENCE", "official");
    r = run_cli({"plan", "tier-new", "-f", config, "--json"});
    j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["plans"][0]["image"], "docker.io/nvidia/cuda:13.0.3-cudnn-devel-ubuntu22.04");
    EXPECT_EQ(j["plans"][1]["image"], "docker.io/nvidia/cuda:12.5.1-cudnn-devel-ubuntu22.04");  // tf: tested 12.5
  }
  const ScopedEnv bad("ORCHESTRATE_IMAGE_PREFERENCE", "registry");
  r = run_cli({"plan", "tier-new", "-f", config, "--json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "orchestrate: error: ORCHESTRATE_IMAGE_PREFERENCE is 'registry'; expected 'offline' or 'official'\n");
}

TEST_F(CliTest, ImagesBuildUsageAndEngineErrors) {
  auto r = run_cli({"images", "build", "host-bookwrm"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "orchestrate: error: unknown image 'host-bookwrm' (known: 11.8-bookworm, 12.4-trixie, host-bookworm) "
            "(did you mean 'host-bookworm'?)\n");
  EXPECT_EQ(r.out, "");
  // No engine at the socket: exit 3 before any debootstrap.
  const auto socket = (m_dir / "missing.sock").string();
  r = run_cli({"images", "build", "orchestrate/cuda:11.8-bookworm", "--engine-socket", socket, "--images-dir",
               ORC_SOURCE_DIR "/images", "--cache", (m_dir / "cache").string()});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("orchestrate: error: cannot reach the engine at " + socket + ":"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(m_dir / "cache"));
  // Setup scripts that are not there: exit 2, saying where to point.
  r = run_cli({"images", "build", "12.4-trixie", "--images-dir", (m_dir / "nowhere").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--images-dir"), std::string::npos) << r.err;
  EXPECT_EQ(run_cli({"images"}).code, 2);  // list or build
  EXPECT_EQ(run_cli({"images", "build", "--help"}).code, 0);
}

TEST_F(CliTest, ImagesListShowsTheCatalogAndTheStateFile) {
  const ScopedEnv cache("ORCHESTRATE_CACHE_DIR", m_dir.string());
  const auto host = fake_host_cuda(m_dir / "cuda", "13.0");
  write("images.v1.json", R"({"schema": "orchestrate.images.v1", "images": [
    {"name": "11.8-bookworm", "reference": "orchestrate/cuda:11.8-bookworm", "id": "sha256:abc",
     "created": "2026-11-30T10:00:00Z", "toolkit": "11.8.89", "packages": ["nvidia-cuda-toolkit=11.8.89"]}]})");
  const auto socket = (m_dir / "missing.sock").string();
  auto r = run_cli({"images", "list", "--json", "--engine-socket", socket});
  EXPECT_EQ(r.code, 0) << r.err;  // an unreachable engine is reported, not fatal
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["engine"]["reachable"], false);
  EXPECT_NE(j["engine"]["error"].get<std::string>().find(socket), std::string::npos);
  ASSERT_EQ(j["offline"].size(), 3u);
  EXPECT_EQ(j["offline"][0]["reference"], "orchestrate/cuda:11.8-bookworm");
  EXPECT_EQ(j["offline"][0]["built"]["id"], "sha256:abc");
  EXPECT_TRUE(j["offline"][0]["in_engine"].is_null());
  EXPECT_EQ(j["offline"][2]["source"], "host_mount");
  EXPECT_EQ(j["offline"][2]["host_toolkit"], "13.0.88");
  bool found = false;
  for (const auto& o : j["official"])
    if (o["toolkit"] == "12.4") {
      found = true;
      EXPECT_EQ(o["cudnn_reference"], "docker.io/nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04");
      EXPECT_EQ(o["cudnn"], "9.1.0.70");
    }
  EXPECT_TRUE(found);

  // A state file of another schema reads as empty, never as an error.
  write("images.v1.json", R"({"schema": "orchestrate.images.v0", "images": [{"reference": "x"}]})");
  r = run_cli({"images", "list", "--json", "--engine-socket", socket});
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(nlohmann::json::parse(r.out)["offline"][0]["built"].is_null());
  write("images.v1.json", "{not json");
  EXPECT_EQ(run_cli({"images", "list", "--engine-socket", socket}).code, 0);
}

// A one-recipe configuration whose tier-next build needs the host-mount
// image, for the engine-failure cases below (they fail before any image is
// used).
std::string engine_case_config(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir / "src");
  std::ofstream(dir / "orchestrate.yaml") << "toolkits: [\"13.0\"]\n"
                                             "tiers:\n  tier-next: {gpus: [B200]}\n"
                                             "recipes:\n  - name: k\n    framework: nvcc\n"
                                             "    source: {path: src}\n    tiers: [tier-next]\n"
                                             "    build: [[nvcc, -o, k, k.cu]]\n    artifacts: [k]\n";
  return (dir / "orchestrate.yaml").string();
}

// The engine is reached before anything else is checked: a socket that is
// not there is exit 3 with the socket and what to do, not a complaint about
// the image.
TEST_F(CliTest, BuildWithoutTheEnginesSocketExitsThreeAndSaysWhatToDo) {
  const auto config = engine_case_config(m_dir);
  const ScopedEnv docker("DOCKER_HOST", "unix://" + (m_dir / "docker.sock").string());
  const ScopedEnv cache("ORCHESTRATE_CACHE_DIR", (m_dir / "cache").string());
  const auto r = run_cli({"build", "tier-next", "-f", config});
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  // Errors are on stderr, in the one format, and not in the report on stdout.
  EXPECT_NE(r.err.find("orchestrate: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot reach the docker engine at " + (m_dir / "docker.sock").string()), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("is the daemon running?"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("never built"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("error"), std::string::npos) << r.out;
}

// A socket this user may not open (root's 0600 socket, tried as nobody).
TEST_F(CliTest, BuildWithAPermissionDeniedSocketExitsThreeAndNamesTheGroup) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to create a socket another user cannot open";
  const std::filesystem::path shared = "/tmp/orc-cli-perm-" + std::to_string(::getpid());
  std::filesystem::create_directories(shared);
  std::filesystem::permissions(shared, std::filesystem::perms::all);
  const auto config = engine_case_config(shared);
  const std::filesystem::path socket_path = shared / "docker.sock";
  const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
  ASSERT_EQ(::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  ::chmod(socket_path.c_str(), 0600);

  int out_pipe[2];
  ASSERT_EQ(::pipe(out_pipe), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(out_pipe[0]);
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(100);
    ::setenv("DOCKER_HOST", ("unix://" + socket_path.string()).c_str(), 1);
    ::setenv("ORCHESTRATE_CACHE_DIR", (shared / "cache").c_str(), 1);
    const auto r = run_cli({"build", "tier-next", "-f", config});
    const std::string said = r.out + r.err;
    const auto written = ::write(out_pipe[1], said.data(), said.size());
    ::_exit(written == static_cast<ssize_t>(said.size()) ? r.code : 101);
  }
  ::close(out_pipe[1]);
  std::string said;
  char buf[4096];
  for (ssize_t n; (n = ::read(out_pipe[0], buf, sizeof buf)) > 0;) said.append(buf, static_cast<std::size_t>(n));
  ::close(out_pipe[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ::close(listener);
  std::filesystem::remove_all(shared);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << said;
  EXPECT_NE(said.find("permission denied"), std::string::npos) << said;
  EXPECT_NE(said.find("member of its group"), std::string::npos) << said;
}

}  // namespace
}  // namespace orc::cli
