// libFuzzer target for the image config edit of `orchestrate stamp`
// (app/stamp/stamp_config.cpp): whatever bytes a registry or an engine hands
// over, it returns a config or an error and never throws, crashes or
// recurses without bound. A config it returns is a JSON object whose Env
// ends with the stamp's values and holds no NVIDIA_DISABLE_REQUIRE, and
// stamping it again changes nothing.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz_support.hpp"
#include "orchestrator/app/stamp/stamp.hpp"

using orc::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const orc::app::StampValues values{.require_cuda = "cuda>=12.0",
                                            .require_arch = "arch>=8.0,arch<9.0 arch>=9.0"};
  const std::string config(reinterpret_cast<const char*>(data), size);
  const auto out = orc::app::stamp_config(config, values, "tier-x", "sha256:00");
  if (!out) {
    check(!out.error().empty());
    return 0;
  }
  const auto doc = nlohmann::json::parse(out->json, nullptr, false);
  check(doc.is_object() && doc.contains("config") && doc.at("config").is_object());
  const auto& env = doc.at("config").at("Env");
  check(env.is_array() && env.size() >= 2);
  check(env[env.size() - 2] == "NVIDIA_REQUIRE_CUDA=cuda>=12.0");
  check(env[env.size() - 1] == "NVIDIA_REQUIRE_ARCH=arch>=8.0,arch<9.0 arch>=9.0");
  for (const auto& e : env) {
    check(e.is_string());
    const auto& s = e.get_ref<const std::string&>();
    check(s != "NVIDIA_DISABLE_REQUIRE" && !s.starts_with("NVIDIA_DISABLE_REQUIRE="));
  }
  check(doc.at("config").at("Labels").at("org.orchestrate.stamp.tier") == "tier-x");
  const auto again = orc::app::stamp_config(out->json, values, "tier-x", "sha256:00");
  check(again && again->json == out->json && again->removed.empty());
  return 0;
}
