#include "orchestrator/arch/compute_capability.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace orc::arch {
namespace {

struct ParseCase {
  std::string_view text;
  ComputeCapability expected;
};

// Every notation users and frameworks write for one CC.
TEST(ComputeCapability, ParsesEveryNotation) {
  const std::vector<ParseCase> cases = {
      {"8.6", {8, 6}},
      {"86", {8, 6}},
      {"sm_86", {8, 6}},
      {"compute_86", {8, 6}},
      {"sm_90a", {9, 0, Variant::arch_specific}},
      {"9.0a", {9, 0, Variant::arch_specific}},
      {"100f", {10, 0, Variant::family}},
      {"lto_90", {9, 0}},
      {"120", {12, 0}},
      {"12.1", {12, 1}},
      {"SM_86", {8, 6}},
      {" 8.6 ", {8, 6}},
      {"10.3f", {10, 3, Variant::family}},
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(c.text);
    const auto cc = ComputeCapability::parse(c.text);
    ASSERT_TRUE(cc.has_value()) << cc.error();
    EXPECT_EQ(*cc, c.expected) << cc->dotted();
  }
}

TEST(ComputeCapability, RejectsWhatIsNotACc) {
  for (std::string_view text : {"", "8", "8.66", "sm_", "abc", "1234", "compute_", "a", "8.", ".6", "0.5", "sm_8x"}) {
    SCOPED_TRACE(text);
    const auto cc = ComputeCapability::parse(text);
    ASSERT_FALSE(cc.has_value()) << cc->dotted();
    EXPECT_NE(cc.error().find("is not a compute capability"), std::string::npos) << cc.error();
  }
}

TEST(ComputeCapability, PrintsEveryNotation) {
  const ComputeCapability ampere{8, 6};
  EXPECT_EQ(ampere.dotted(), "8.6");
  EXPECT_EQ(ampere.digits(), "86");
  EXPECT_EQ(ampere.sm(), "sm_86");
  EXPECT_EQ(ampere.compute(), "compute_86");
  EXPECT_EQ(ampere.lto(), "lto_86");
  EXPECT_EQ(ampere.number(), 86);
  EXPECT_EQ(ampere.suffix(), "");

  const ComputeCapability hopper_a{9, 0, Variant::arch_specific};
  EXPECT_EQ(hopper_a.dotted(), "9.0a");
  EXPECT_EQ(hopper_a.digits(), "90a");
  EXPECT_EQ(hopper_a.sm(), "sm_90a");
  EXPECT_EQ(hopper_a.compute(), "compute_90a");

  const ComputeCapability blackwell_f{10, 0, Variant::family};
  EXPECT_EQ(blackwell_f.dotted(), "10.0f");
  EXPECT_EQ(blackwell_f.digits(), "100f");
  EXPECT_EQ(blackwell_f.sm(), "sm_100f");
  EXPECT_EQ(blackwell_f.number(), 100);

  EXPECT_EQ(ComputeCapability(12, 0).digits(), "120");
  EXPECT_EQ(ComputeCapability(12, 1).sm(), "sm_121");
}

// Printing then parsing gives back the same CC in every notation.
TEST(ComputeCapability, RoundTripsThroughEveryNotation) {
  for (const ComputeCapability cc : {ComputeCapability{3, 5}, ComputeCapability{8, 9},
                                     ComputeCapability{9, 0, Variant::arch_specific},
                                     ComputeCapability{10, 3, Variant::family}, ComputeCapability{12, 1}}) {
    for (const std::string& text : {cc.dotted(), cc.digits(), cc.sm(), cc.compute(), cc.lto()}) {
      SCOPED_TRACE(text);
      const auto parsed = ComputeCapability::parse(text);
      ASSERT_TRUE(parsed.has_value()) << parsed.error();
      EXPECT_EQ(*parsed, cc);
    }
  }
}

// Numeric, not lexical or floating-point: "10.0" < "9.0" as strings.
TEST(ComputeCapability, OrdersNumerically) {
  EXPECT_GT(ComputeCapability(10, 0), ComputeCapability(9, 0));
  EXPECT_GT(ComputeCapability(12, 0), ComputeCapability(10, 3));
  EXPECT_LT(ComputeCapability(8, 6), ComputeCapability(8, 9));
  EXPECT_LT(ComputeCapability(9, 0), ComputeCapability(9, 0, Variant::arch_specific));
  EXPECT_LT(ComputeCapability(9, 0, Variant::arch_specific), ComputeCapability(10, 0));
  EXPECT_NE(ComputeCapability(9, 0), ComputeCapability(9, 0, Variant::arch_specific));
  EXPECT_EQ(ComputeCapability(9, 0, Variant::arch_specific).base(), ComputeCapability(9, 0));
  EXPECT_EQ(ComputeCapability(10, 0).with(Variant::family), ComputeCapability(10, 0, Variant::family));
}

struct TokenCase {
  std::string_view text;
  ComputeCapability cc;
  bool sass;
  bool ptx;
  bool lto;
};

TEST(ArchToken, ParsesEveryArchListNotation) {
  const std::vector<TokenCase> cases = {
      {"8.6+PTX", {8, 6}, true, true, false},
      {"86-real", {8, 6}, true, false, false},
      {"86-virtual", {8, 6}, false, true, false},
      {"sm_86", {8, 6}, true, false, false},
      {"compute_86", {8, 6}, false, true, false},
      {"lto_90", {9, 0}, false, false, true},
      {"8.6", {8, 6}, true, false, false},
      {"86", {8, 6}, true, false, false},
      {"sm_90a", {9, 0, Variant::arch_specific}, true, false, false},
      {"100f", {10, 0, Variant::family}, true, false, false},
      {"9.0+ptx", {9, 0}, true, true, false},
  };
  for (const TokenCase& c : cases) {
    SCOPED_TRACE(c.text);
    const auto token = parse_arch_token(c.text);
    ASSERT_TRUE(token.has_value()) << token.error();
    EXPECT_EQ(token->cc, c.cc) << token->cc.dotted();
    EXPECT_EQ(token->sass, c.sass);
    EXPECT_EQ(token->ptx, c.ptx);
    EXPECT_EQ(token->lto, c.lto);
  }
}

TEST(ArchToken, RejectsMalformedEntries) {
  for (std::string_view text : {"", "sm_86+PTX", "compute_86-real", "8.6+", "+PTX", "-real", "banana"}) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(parse_arch_token(text).has_value());
  }
}

struct RunsOn {
  ComputeCapability code;
  ComputeCapability device;
  bool expected;
};

// cuda-compat.md 6.1 (first-hand on 9.0) and 6.2: SASS runs on the same major
// at an equal or higher minor; 'a' only on the exact CC; 'f' inside the family.
TEST(ComputeCapability, SassRunsOnFollowsTheReference) {
  const std::vector<RunsOn> cases = {
      {{8, 0}, {9, 0}, false},  // never across majors (6.1: sm_80 -> 209)
      {{8, 9}, {9, 0}, false},
      {{7, 5}, {9, 0}, false},
      {{8, 6}, {8, 9}, true},  // 6.2: sm_86 SASS runs on 8.9
      {{8, 6}, {8, 7}, true},
      {{8, 9}, {8, 6}, false},  // never to a lower minor
      {{9, 0}, {9, 0}, true},
      {{10, 0}, {9, 0}, false},
      {{9, 0, Variant::arch_specific}, {9, 0}, true},
      {{10, 0, Variant::arch_specific}, {10, 3}, false},  // 'a' is the exact CC only
      {{10, 0, Variant::family}, {10, 3}, true},
      {{10, 0, Variant::family}, {10, 7}, true},
      {{10, 3, Variant::family}, {10, 0}, false},
      {{10, 0, Variant::family}, {11, 0}, false},
      {{10, 0, Variant::family}, {12, 0}, false},
      {{12, 0, Variant::family}, {12, 1}, true},
  };
  for (const RunsOn& c : cases) {
    SCOPED_TRACE(c.code.sm() + " on " + c.device.dotted());
    EXPECT_EQ(c.code.sass_runs_on(c.device), c.expected);
  }
}

// PTX is JIT-compiled for any CC at or above (onion model), except 'a' (exact
// CC) and 'f' (own family).
TEST(ComputeCapability, PtxRunsOnFollowsTheReference) {
  const std::vector<RunsOn> cases = {
      {{8, 0}, {9, 0}, true},  // 6.1: compute_80 PTX-only succeeds on 9.0
      {{7, 5}, {9, 0}, true},
      {{7, 5}, {12, 0}, true},
      {{9, 0}, {9, 0}, true},
      {{12, 0}, {9, 0}, false},  // higher arch is unusable
      {{10, 0}, {9, 0}, false},
      {{9, 0, Variant::arch_specific}, {9, 0}, true},
      {{9, 0, Variant::arch_specific}, {10, 0}, false},  // 'a' PTX does not follow the onion
      {{12, 0, Variant::arch_specific}, {9, 0}, false},
      {{10, 0, Variant::family}, {9, 0}, false},  // 6.1: compute_100f on 9.0 -> 209
      {{10, 0, Variant::family}, {10, 3}, true},
      {{10, 0, Variant::family}, {12, 0}, false},
  };
  for (const RunsOn& c : cases) {
    SCOPED_TRACE(c.code.compute() + " on " + c.device.dotted());
    EXPECT_EQ(c.code.ptx_runs_on(c.device), c.expected);
  }
}

}  // namespace
}  // namespace orc::arch
