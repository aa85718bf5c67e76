#include "orchestrator/app/cluster/slurm_comment.hpp"

#include <algorithm>

#include "orchestrator/engine/slurm.hpp"
#include "orchestrator/util/escape.hpp"

namespace orc::app {

namespace {

constexpr std::size_t k_shown_comment = 160;

std::string head(const SlurmWork work, const std::string& recipe, const std::string& tier) {
  return std::string("orchestrate ") + (work == SlurmWork::build ? "build" : "smoke") + " recipe=" + recipe +
         " tier=" + tier + " ";
}

bool lower_hex(std::string_view s, std::size_t size) {
  return s.size() == size &&
         std::ranges::all_of(s, [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// `text` starts with `name`=VALUE (VALUE up to the next space or the end);
// VALUE, and `text` moved past it and one space.
std::string_view take_word(std::string_view& text, std::string_view name) {
  if (!text.starts_with(name) || text.size() <= name.size() || text[name.size()] != '=') return {};
  text.remove_prefix(name.size() + 1);
  const auto space = text.find(' ');
  const std::string_view value = text.substr(0, space);
  text.remove_prefix(space == std::string_view::npos ? text.size() : space + 1);
  return value;
}

}  // namespace

std::string handed_back_comment(SlurmWork work, const std::string& recipe, const std::string& tier,
                                const HandedBack& result) {
  return head(work, recipe, tier) + (result.key.empty() ? "" : "key=" + result.key + " ") + "set=" + result.set;
}

std::expected<HandedBack, std::string> read_handed_back(std::string_view comment, SlurmWork work,
                                                        const std::string& recipe, const std::string& tier) {
  const std::string expected = head(work, recipe, tier);
  std::string shown = util::printable(comment.substr(0, k_shown_comment));
  if (comment.size() > k_shown_comment) shown += "...";
  const auto wrong = [&](const std::string& what) {
    return std::unexpected("its comment is not what `orchestrate job` writes for " + recipe + "/" + tier + " (" + what +
                           "): '" + shown + "'");
  };
  if (!comment.starts_with(expected)) return wrong("expected '" + expected + "...'");
  std::string_view rest = comment.substr(expected.size());
  HandedBack out;
  if (work == SlurmWork::build) {
    out.key = std::string(take_word(rest, "key"));
    if (!lower_hex(out.key, 64)) return wrong("no key=<64 hex digits>");
  }
  const std::string_view set = take_word(rest, "set");
  if (!set.starts_with("sha256:") || !lower_hex(set.substr(7), 64)) return wrong("no set=sha256:<64 hex digits>");
  if (!rest.empty() || comment.ends_with(' ')) return wrong("words after the set");
  out.set = std::string(set);
  return out;
}

void take_handed_back(SlurmJob& job, SlurmWork work) {
  const std::string who = "job " + job.id + " (" + job.recipe + "/" + job.tier + ") completed but ";
  auto comment = engine::slurm::job_comment(job.id);
  if (!comment) {
    job.exit_code = util::ExitCode::outside_failure;
    job.message = who + "its comment could not be read: " + comment.error();
    return;
  }
  auto handed = read_handed_back(*comment, work, job.recipe, job.tier);
  if (!handed) {
    job.exit_code = util::ExitCode::outside_failure;
    job.message = who + handed.error() + "; nothing of it was taken";
    return;
  }
  job.set = std::move(handed->set);
  job.key = std::move(handed->key);
}

}  // namespace orc::app
