#pragma once
// The inventory fixtures (data/README.md), read whole.
#include <fstream>
#include <sstream>
#include <string>

namespace orc::inventory::testing {

inline std::string data(const std::string& name) {
  std::ifstream in(std::string(ORC_SOURCE_DIR) + "/tests/unit/inventory/data/" + name, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace orc::inventory::testing
