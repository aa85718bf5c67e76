// Issue 11: `include:` (and -f) may name any readable file. A file that is
// not a recipe file is named, with the include line, and never quoted: no
// line, no key, no piece of a YAML error message from it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/recipe/test_support.hpp"

namespace orc::recipe {
namespace {

using testing::TempDir;
using namespace std::string_literals;

constexpr std::string_view k_secret = "Secr3tHash";

// Everything the user would see of the diagnostics: headlines, excerpts.
std::string rendered(const std::vector<util::Diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) out += d.render();
  return out;
}

// Loads a main file whose only include is `name`, holding `text`, and
// returns the one error it must give.
util::Diagnostic include_error(const TempDir& dir, const std::string& name, std::string_view text) {
  dir.write(name, text);
  const auto main = dir.write("orchestrate.yaml", std::string(testing::k_tiers) + "include: [\"" + name + "\"]\n");
  const auto result = load_config(main);
  EXPECT_FALSE(result.has_value()) << name;
  if (result) return {};
  EXPECT_EQ(result.error().size(), 1u) << rendered(result.error());
  EXPECT_EQ(rendered(result.error()).find(k_secret), std::string::npos) << rendered(result.error());
  return result.error().front();
}

TEST(RecipeInclude, FilesThatAreNotRecipesAreNamedNotQuoted) {
  const TempDir dir;
  const std::string main = (dir.path() / "orchestrate.yaml").string();
  struct Case {
    std::string name;
    std::string text;
    std::string reason;
  };
  const std::vector<Case> cases{
      // "root:...:7:::" is a YAML key (its last ':' ends the line).
      {"shadow", "root:$6$Secr3tHash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n",
       "none of its keys is one the schema knows"},
      {"id_ed25519",
       "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA Secr3tHash\n-----END OPENSSH PRIVATE KEY-----\n",
       "it holds a string, not a mapping"},
      {"config.json", "{\"auths\": {\"reg.example\": {\"auth\": \"Secr3tHash\"}}}\n",
       "none of its keys is one the schema knows"},
      {"list.yaml", "- Secr3tHash\n- two\n", "it holds a list, not a mapping"},
      {"empty.yaml", "", "it is empty"},
      {"broken.yaml", "password: [Secr3tHash\n",
       "YAML syntax error: end of sequence flow not found at line 2, column 1"},
      // yaml-cpp's message would end in the offending character.
      {"escape.yaml", "key: \"\\Secr3tHash\"\n", "YAML syntax error: unknown escape character at line 1, column 9"},
      {"two.yaml", "Secr3tHash: 1\n---\nb: 2\n",
       "a configuration file holds one YAML document; found a second one at line 2, column 1"},
      // What yaml-cpp makes of binary is its business; only the rules count.
      {"binary",
       "\x7f"
       "ELF\x02\x01\x01\0\0\0Secr3tHash\n"s,
       ""},
  };
  for (const Case& c : cases) {
    const util::Diagnostic d = include_error(dir, c.name, c.text);
    const std::string named = "orchestrate: error: " + main + ":4:11: included file " + (dir.path() / c.name).string() +
                              " is not a recipe file: ";
    if (c.reason.empty())
      EXPECT_TRUE(d.headline().starts_with(named)) << d.headline();
    else
      EXPECT_EQ(d.headline(),
                named + c.reason + " (a recipe file is one mapping with name, framework, source and tiers)")
          << c.name;
    // The excerpt is the include line of the user's own file.
    EXPECT_EQ(d.source_line, "include: [\"" + c.name + "\"]") << c.name;
  }
}

TEST(RecipeInclude, ARecipeFileFullOfTyposStillGetsItsDiagnostics) {
  const TempDir dir;
  const auto path = dir.write("r.yaml", "nmae: r\nframwork: nvcc\nsorce: {path: s}\ntires: [tier-new]\n");
  const auto main = dir.write("orchestrate.yaml", std::string(testing::k_tiers) + "include: [r.yaml]\n");
  const auto result = load_config(main);
  ASSERT_FALSE(result.has_value());
  ASSERT_GE(result.error().size(), 4u);
  EXPECT_EQ(result.error()[0].headline(),
            "orchestrate: error: " + path.string() + ":1:1: unknown key 'nmae' (did you mean 'name'?)");
  EXPECT_EQ(result.error()[0].source_line, "nmae: r");
}

// -f names a file the same way: what is not a configuration is named, not
// quoted (a YAML syntax error in it still is: it is most likely the user's).
TEST(RecipeInclude, TheMainFileIsNotQuotedWhenItIsNoConfiguration) {
  const TempDir dir;
  const auto key =
      dir.write("id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\nSecr3tHash\n-----END OPENSSH PRIVATE KEY-----\n");
  const auto json = dir.write("config.json", "{\"auths\": {\"reg\": {\"auth\": \"Secr3tHash\"}}}\n");
  const auto a = load_config(key);
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(rendered(a.error()), "orchestrate: error: " + key.string() +
                                     ":1:1: expected a mapping at the top level (with 'tiers'), got a string\n");
  const auto b = load_config(json);
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(rendered(b.error()),
            "orchestrate: error: " + json.string() +
                ": not an orchestrate configuration: none of its keys is one the schema knows (expected a mapping "
                "with 'tiers', and 'recipes' or 'include')\n");
  // A misspelt configuration is one, with its did-you-mean.
  EXPECT_EQ(testing::error_headlines("tier: {}\n"),
            (std::vector<std::string>{"orchestrate: error: t.yaml:1:1: unknown key 'tier' (did you mean 'tiers'?)"}));
}

}  // namespace
}  // namespace orc::recipe
