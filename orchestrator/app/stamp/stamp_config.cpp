// The config edit of `orchestrate stamp`, apart from the scan and the
// engine and registry it works through: it reads JSON an image carries, so
// it has a fuzz target (tests/fuzz/fuzz_stamp_config.cpp), which builds this
// file alone.
#include <nlohmann/json.hpp>

#include "orchestrator/app/stamp/stamp.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/json_nesting.hpp"

namespace orc::app {

std::expected<StampedConfig, std::string> stamp_config(const std::string& config, const StampValues& values,
                                                       const std::string& tier, const std::string& source) {
  if (!util::json_nesting_within(config, k_max_config_depth))
    return std::unexpected("the image config nests arrays or objects deeper than " +
                           std::to_string(k_max_config_depth) +
                           " levels, which no image config needs; rebuild the image with a config that does not");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(config);
  } catch (const std::exception& e) {
    return std::unexpected("the image config is not JSON: " + util::printable(e.what()));
  }
  if (!doc.is_object()) return std::unexpected("the image config is not a JSON object");
  auto& c = doc["config"];
  if (c.is_null()) c = nlohmann::json::object();
  if (!c.is_object()) return std::unexpected("the image config's \"config\" is not an object");
  nlohmann::json env = nlohmann::json::array();
  StampedConfig out;
  std::string kept_cuda;
  std::string earlier_image;  // an earlier stamp kept the image's own constraint here
  if (c.contains("Env") && c["Env"].is_array()) {
    for (const auto& e : c["Env"]) {
      if (!e.is_string()) continue;
      const std::string s = e.get<std::string>();
      if (s.starts_with("NVIDIA_REQUIRE_CUDA_IMAGE=")) {
        earlier_image = s.substr(26);
        continue;
      }
      if (s.starts_with("NVIDIA_REQUIRE_ARCH=")) continue;
      if (s == "NVIDIA_DISABLE_REQUIRE" || s.starts_with("NVIDIA_DISABLE_REQUIRE=")) {
        out.removed.push_back(s);
        continue;
      }
      if (s.starts_with("NVIDIA_REQUIRE_CUDA=")) {
        if (!values.require_cuda.empty()) {
          kept_cuda = s.substr(20);
          continue;
        }
      }
      env.push_back(s);
    }
  }
  if (!earlier_image.empty())
    env.push_back("NVIDIA_REQUIRE_CUDA_IMAGE=" + earlier_image);
  else if (!kept_cuda.empty() && kept_cuda != values.require_cuda)
    env.push_back("NVIDIA_REQUIRE_CUDA_IMAGE=" + kept_cuda);
  if (!values.require_cuda.empty()) env.push_back("NVIDIA_REQUIRE_CUDA=" + values.require_cuda);
  if (!values.require_arch.empty()) env.push_back("NVIDIA_REQUIRE_ARCH=" + values.require_arch);
  c["Env"] = env;
  if (!c.contains("Labels") || !c["Labels"].is_object()) c["Labels"] = nlohmann::json::object();
  c["Labels"]["org.orchestrate.stamp.tier"] = tier;
  c["Labels"]["org.orchestrate.stamp.source"] = source;
  out.json = doc.dump();
  return out;
}

}  // namespace orc::app
