// The one table renderer: aligned columns that never run together, the
// last column wrapped with a hanging indent, everything within 100 columns.
#include "orchestrator/cli/table.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "orchestrator/arch/gpu_db.hpp"
#include "tests/unit/cli/run_cli.hpp"

namespace orc::cli {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(Table, ColumnsAreAsWideAsTheirWidestCellPlusTwo) {
  Table t({"A", "BB", "C"});
  t.add_row({"long cell", "x", "last"});
  t.add_row({"y", "wider one", ""});
  EXPECT_EQ(t.render(), "A          BB         C\nlong cell  x          last\ny          wider one\n");
}

TEST(Table, CellsNeverRunTogether) {
  Table t({"GPU", "CC"});
  t.add_row({"RTX PRO 6000 Blackwell Server Edition", "12.0"});
  EXPECT_NE(t.render().find("Server Edition  12.0"), std::string::npos) << t.render();
}

TEST(Table, TheLastColumnWrapsWithAHangingIndentWithinTheWidth) {
  Table t({"GPU", "OUTCOME", "DETAIL"});
  const std::string reason =
      "no SASS for sm_90 and no PTX at or below compute_90: the driver cannot load it (error 209); add sm_90 or "
      "compute_90 to the build's archs";
  t.add_row({"tier-new: H100 (9.0)", "none", reason});
  const auto lines = lines_of(t.render());
  ASSERT_GT(lines.size(), 2u);
  const std::size_t start = lines[1].find("no SASS");
  for (std::size_t i = 2; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].find_first_not_of(' '), start + 2) << t.render();  // hangs two columns in
  }
  std::string joined;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_LE(lines[i].size(), k_table_width) << lines[i];
    joined += (i == 1 ? lines[i].substr(start) : " " + lines[i].substr(lines[i].find_first_not_of(' ')));
  }
  EXPECT_EQ(joined, reason);  // nothing lost, nothing added
}

TEST(Table, IndentAndNotes) {
  Table t;
  t.add_row({"a", "b"});
  t.add_note("! a note");
  EXPECT_EQ(t.render(4), "    a  b\n    ! a note\n");
}

TEST(Table, AWordLongerThanTheColumnStaysWhole) {
  EXPECT_EQ(wrap_words("short averyveryverylongword end", 10),
            (std::vector<std::string>{"short", "averyveryverylongword", "end"}));
  EXPECT_EQ(wrap_words("", 10), (std::vector<std::string>{""}));
}

TEST(Table, GpusAndToolkitsFitAndLineUp) {
  for (const auto& args : {std::vector<std::string>{"gpus"}, {"toolkits"}, {"toolkits", "--cudnn"}}) {
    const auto r = testing::run_cli(args);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto lines = lines_of(r.out);
    ASSERT_GT(lines.size(), 5u);
    for (const auto& line : lines) EXPECT_LE(display_width(line), k_table_width) << line;
  }
  const auto gpus = testing::run_cli({"gpus"}).out;
  // The widest name is followed by the column gap, then its CC.
  const arch::Gpu* widest = &arch::gpu_table().front();
  for (const auto& g : arch::gpu_table())
    if (g.name.size() > widest->name.size()) widest = &g;
  EXPECT_NE(gpus.find(std::string(widest->name) + "  " + widest->cc.dotted()), std::string::npos) << gpus;
  // Every row's CC starts where the header's does.
  const auto lines = lines_of(gpus);
  const std::size_t cc = lines[0].find("CC");
  for (std::size_t i = 1; i < lines.size(); ++i) EXPECT_EQ(lines[i][cc - 1], ' ') << lines[i];
}

}  // namespace
}  // namespace orc::cli
