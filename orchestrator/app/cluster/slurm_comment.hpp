#pragma once
// What a job of `--engine slurm` hands back in its Slurm comment, and how
// the submitter reads it (issue 28). The comment is the job's own text: any
// process of the job can rewrite it (`scontrol update JobId=N Comment=...`),
// so it is a claim, read only once Slurm itself says the job completed
// (engine::slurm::show_job), only in exactly the words run_job writes for
// this job's recipe and tier, and a build's set only when its signed
// manifest holds the key the job's build computed (pull checks it before
// anything is stored).
#include <expected>
#include <string>
#include <string_view>

#include "orchestrator/app/cluster/slurm.hpp"

namespace orc::app {

struct HandedBack {
  std::string key;  // a build's cache key: 64 hex digits; empty for smoke
  std::string set;  // "sha256:<64 hex>"
};

// "orchestrate build recipe=R tier=T key=K set=sha256:D" ("orchestrate
// smoke recipe=R tier=T set=sha256:D").
std::string handed_back_comment(SlurmWork work, const std::string& recipe, const std::string& tier,
                                const HandedBack& result);

// The key and set of a comment in exactly that form for this recipe and
// tier; else what is wrong with it.
std::expected<HandedBack, std::string> read_handed_back(std::string_view comment, SlurmWork work,
                                                        const std::string& recipe, const std::string& tier);

// For a job Slurm says COMPLETED: its comment read (squeue), the set and
// key it names set on `job`, or the job failed (exit 3) with the reason.
void take_handed_back(SlurmJob& job, SlurmWork work);

}  // namespace orc::app
