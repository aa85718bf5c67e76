#include "orchestrator/site/driver_facts.hpp"

#include "orchestrator/compat/driver.hpp"
#include "orchestrator/compat/toolkits.hpp"

namespace orc::site {

inspect::DriverFacts driver_facts(const std::optional<util::Version>& driver) {
  inspect::DriverFacts facts{.driver = driver,
                             .max_ptx_isa = driver ? compat::ptx_isa_for_driver(*driver) : util::Version{},
                             .newer_than_tables = driver && compat::driver_newer_than_table(*driver),
                             .driver_for_isa = compat::driver_for_ptx_isa,
                             .driver_for_runtime = compat::driver_for_runtime};
  return facts;
}

std::optional<util::Version> node_driver(const std::string& kernel_module_version, int driver_cuda_version) {
  std::optional<util::Version> driver;
  if (auto v = util::Version::parse(kernel_module_version)) driver = *v;
  if (driver_cuda_version > 0) {
    const util::Version cuda(driver_cuda_version / 1000, driver_cuda_version % 1000 / 10);
    if (const compat::Toolkit* t = compat::find_toolkit(cuda); t && !t->min_driver.empty())
      if (!driver || *driver < t->min_driver) driver = t->min_driver;
  }
  return driver;
}

}  // namespace orc::site
