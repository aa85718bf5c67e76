#include "orchestrator/app/driver_facts.hpp"

#include "orchestrator/compat/driver.hpp"

namespace orc::app {

inspect::DriverFacts driver_facts(const std::optional<util::Version>& driver) {
  inspect::DriverFacts facts{.driver = driver,
                             .max_ptx_isa = driver ? compat::ptx_isa_for_driver(*driver) : util::Version{},
                             .newer_than_tables = driver && compat::driver_newer_than_table(*driver),
                             .driver_for_isa = compat::driver_for_ptx_isa,
                             .driver_for_runtime = compat::driver_for_runtime};
  return facts;
}

}  // namespace orc::app
