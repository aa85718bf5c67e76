#pragma once
// One docker-registry process for a suite (scripts/start-registry.sh on
// 127.0.0.1, a free port), stopped by PID when the object goes.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/digest/digest.hpp"
#include "tests/integration/process.hpp"

namespace orc::integration {

namespace fs = std::filesystem;

// One docker-registry process, stopped by PID when the object goes.
inline std::string registry_script(const char* name) { return std::string(ORC_SOURCE_DIR) + "/scripts/" + name; }

class RegistryProcess {
 public:
  explicit RegistryProcess(const fs::path& dir, std::string user = {}) : m_dir(dir) {
    std::vector<std::string> argv = {registry_script("start-registry.sh"), dir.string()};
    if (!user.empty()) argv.insert(argv.end(), {"--user", user});
    const auto started = run_process(argv);
    if (started.exit_code != 0) {
      m_error = "start-registry.sh failed (" + std::to_string(started.exit_code) + "): " + started.output;
      return;
    }
    std::ifstream port(dir / "port");
    port >> m_port;
  }
  ~RegistryProcess() { stop(); }
  void stop() {
    if (m_port) run_process({registry_script("stop-registry.sh"), m_dir.string()});
  }
  const std::string& error() const { return m_error; }
  int port() const { return m_port; }
  std::string url(std::string_view repository, int port = 0) const {
    return "http://127.0.0.1:" + std::to_string(port ? port : m_port) + "/" + std::string(repository);
  }
  // Where distribution's filesystem driver keeps a blob's bytes.
  fs::path blob_data(const digest::Digest& digest) const {
    const std::string hex = digest.hex();
    return m_dir / "data/docker/registry/v2/blobs/sha256" / hex.substr(0, 2) / hex / "data";
  }

 private:
  fs::path m_dir;
  int m_port = 0;
  std::string m_error;
};

}  // namespace orc::integration
