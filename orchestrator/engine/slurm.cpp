#include "orchestrator/engine/slurm.hpp"

#include <algorithm>
#include <cctype>

#include "orchestrator/util/process.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::engine::slurm {

namespace {

constexpr std::chrono::seconds k_command_timeout{60};

std::expected<util::ProcessResult, std::string> run(std::vector<std::string> argv) {
  util::ProcessSpec spec{.argv = std::move(argv)};
  spec.timeout = k_command_timeout;
  auto result = util::run_process(spec);
  if (!result) return std::unexpected(result.error().message);
  if (result->timed_out)
    return std::unexpected("'" + spec.argv.front() + "' did not answer within " +
                           std::to_string(k_command_timeout.count()) + " s (is slurmctld running?)");
  return *result;
}

std::string first_line(std::string_view text) {
  text = util::trim(text);
  return std::string(text.substr(0, text.find('\n')));
}

bool contains_ci(std::string_view haystack, std::string_view needle) {
  return util::to_lower(haystack).find(util::to_lower(needle)) != std::string::npos;
}

}  // namespace

std::vector<std::string> sbatch_argv(const JobRequest& r) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  const auto opt = [&](std::string_view flag, const std::string& value) {
    if (!value.empty()) argv.push_back(std::string(flag) + "=" + value);
  };
  opt("--job-name", r.name);
  opt("--comment", r.comment);
  opt("--partition", r.partition);
  opt("--constraint", r.constraint);
  opt("--gres", r.gres);
  opt("--account", r.account);
  opt("--qos", r.qos);
  opt("--time", r.time);
  opt("--output", r.output.string());
  opt("--chdir", r.chdir.string());
  argv.push_back(r.script.string());
  return argv;
}

SubmitError::Kind classify_submit_error(std::string_view e) {
  using K = SubmitError::Kind;
  if (contains_ci(e, "Invalid feature specification")) return K::invalid_feature;
  if (contains_ci(e, "invalid partition")) return K::invalid_partition;
  if (contains_ci(e, "Requested node configuration is not available") ||
      contains_ci(e, "Invalid generic resource"))
    return K::unavailable;
  if (contains_ci(e, "Invalid account") || contains_ci(e, "Invalid qos")) return K::invalid_account_qos;
  if (contains_ci(e, "time limit")) return K::invalid_time;
  if (contains_ci(e, "Unable to contact slurm controller") || contains_ci(e, "Connection refused") ||
      contains_ci(e, "Protocol authentication error") || contains_ci(e, "Munge"))
    return K::not_running;
  return K::other;
}

std::expected<std::string, SubmitError> submit(const JobRequest& request) {
  auto ran = run(sbatch_argv(request));
  if (!ran) return std::unexpected(SubmitError{.kind = SubmitError::Kind::not_running, .message = ran.error()});
  if (!ran->ok()) {
    std::string said = first_line(ran->err.empty() ? ran->out : ran->err);
    if (const auto at = said.find("error: "); at != std::string::npos) said = said.substr(at + 7);
    return std::unexpected(SubmitError{.kind = classify_submit_error(ran->err + ran->out), .message = said});
  }
  // --parsable: "ID" or "ID;cluster".
  std::string id = first_line(ran->out);
  id = id.substr(0, id.find(';'));
  if (id.empty() || !std::ranges::all_of(id, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return std::unexpected(SubmitError{.kind = SubmitError::Kind::other,
                                       .message = "sbatch printed no job ID: '" + first_line(ran->out) + "'"});
  return id;
}

JobRecord parse_job_record(std::string_view line) {
  JobRecord job;
  job.fields = util::key_value_words(line);
  const auto get = [&](const char* k) {
    const auto it = job.fields.find(k);
    return it == job.fields.end() ? std::string() : it->second;
  };
  job.id = get("JobId");
  job.name = get("JobName");
  job.state = get("JobState");
  job.reason = get("Reason");
  job.nodes = get("NodeList");
  job.partition = get("Partition");
  job.features = get("Features");
  job.comment = get("Comment");
  job.time_limit = get("TimeLimit");
  const std::string code = get("ExitCode");
  if (const auto colon = code.find(':'); colon != std::string::npos) {
    job.exit_status = std::atoi(code.substr(0, colon).c_str());
    job.exit_signal = std::atoi(code.substr(colon + 1).c_str());
  }
  return job;
}

bool finished(const JobRecord& job) {
  static const std::vector<std::string> running = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED",
                                                   "REQUEUED", "RESIZING", "SIGNALING", "STAGE_OUT", "REQUEUE_HOLD",
                                                   "REQUEUE_FED", "RESV_DEL_HOLD", "STOPPED"};
  return !job.state.empty() && std::ranges::find(running, job.state) == running.end();
}

std::expected<std::optional<JobRecord>, std::string> show_job(const std::string& id) {
  auto ran = run({"scontrol", "show", "job", "-o", id});
  if (!ran) return std::unexpected(ran.error());
  if (!ran->ok()) {
    if (contains_ci(ran->err + ran->out, "Invalid job id")) return std::optional<JobRecord>{};
    return std::unexpected("scontrol show job " + id + ": " + first_line(ran->err.empty() ? ran->out : ran->err));
  }
  return std::optional<JobRecord>{parse_job_record(first_line(ran->out))};
}

std::expected<void, std::string> cancel(const std::vector<std::string>& ids) {
  if (ids.empty()) return {};
  std::vector<std::string> argv = {"scancel"};
  argv.insert(argv.end(), ids.begin(), ids.end());
  auto ran = run(argv);
  if (!ran) return std::unexpected(ran.error());
  if (!ran->ok()) return std::unexpected("scancel: " + first_line(ran->err.empty() ? ran->out : ran->err));
  return {};
}

std::expected<void, std::string> set_comment(const std::string& id, const std::string& comment) {
  auto ran = run({"scontrol", "update", "JobId=" + id, "Comment=" + comment});
  if (!ran) return std::unexpected(ran.error());
  if (!ran->ok()) return std::unexpected("scontrol update: " + first_line(ran->err.empty() ? ran->out : ran->err));
  return {};
}

}  // namespace orc::engine::slurm
