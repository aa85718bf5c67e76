#pragma once
// The nvcc front in a build (private to the app module): the program staged
// into the scratch tree as front/bin/nvcc (with front/bin/__nvcc_device_query
// and front/bin/nvidia-smi linking to it) beside front/front.conf, mounted at
// /orc/front; its call log front/calls.jsonl read back after the steps.
#include <expected>
#include <filesystem>
#include <string>
#include <string_view>

#include "orchestrator/app/build/build_job.hpp"

namespace orc::app::detail {

inline constexpr std::string_view k_front_program_name = "orchestrate-nvcc";

// orchestrate-nvcc beside the running executable; else the one this build
// tree made (the test binaries run from elsewhere).
std::filesystem::path front_program();

// front/ and home/ in `scratch`, for `kind`'s paths (the host engine's are
// the scratch tree's own, a container's those of its mounts).
std::expected<void, std::string> stage_front(const BuildJob& job, const std::filesystem::path& scratch,
                                             engine::EngineKind kind, const std::filesystem::path& program);

// Every record of the call log (none when the steps never ran nvcc).
NvccReport read_front(const std::filesystem::path& scratch, recipe::NvccPolicy policy);

// The first call the front refused, if any.
const front::CallRecord* first_refusal(const NvccReport& report);
// Whether any call was judged against the plan.
bool judged_any(const NvccReport& report);

}  // namespace orc::app::detail
