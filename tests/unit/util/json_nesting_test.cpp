// The depth pre-scan that refuses hostile JSON before a parser builds a
// tree of it: brackets counted outside strings only, escapes skipped.
#include "orchestrator/util/json_nesting.hpp"

#include <gtest/gtest.h>

#include <string>

namespace orc::util {
namespace {

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonNesting, CountsArraysAndObjectsToTheLimit) {
  EXPECT_TRUE(json_nesting_within("", 0));
  EXPECT_TRUE(json_nesting_within("7", 0));
  EXPECT_FALSE(json_nesting_within("[]", 0));
  EXPECT_TRUE(json_nesting_within(R"({"a":[1,{"b":[]}]})", 4));
  EXPECT_FALSE(json_nesting_within(R"({"a":[1,{"b":[]}]})", 3));
  EXPECT_TRUE(json_nesting_within(nested(256), 256));
  EXPECT_FALSE(json_nesting_within(nested(257), 256));
  // Siblings do not add up: depth, not count.
  std::string wide;
  for (int i = 0; i < 1000; ++i) wide += "[[]],";
  EXPECT_TRUE(json_nesting_within("[" + wide + "1]", 3));
}

TEST(JsonNesting, BracketsInStringsAreCharacters) {
  EXPECT_TRUE(json_nesting_within(R"(["[[[[", "{{{{"])", 1));
  // An escaped quote does not end the string; an escaped backslash does not
  // escape the quote after it.
  EXPECT_TRUE(json_nesting_within(R"(["\"[[[["])", 1));
  EXPECT_FALSE(json_nesting_within(R"(["\\"[[[[])", 1));
}

// Closing brackets first cannot buy room for more opening ones.
TEST(JsonNesting, StrayClosersDoNotLowerTheCount) {
  EXPECT_FALSE(json_nesting_within(std::string(1000, ']') + nested(10), 5));
}

}  // namespace
}  // namespace orc::util
