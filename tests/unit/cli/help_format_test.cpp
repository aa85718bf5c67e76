// Command footers laid out for the width the help is printed at.
#include "orchestrator/cli/help_format.hpp"

#include <gtest/gtest.h>

namespace orc::cli {
namespace {

TEST(ReflowFooter, LinesThatFitStayAsWritten) {
  const std::string text = "A paragraph\nof two lines.\n\nChecks:\n  engine    reachable\n  remote    answers";
  EXPECT_EQ(reflow_footer(text, 40), text);
}

TEST(ReflowFooter, AWideProseRunIsJoinedAndWrappedAtSpaces) {
  const std::string text =
      "Each recipe x tier's newest verified artifact set in the local store is judged\nagainst the tier.\n\nNext.";
  EXPECT_EQ(reflow_footer(text, 30),
            "Each recipe x tier's newest\n"
            "verified artifact set in the\n"
            "local store is judged against\n"
            "the tier.\n"
            "\n"
            "Next.");
}

TEST(ReflowFooter, AWideIndentedRowWrapsUnderItsSecondColumn) {
  const std::string text =
      "Labels:\n  NVIDIA_REQUIRE_CUDA=cuda>=M.0    M: the newest CUDA runtime major the image links";
  EXPECT_EQ(reflow_footer(text, 60),
            "Labels:\n"
            "  NVIDIA_REQUIRE_CUDA=cuda>=M.0    M: the newest CUDA\n"
            "                                   runtime major the image\n"
            "                                   links");
  // A row of one column wraps under its own indent; a word longer than the
  // room stays whole.
  EXPECT_EQ(reflow_footer("    orchestrate inspect docker://registry/a-long-name:tag", 30),
            "    orchestrate inspect\n    docker://registry/a-long-name:tag");
}

}  // namespace
}  // namespace orc::cli
