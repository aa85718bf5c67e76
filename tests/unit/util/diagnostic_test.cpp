#include "orchestrator/util/diagnostic.hpp"

#include <gtest/gtest.h>

#include <array>

#include "orchestrator/util/strings.hpp"

namespace orc::util {
namespace {

TEST(Diagnostic, OneFormatByteForByte) {
  const Diagnostic d{.where = {"recipes/x.yaml", 12, 7}, .message = "unknown key 'archs'", .suggestion = "arch"};
  EXPECT_EQ(d.headline(), "orchestrate: error: recipes/x.yaml:12:7: unknown key 'archs' (did you mean 'arch'?)");
  const Diagnostic w{.severity = Severity::warning, .where = {"o.yaml", 3, 0}, .message = "tier 'x' is not used"};
  EXPECT_EQ(w.headline(), "orchestrate: warning: o.yaml:3: tier 'x' is not used");
  EXPECT_EQ(Diagnostic{.message = "plain"}.headline(), "orchestrate: error: plain");
}

TEST(Diagnostic, CaretUnderTheColumn) {
  const Diagnostic d{.where = {"o.yaml", 2, 5}, .message = "bad", .source_line = "    framwork: x"};
  EXPECT_EQ(d.render(), "orchestrate: error: o.yaml:2:5: bad\n        framwork: x\n        ^\n");
}

TEST(Failure, CarriesCodeAndDiagnostics) {
  try {
    fail_input({"a.yaml", 1, 2}, "boom", "bam");
    FAIL() << "fail_input returned";
  } catch (const Failure& f) {
    EXPECT_EQ(f.code(), ExitCode::bad_input);
    ASSERT_EQ(f.diagnostics().size(), 1u);
    EXPECT_EQ(f.diagnostics()[0].headline(), "orchestrate: error: a.yaml:1:2: boom (did you mean 'bam'?)");
  }
}

TEST(Strings, DidYouMean) {
  const std::array<std::string_view, 4> keys{"framework", "tiers", "source", "requires"};
  EXPECT_EQ(did_you_mean("framwork", keys), "framework");
  EXPECT_EQ(did_you_mean("tier", keys), "tiers");
  EXPECT_EQ(did_you_mean("Source", keys), "source");
  EXPECT_EQ(did_you_mean("zzzzzz", keys), "");
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(Strings, SplitTrimJoin) {
  EXPECT_EQ(split_any("8.0;8.6 9.0", "; "), (std::vector<std::string>{"8.0", "8.6", "9.0"}));
  EXPECT_EQ(split_any(";;", ";"), std::vector<std::string>{});
  EXPECT_EQ(trim("  x \t"), "x");
  EXPECT_EQ(split_words("  75 80  90a "), (std::vector<std::string_view>{"75", "80", "90a"}));
  EXPECT_TRUE(split_words("   ").empty());
  const std::vector<std::string> parts{"a", "b"};
  EXPECT_EQ(join(parts, ", "), "a, b");
}

}  // namespace
}  // namespace orc::util
