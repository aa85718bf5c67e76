#include "orchestrator/engine/slurm.hpp"

#include <algorithm>
#include <cctype>

#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/process.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::engine::slurm {

namespace {

constexpr std::chrono::seconds k_command_timeout{60};

std::expected<util::ProcessResult, std::string> run(std::vector<std::string> argv,
                                                    std::chrono::milliseconds timeout = k_command_timeout) {
  util::ProcessSpec spec{.argv = std::move(argv)};
  spec.timeout = timeout;
  spec.kill_grace = std::min<std::chrono::milliseconds>(spec.kill_grace, timeout);
  auto result = util::run_process(spec);
  if (!result) return std::unexpected(result.error().message);
  if (result->timed_out) {
    const auto ms = timeout.count();
    const std::string bound = ms % 1000 ? std::to_string(ms) + " ms" : std::to_string(ms / 1000) + " s";
    return std::unexpected("'" + spec.argv.front() + "' did not answer within " + bound + " (is slurmctld running?)");
  }
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
  if (contains_ci(e, "Requested node configuration is not available") || contains_ci(e, "Invalid generic resource"))
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

namespace {

// Splits `text` at each of the first `count` '|'; the rest, without its
// closing '|', is the last piece. Empty when there are fewer.
std::vector<std::string_view> closed_fields(std::string_view text, std::size_t count) {
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < count; ++i) {
    const auto bar = text.find('|');
    if (bar == std::string_view::npos) return {};
    out.push_back(text.substr(0, bar));
    text.remove_prefix(bar + 1);
  }
  if (!text.ends_with('|')) return {};
  out.push_back(text.substr(0, text.size() - 1));
  return out;
}

bool all_of_class(std::string_view s, int (*is)(int), std::string_view also = {}) {
  return !s.empty() && std::ranges::all_of(s, [&](char c) {
    return is(static_cast<unsigned char>(c)) != 0 || also.find(c) != std::string_view::npos;
  });
}

}  // namespace

std::optional<JobRecord> parse_queue_record(std::string_view output, std::string_view id) {
  while (output.ends_with('\n') || output.ends_with('\r')) output.remove_suffix(1);
  if (output.find('\n') != std::string_view::npos) return std::nullopt;  // one job asked, one line
  const auto f = closed_fields(output, 7);
  if (f.size() != 8 || f[0] != id || !all_of_class(f[1], ::isupper, "_") || !all_of_class(f[2], ::isdigit) ||
      f[2].size() > 9)
    return std::nullopt;
  const int status = std::stoi(std::string(f[2]));
  JobRecord job{.id = std::string(f[0]),
                .state = std::string(f[1]),
                .reason = std::string(f[3]),
                .exit_status = (status >> 8) & 0xff,
                .exit_signal = status & 0x7f,
                .nodes = f[4] == "(null)" ? std::string() : std::string(f[4]),
                .partition = std::string(f[5]),
                .time_limit = slurm_duration(f[6]),
                .features = f[7] == "(null)" ? std::string() : std::string(f[7])};
  return job;
}

std::string slurm_duration(std::string_view t) {
  // [D-][[H:]M:]S: squeue drops leading zero fields, scontrol does not.
  std::string days;
  if (const auto dash = t.find('-'); dash != std::string_view::npos) {
    days = std::string(t.substr(0, dash + 1));
    t.remove_prefix(dash + 1);
  }
  const std::vector<std::string> parts = util::split_any(t, ":");
  if (parts.empty() || parts.size() > 3 || static_cast<std::size_t>(std::ranges::count(t, ':')) + 1 != parts.size() ||
      (days.size() > 1 && !all_of_class(days.substr(0, days.size() - 1), ::isdigit)) ||
      !std::ranges::all_of(parts, [](const std::string& p) { return p.size() <= 2 && all_of_class(p, ::isdigit); }))
    return std::string(days) + std::string(t);
  std::string out = days;
  for (std::size_t i = parts.size(); i < 3; ++i) out += "00:";
  for (std::size_t i = 0; i < parts.size(); ++i)
    out += (parts[i].size() == 1 ? "0" : "") + parts[i] + (i + 1 < parts.size() ? ":" : "");
  return out;
}

bool finished(const JobRecord& job) {
  static const std::vector<std::string> running = {
      "PENDING",   "RUNNING",   "CONFIGURING",  "COMPLETING",  "SUSPENDED",     "REQUEUED", "RESIZING",
      "SIGNALING", "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "STOPPED"};
  return !job.state.empty() && std::ranges::find(running, job.state) == running.end();
}

namespace {

// squeue's answer about one job, whatever the states: nullopt when Slurm
// no longer knows it.
std::expected<std::optional<std::string>, std::string> queue_fields(const std::string& id, std::string_view fields) {
  auto ran = run({"squeue", "-h", "-j", id, "-t", "all", "-O", std::string(fields)});
  if (!ran) return std::unexpected(ran.error());
  if (!ran->ok()) {
    if (contains_ci(ran->err + ran->out, "Invalid job id")) return std::optional<std::string>{};
    return std::unexpected("squeue -j " + id + ": " + first_line(ran->err.empty() ? ran->out : ran->err));
  }
  if (util::trim(ran->out).empty()) return std::optional<std::string>{};  // purged between two calls
  return std::optional<std::string>{ran->out};
}

}  // namespace

std::expected<std::optional<JobRecord>, std::string> show_job(const std::string& id) {
  auto out = queue_fields(id, k_queue_fields);
  if (!out) return std::unexpected(out.error());
  if (!*out) return std::optional<JobRecord>{};
  auto record = parse_queue_record(**out, id);
  if (!record)
    return std::unexpected("squeue -j " + id + " printed no record of the job: '" + util::printable(first_line(**out)) +
                           "'");
  return std::optional<JobRecord>{std::move(*record)};
}

std::expected<std::string, std::string> job_comment(const std::string& id) {
  auto out = queue_fields(id, "Comment:|");
  if (!out) return std::unexpected(out.error());
  if (!*out) return std::unexpected("Slurm no longer knows job " + id);
  std::string_view text = **out;
  if (text.ends_with('\n')) text.remove_suffix(1);
  if (!text.ends_with('|')) return std::unexpected("squeue -j " + id + " printed no comment field");
  text.remove_suffix(1);
  return std::string(text == "(null)" ? std::string_view() : text);
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

std::vector<NodeRow> parse_node_rows(std::string_view output) {
  std::vector<NodeRow> rows;
  for (const auto& line : util::split_any(output, "\n")) {
    std::vector<std::string_view> fields;
    for (std::string_view rest = line;;) {
      const auto bar = rest.find('|');
      fields.push_back(rest.substr(0, bar));
      if (bar == std::string_view::npos) break;
      rest.remove_prefix(bar + 1);
    }
    if (fields.size() != 4 || util::trim(fields[0]).empty()) continue;
    NodeRow row{.node = std::string(util::trim(fields[0])),
                .partition = std::string(util::trim(fields[1])),
                .features = {},
                .state = std::string(util::trim(fields[3]))};
    if (row.partition.ends_with('*')) row.partition.pop_back();
    if (const std::string features(util::trim(fields[2])); features != "(null)")
      for (const auto& f : util::split_any(features, ",")) row.features.push_back(std::string(util::trim(f)));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::expected<std::vector<NodeRow>, std::string> list_nodes(std::chrono::milliseconds timeout) {
  auto ran = run({"sinfo", "-h", "-N", "-o", "%N|%P|%f|%T"}, timeout);
  if (!ran) return std::unexpected(ran.error());
  if (!ran->ok()) return std::unexpected("sinfo: " + first_line(ran->err.empty() ? ran->out : ran->err));
  return parse_node_rows(ran->out);
}

std::optional<bool> meets_constraint(std::string_view constraint, const std::vector<std::string>& features) {
  constraint = util::trim(constraint);
  if (constraint.empty()) return true;
  if (constraint.find_first_of("[]()*!") != std::string_view::npos) return std::nullopt;
  const bool any = constraint.find('|') != std::string_view::npos;
  const bool all = constraint.find_first_of("&,") != std::string_view::npos;
  if (any && all) return std::nullopt;
  const auto has = [&](std::string_view word) {
    return std::ranges::find(features, util::trim(word)) != features.end();
  };
  const auto words = util::split_any(constraint, any ? "|" : "&,");
  return any ? std::ranges::any_of(words, has) : std::ranges::all_of(words, has);
}

}  // namespace orc::engine::slurm
