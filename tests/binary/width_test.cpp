// Issue 29: in a terminal of 80, 100 or 200 columns ($COLUMNS, as a
// terminal's width is read when stdout is not one), every line of the help
// CLI11 lays out and of the tables fits, wrapped at spaces and never cut
// mid-word; the commands' hand-written footers are laid out for 100.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string run_at(int columns, const std::string& args) {
  const std::string command = "env COLUMNS=" + std::to_string(columns) + " " + ORC_BINARY + " " + args + " 2>&1";
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    std::array<char, 4096> buffer{};
    while (const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) out.append(buffer.data(), n);
    ::pclose(pipe);
  }
  return out;
}

std::size_t width_of(const std::string& line) {
  std::size_t n = 0;
  for (const char c : line) n += (c & 0xC0) != 0x80;
  return n;
}

// The lines wider than `limit`, each with its width.
std::string too_wide(const std::string& text, std::size_t limit) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line))
    if (width_of(line) > limit) out += "[" + std::to_string(width_of(line)) + "] " + line + "\n";
  return out;
}

// The part of a help text CLI11 lays out: up to the footer, which follows the
// last option or subcommand after a blank line.
std::string laid_out_part(const std::string& help) {
  const auto last_option = help.rfind("\n  -");
  const auto end = help.find("\n\n", last_option == std::string::npos ? 0 : last_option);
  return help.substr(0, end);
}

const std::vector<std::string> k_commands = {"plan",     "gpus",  "toolkits", "inspect", "stamp", "build", "images",
                                             "key",      "cache", "push",     "promote", "pull",  "fetch", "watch",
                                             "schedule", "tiers", "k8s",      "smoke",   "doctor"};

TEST(Width, TheTopLevelHelpFitsEveryWidthWholly) {
  for (const int columns : {80, 100, 200}) {
    const std::string help = run_at(columns, "--help");
    ASSERT_NE(help.find("Subcommands:"), std::string::npos) << help;
    EXPECT_EQ(too_wide(help, columns), "") << columns << " columns";
  }
  // Wrapped, not cut: with the line breaks and indents taken out, the watch
  // line's words are all there.
  std::string words;
  for (const char c : run_at(80, "--help"))
    if (c != ' ' && c != '\n') words += c;
  EXPECT_NE(words.find("rebuildeachrecipextieranewertoolkit"), std::string::npos);
  EXPECT_NE(words.find("(--once,or--intervalDasaservice)"), std::string::npos);
}

TEST(Width, EachCommandsOptionsFitAndItsFooterFitsAHundred) {
  for (const int columns : {80, 100, 200})
    for (const auto& command : k_commands) {
      const std::string help = run_at(columns, command + " --help");
      ASSERT_NE(help.find("Usage:"), std::string::npos) << command << ": " << help;
      EXPECT_EQ(too_wide(laid_out_part(help), columns), "") << command << " at " << columns << " columns";
      EXPECT_EQ(too_wide(help, std::max(columns, 100)), "") << command << " at " << columns << " columns";
    }
}

TEST(Width, TablesFitAndWrapAtSpaces) {
  for (const int columns : {80, 100, 200})
    for (const std::string args : {"gpus", "toolkits", "toolkits --cudnn"}) {
      const std::string table = run_at(columns, args);
      ASSERT_FALSE(table.empty());
      EXPECT_EQ(too_wide(table, columns), "") << args << " at " << columns << " columns";
    }
}

// A real library with 5,449 device entries and SASS for eight archs: the row
// that was 229 columns.
TEST(Width, InspectOfALibraryWithManyArchsFits) {
  const std::filesystem::path lib = "/usr/local/cuda/lib64/libcublasLt.so.13";
  if (!std::filesystem::exists(lib)) GTEST_SKIP() << lib << " is not on this machine (CUDA 13's cuBLASLt)";
  for (const int columns : {80, 100, 200}) {
    const std::string table = run_at(columns, "inspect " + lib.string());
    ASSERT_NE(table.find("sm_90a"), std::string::npos) << table;
    EXPECT_EQ(too_wide(table, columns), "") << columns << " columns";
  }
  // At 200 columns nothing needs wrapping: the row is one line.
  const std::string wide = run_at(200, "inspect " + lib.string());
  EXPECT_NE(wide.find("sm_75 sm_80 sm_86"), std::string::npos) << wide;
  // At 80 the columns cannot all fit: each file is a block of its own,
  // every value whole.
  const std::string narrow = run_at(80, "inspect " + lib.string());
  EXPECT_NE(narrow.find("SHA256      656298c804f5adbb"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("libcublasLt.so.13"), std::string::npos) << narrow;
}

}  // namespace
