// libFuzzer target for the nvcc front's readers: a project's nvcc command
// lines (and the options files and NVCC_*_FLAGS they come through), the
// call log a build reads back, and front.conf. Each must return for every
// input, never throw, crash or hang; what they return keeps its promises:
// stripping leaves no arch option, a record survives its JSON line, an
// accepted configuration survives its rendering.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "orchestrator/front/front.hpp"

using orc::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  namespace front = orc::front;

  const std::vector<std::string> args = front::split_flags(text);
  (void)front::read_nvcc_call(args);
  const std::vector<std::string> stripped = front::strip_arch_options(args);
  check(stripped.size() <= args.size());
  const front::NvccCall again = front::read_nvcc_call(stripped);
  check(again.arch_flags.empty());
  check(again.choice == front::ArchChoice::nvcc_default);
  (void)front::targets_from_dryrun(text);

  for (const auto& record : front::read_call_log(text, 64)) {
    const auto back = front::read_call_log(front::to_json_line(record));
    check(back.size() == 1);
    check(back[0].outcome == record.outcome && back[0].asked == record.asked && back[0].tool == record.tool);
  }

  if (const auto config = front::parse_config(text); config) {
    const auto again_config = front::parse_config(front::render_config(*config));
    check(again_config.has_value());
    check(again_config->plan == config->plan && again_config->policy == config->policy);
  }
  return 0;
}
