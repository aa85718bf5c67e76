// The submitting side of `--engine slurm`: jobs written and submitted,
// followed, streamed, cancelled, and their results pulled from the registry.
#include "orchestrator/app/cluster/slurm.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <thread>

#include "orchestrator/app/cluster/slurm_comment.hpp"
#include "orchestrator/app/transfer/transfer_cmd.hpp"
#include "orchestrator/cache/current.hpp"
#include "orchestrator/cache/files.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/engine/slurm.hpp"
#include "orchestrator/site/config_path.hpp"
#include "orchestrator/site/store_root.hpp"
#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/process.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

namespace fs = std::filesystem;
using util::ExitCode;
using util::Failure;
namespace slurm = engine::slurm;

std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The job's script: this orchestrate's `job` command in a store of its own
// (removed after), so the result can only reach the submitter through the
// registry.
std::string job_script(const SlurmRequest& request, const fs::path& binary, const fs::path& config, const SlurmJob& job,
                       const std::string& set) {
  std::vector<std::string> argv = {binary.string(), "job",      std::string(work_name(request.work)),
                                   "--recipe",      job.recipe, "--tier",
                                   job.tier,        "-f",       config.string()};
  if (request.work == SlurmWork::build && !request.node_engine.empty()) {
    argv.push_back("--engine");
    argv.push_back(request.node_engine);
  }
  if (request.work == SlurmWork::smoke) {
    argv.push_back("--set");
    argv.push_back(set);
  }
  std::string command;
  for (const auto& a : argv) command += (command.empty() ? "" : " ") + sh_quote(a);
  return "#!/bin/sh\n"
         "# Written by orchestrate: " +
         std::string(work_name(request.work)) + " " + job.recipe + " for tier " + job.tier +
         " on this node.\n"
         "# Its own store, so the result reaches the submitter only through the registry.\n"
         "ORCHESTRATE_CACHE_DIR=\"${TMPDIR:-/tmp}/orchestrate-job-${SLURM_JOB_ID:-$$}\"\n"
         "export ORCHESTRATE_CACHE_DIR\n"
         "trap 'rm -rf \"$ORCHESTRATE_CACHE_DIR\"' EXIT\n"
         "echo \"orchestrate: job ${SLURM_JOB_ID} on $(hostname) (${SLURMD_NODENAME:-?})\"\n" +
         command + "\n";
}

// "tier-new: no node in partition hopper offers sm_100 (sbatch: Invalid feature specification)".
std::string submit_problem(const slurm::SubmitError& e, const recipe::TierSlurm& where, const recipe::Tier& tier) {
  const std::string partition = where.partition.empty() ? "the default partition" : "partition " + where.partition;
  switch (e.kind) {
    case slurm::SubmitError::Kind::invalid_feature:
      return "no node in " + partition + " offers " + where.constraint + " for tier " + tier.name +
             " (sbatch: " + e.message + "); set the tier's slurm: constraint to a feature its nodes have";
    case slurm::SubmitError::Kind::invalid_partition:
      return "tier " + tier.name + "'s " + partition + " does not exist (sbatch: " + e.message + ")";
    case slurm::SubmitError::Kind::unavailable:
      return "no node in " + partition + " has what tier " + tier.name + "'s job asks (" +
             (where.gres.empty() ? std::string() : "gres " + where.gres + ", ") +
             (where.constraint.empty() ? std::string() : "constraint " + where.constraint + "; ") +
             "sbatch: " + e.message + ")";
    case slurm::SubmitError::Kind::invalid_account_qos:
    case slurm::SubmitError::Kind::invalid_time:
      return "tier " + tier.name + "'s slurm: settings are refused (sbatch: " + e.message + ")";
    case slurm::SubmitError::Kind::not_running:
    case slurm::SubmitError::Kind::other:
      break;
  }
  return "sbatch failed for tier " + tier.name + ": " + e.message;
}

ExitCode submit_code(slurm::SubmitError::Kind kind) {
  switch (kind) {
    case slurm::SubmitError::Kind::invalid_feature:
    case slurm::SubmitError::Kind::invalid_partition:
    case slurm::SubmitError::Kind::unavailable:
    case slurm::SubmitError::Kind::invalid_account_qos:
    case slurm::SubmitError::Kind::invalid_time:
      return ExitCode::bad_input;
    default:
      return ExitCode::outside_failure;
  }
}

// New lines of a job's output file since `offset`.
std::string read_new(const fs::path& file, std::uint64_t& offset) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  in.seekg(static_cast<std::streamoff>(offset));
  std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto last_newline = chunk.rfind('\n');
  if (last_newline == std::string::npos) return {};
  chunk.resize(last_newline + 1);
  offset += chunk.size();
  return chunk;
}

std::string tail_lines(const fs::path& file, std::size_t n) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    if (lines.size() > n) lines.erase(lines.begin());
  }
  return util::join(lines, "\n");
}

struct Live {
  SlurmJob* job;
  std::uint64_t offset = 0;
  bool done = false;
  std::string last_state;
};

std::string state_line(const std::vector<Live>& live) {
  std::vector<std::string> parts;
  for (const Live& l : live) {
    if (l.job->id.empty()) continue;
    std::string s = l.job->id + " " + l.job->recipe + "/" + l.job->tier + " " + l.job->state;
    if (l.job->state == "PENDING" && !l.job->reason.empty() && l.job->reason != "None") s += " (" + l.job->reason + ")";
    if (l.job->state == "RUNNING" && !l.job->nodes.empty()) s += " on " + l.job->nodes;
    parts.push_back(s);
  }
  return parts.empty() ? std::string() : "slurm: " + util::join(parts, " | ");
}

// What a finished job's record says, in the job's terms.
void conclude(SlurmJob& job, const slurm::JobRecord& record, const recipe::TierSlurm& where) {
  const std::string who = "job " + job.id + " (" + job.recipe + "/" + job.tier + ")";
  const std::string on = record.nodes.empty() || record.nodes == "(null)" ? "" : " on " + record.nodes;
  if (record.state == "COMPLETED") return;  // the result is pulled next
  const std::string output = tail_lines(job.output, 8);
  const std::string tail = output.empty() ? "" : "; its output ended:\n" + output;
  if (record.state == "FAILED") {
    job.exit_code = record.exit_status >= 1 && record.exit_status <= 3 ? static_cast<ExitCode>(record.exit_status)
                                                                       : ExitCode::check_failed;
    job.message = who + " failed" + on + " with exit code " + std::to_string(record.exit_status) + tail;
  } else if (record.state == "CANCELLED") {
    job.exit_code = ExitCode::outside_failure;
    job.message = who + " was cancelled" + on + " (scancel, or an administrator); nothing of it was stored";
  } else if (record.state == "TIMEOUT") {
    job.exit_code = ExitCode::outside_failure;
    job.message =
        who + " ran past its time limit of " + record.time_limit + on +
        (where.time.empty() ? " (the partition's; set the tier's slurm: time)" : " (the tier's slurm: time)") +
        "; nothing of it was stored";
  } else {
    job.exit_code = ExitCode::outside_failure;
    job.message = who + " ended " + record.state + on + " (" + record.reason + ")" + tail;
  }
}

}  // namespace

util::ExitCode SlurmReport::exit_code() const {
  ExitCode code = cancelled ? ExitCode::outside_failure : ExitCode::ok;
  for (const auto& j : jobs) code = std::max(code, j.exit_code);
  return code;
}

recipe::TierSlurm slurm_placement(const recipe::Tier& tier, SlurmWork work) {
  recipe::TierSlurm out = tier.slurm.value_or(recipe::TierSlurm{});
  if (out.constraint.empty()) {
    std::vector<std::string> sms;
    for (const auto& g : tier.gpus)
      if (std::ranges::find(sms, g.cc.base().sm()) == sms.end()) sms.push_back(g.cc.base().sm());
    std::ranges::sort(sms);
    out.constraint = util::join(sms, "|");
  }
  if (work == SlurmWork::build)
    out.gres.clear();  // a build needs no GPU
  else if (out.gres.empty())
    out.gres = "gpu:1";
  return out;
}

SlurmReport slurm_dispatch(const SlurmRequest& request) {
  const auto config = site::load_config_file(request.config, true);
  require_remote(&*config, "--engine slurm returns each job's result through the registry");
  SlurmReport report{.work = request.work};
  std::vector<const recipe::Tier*> tiers;
  for (const auto& name : request.tiers) tiers.push_back(&find_tier(*config, name));
  for (const auto& r : request.recipes)
    if (!config->find_recipe(r))
      throw Failure(ExitCode::bad_input, "unknown recipe '" + r + "' in " + request.config.string());
  for (const recipe::Tier* tier : tiers)
    for (const auto& r : config->recipes) {
      if (std::ranges::find(r.tiers, tier->name) == r.tiers.end()) continue;
      if (!request.recipes.empty() && std::ranges::find(request.recipes, r.name) == request.recipes.end()) continue;
      report.jobs.push_back(SlurmJob{.recipe = r.name, .tier = tier->name});
    }
  if (report.jobs.empty())
    throw Failure(ExitCode::bad_input, "no recipe is built for tier " + util::join(request.tiers, ", "));

  std::error_code ec;
  const fs::path binary = request.orchestrate.empty() ? fs::read_symlink("/proc/self/exe", ec) : request.orchestrate;
  const fs::path config_path = fs::weakly_canonical(fs::absolute(request.config));
  fs::path dir = request.work_dir;
  if (dir.empty())
    dir = cache::default_store_root().parent_path() / "slurm.v1" /
          (std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) + "-" +
           std::to_string(::getpid()));
  fs::create_directories(dir, ec);
  if (ec) throw Failure(ExitCode::outside_failure, "cannot create " + dir.string() + ": " + ec.message());
  std::ostringstream ignored;
  std::ostream& progress = request.progress ? *request.progress : ignored;

  engine::CancelFlag own;
  engine::CancelFlag& cancel = request.cancel ? *request.cancel : own;
  std::optional<engine::ScopedSignalCancel> handlers;
  if (!request.cancel) handlers.emplace(own);

  // The set each smoke job tests: the newest verified one of the pair here.
  auto store = cache::Store::open(site::store_root(request.store_root));
  std::vector<Live> live;
  for (SlurmJob& job : report.jobs) {
    live.push_back(Live{.job = &job});
    if (cancel.requested()) {  // stopped while submitting: submit no more
      job.exit_code = ExitCode::outside_failure;
      job.message = "not submitted: stopped by a signal";
      report.cancelled = true;
      continue;
    }
    const recipe::Tier& tier = *config->find_tier(job.tier);
    const recipe::TierSlurm where = slurm_placement(tier, request.work);
    std::string set;
    if (request.work == SlurmWork::smoke) {
      std::optional<cache::IndexEntry> newest;
      if (store)
        if (auto found = cache::current_verified(*store, job.recipe, job.tier); found) newest = *found;
      if (!newest) {
        job.exit_code = ExitCode::bad_input;
        job.message = "no verified set of " + job.recipe + "/" + job.tier + " here to smoke-test (build it first)";
        continue;
      }
      set = newest->manifest.to_string();
    }
    const fs::path script = dir / (job.recipe + "--" + job.tier + ".sh");
    if (auto wrote = util::write_file_atomic(script, job_script(request, binary, config_path, job, set)); !wrote)
      throw Failure(ExitCode::outside_failure, wrote.error().message);
    fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read, ec);
    job.output = dir / (job.recipe + "--" + job.tier + "-%j.out");
    auto id = slurm::submit({.name = "orc-" + std::string(work_name(request.work)) + "-" + job.recipe + "-" + job.tier,
                             .comment = "orchestrate " + std::string(work_name(request.work)) +
                                        " recipe=" + job.recipe + " tier=" + job.tier,
                             .partition = where.partition,
                             .constraint = where.constraint,
                             .gres = where.gres,
                             .account = where.account,
                             .qos = where.qos,
                             .time = where.time,
                             .output = job.output,
                             .chdir = dir,
                             .script = script});
    if (!id) {
      job.exit_code = submit_code(id.error().kind);
      job.message = submit_problem(id.error(), where, tier);
      continue;
    }
    job.id = *id;
    job.state = "PENDING";
    std::string out = job.output.string();
    out.replace(out.find("%j"), 2, job.id);
    job.output = out;
    progress << "slurm: submitted job " << job.id << " (" << work_name(request.work) << " " << job.recipe << " for "
             << job.tier << ": partition " << (where.partition.empty() ? "default" : where.partition) << ", constraint "
             << where.constraint << (where.gres.empty() ? "" : ", gres " + where.gres) << ")\n";
  }

  // Follow every submitted job to its end.
  std::string last_line;
  bool cancelling = false;
  for (;;) {
    bool pending_work = false;
    for (Live& l : live) {
      SlurmJob& job = *l.job;
      if (job.id.empty() || l.done) continue;
      for (std::istringstream lines(read_new(job.output, l.offset)); lines;) {
        std::string line;
        if (!std::getline(lines, line)) break;
        progress << "[" << job.id << " " << job.recipe << "/" << job.tier << "] " << line << "\n";
      }
      auto record = slurm::show_job(job.id);
      if (!record) {
        job.exit_code = ExitCode::outside_failure;
        job.message = record.error();
        l.done = true;
        continue;
      }
      if (!*record) {
        job.exit_code = ExitCode::outside_failure;
        job.message = "Slurm no longer knows job " + job.id + " (it ended more than MinJobAge ago, or was purged)";
        l.done = true;
        continue;
      }
      const slurm::JobRecord& r = **record;
      job.state = r.state;
      job.reason = r.reason;
      if (!r.nodes.empty() && r.nodes != "(null)") job.nodes = r.nodes;
      job.partition = r.partition;
      job.features = r.features;
      if (!slurm::finished(r)) {
        pending_work = true;
        continue;
      }
      l.done = true;
      for (std::istringstream lines(read_new(job.output, l.offset)); lines;) {
        std::string line;
        if (!std::getline(lines, line)) break;
        progress << "[" << job.id << " " << job.recipe << "/" << job.tier << "] " << line << "\n";
      }
      conclude(job, r, slurm_placement(*config->find_tier(job.tier), request.work));
      if (r.state == "COMPLETED") take_handed_back(job, request.work);
    }
    const std::string line = state_line(live);
    if (line != last_line && !line.empty()) {
      progress << line << "\n";
      last_line = line;
    }
    if (!pending_work) break;
    if (cancel.requested() && !cancelling) {
      cancelling = true;
      report.cancelled = true;
      std::vector<std::string> ids;
      for (const Live& l : live)
        if (!l.job->id.empty() && !l.done) ids.push_back(l.job->id);
      progress << "slurm: stopping: scancel " << util::join(ids, " ") << "\n";
      if (auto stopped = slurm::cancel(ids); !stopped) progress << "slurm: " << stopped.error() << "\n";
    }
    std::this_thread::sleep_for(request.poll);
  }

  // The results, through the registry, verified as any pull is.
  for (SlurmJob& job : report.jobs) {
    if (job.set.empty() || job.exit_code != ExitCode::ok) continue;
    try {
      const PullReport pulled = pull(TransferRequest{.config = request.config,
                                                     .store_root = request.store_root,
                                                     .recipe = job.recipe,
                                                     .tier = job.tier,
                                                     .digest = job.set,
                                                     .key = job.key});
      job.exit_code = pulled.exit_code;
      if (pulled.exit_code != ExitCode::ok)
        job.message = "pulling " + job.set + " from the registry failed (exit " +
                      std::to_string(static_cast<int>(pulled.exit_code)) + ")";
      else if (!pulled.verified)
        job.message = "pulled " + job.set + " but it did not verify";
    } catch (const Failure& failure) {
      job.exit_code = failure.code();
      job.message = failure.diagnostics().empty() ? "pull failed" : failure.diagnostics().front().message;
    }
  }
  return report;
}

std::string_view work_name(SlurmWork w) { return w == SlurmWork::build ? "build" : "smoke"; }

}  // namespace orc::app
