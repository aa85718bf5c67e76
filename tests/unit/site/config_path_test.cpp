#include "orchestrator/site/config_path.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "orchestrator/util/diagnostic.hpp"

namespace orc::site {
namespace {

namespace fs = std::filesystem;

// Runs in an empty directory of its own, with ORCHESTRATE_CONFIG unset, and
// puts both back.
class ConfigPath : public ::testing::Test {
 protected:
  void SetUp() override {
    m_was = fs::current_path();
    char dir[] = "/tmp/orc-config-path-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    m_dir = dir;
    fs::current_path(m_dir);
    if (const char* env = std::getenv("ORCHESTRATE_CONFIG")) m_env = env;
    ::unsetenv("ORCHESTRATE_CONFIG");
  }
  void TearDown() override {
    fs::current_path(m_was);
    fs::remove_all(m_dir);
    if (!m_env.empty()) ::setenv("ORCHESTRATE_CONFIG", m_env.c_str(), 1);
  }

  std::string failure(const std::string& given) {
    try {
      load_config_file(locate_config(given), true);
    } catch (const util::Failure& f) {
      EXPECT_EQ(f.code(), util::ExitCode::bad_input);
      return f.what();
    }
    ADD_FAILURE() << "no failure";
    return {};
  }

  fs::path m_was, m_dir;
  std::string m_env;
};

TEST_F(ConfigPath, NoConfigurationAnywhereNamesEveryPlaceLookedAndWhatToDo) {
  const std::string e = failure("");
  for (const char* place : {"-f", "$ORCHESTRATE_CONFIG", "./orchestrate.yaml", "./recipes/orchestrate.yaml"})
    EXPECT_NE(e.find(place), std::string::npos) << place << " in: " << e;
  EXPECT_NE(e.find("give -f FILE or set ORCHESTRATE_CONFIG=FILE"), std::string::npos) << e;
  // An optional configuration is simply absent.
  EXPECT_FALSE(load_config_file(locate_config(""), false).has_value());
}

TEST_F(ConfigPath, AFileNamedByTheUserOrTheVariableIsTheOneNamedInTheError) {
  const std::string given = failure("elsewhere.yaml");
  EXPECT_NE(given.find("elsewhere.yaml"), std::string::npos) << given;
  EXPECT_EQ(given.find("ORCHESTRATE_CONFIG=FILE"), std::string::npos) << given;
  ::setenv("ORCHESTRATE_CONFIG", "from-env.yaml", 1);
  const std::string env = failure("");
  EXPECT_NE(env.find("from-env.yaml"), std::string::npos) << env;
  ::unsetenv("ORCHESTRATE_CONFIG");
  // ./orchestrate.yaml wins over the example when it exists.
  std::ofstream("orchestrate.yaml") << "tiers:\n  t:\n    gpus: [\"H100\"]\nrecipes: []\n";
  EXPECT_EQ(locate_config(""), fs::path("orchestrate.yaml"));
}

}  // namespace
}  // namespace orc::site
