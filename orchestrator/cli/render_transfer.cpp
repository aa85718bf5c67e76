// `orchestrate push | pull | fetch`, rendered: a line per set (fetch: a line
// per file), or --json; warnings (--insecure) on stderr.
#include <nlohmann/json.hpp>
#include <ostream>

#include "orchestrator/cli/render.hpp"
#include "orchestrator/site/remote.hpp"
#include "orchestrator/util/escape.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::cli {

namespace {

using nlohmann::ordered_json;

constexpr std::string_view k_warning_prefix = "orchestrate: warning: ";

std::string short_hex(const std::string& hex) { return hex.substr(0, site::k_tag_digest_chars); }
std::string short_hex(const digest::Digest& digest) { return short_hex(digest.hex()); }

ordered_json digest_or_null(const std::optional<digest::Digest>& digest) {
  return digest ? ordered_json(digest->to_string()) : ordered_json(nullptr);
}

void warn(Io& io, const std::vector<util::Diagnostic>& warnings) {
  for (const auto& w : warnings) io.err << w.render();
}

// A warning as the JSON carries it: the line stderr shows, without its
// "orchestrate: warning: " and newline.
std::string warning_text(const util::Diagnostic& warning) {
  const std::string rendered = warning.render();
  std::string_view said = util::trim(rendered);
  if (said.starts_with(k_warning_prefix)) said.remove_prefix(k_warning_prefix.size());
  return std::string(said);
}

std::string push_line(const app::PushReport& report, const app::PushedEntry& p) {
  return "pushed " + p.recipe + " for " + p.tier + " sha256:" + short_hex(p.manifest) + " as " + report.remote + ":" +
         p.tag + " (" + std::to_string(p.uploaded) + " blobs sent, " + std::to_string(p.skipped) + " already there" +
         (p.moved_latest ? "; " + site::latest_tag(p.recipe, p.tier) + " moved to it" +
                               (p.previous ? " from sha256:" + short_hex(*p.previous) : "")
                         : "") +
         (p.current ? "; the current set" : "") + ")\n" +
         (!p.newer ? ""
                   : "  note: a newer set by time, sha256:" + short_hex(*p.newer) +
                         ", is not current (the last build answered this one); 'orchestrate promote " + p.recipe +
                         " --tier " + p.tier + " --digest " + short_hex(*p.newer) + "' makes it current\n");
}

std::string file_line(const app::FetchReport& report, const app::FetchedFile& f) {
  return "  " + util::printable((report.dir / f.path).string()) + "  " + util::human_size(f.size) +
         "  sha256:" + short_hex(f.sha256) + "  sass " + f.sass.joined(",") + "  ptx " + f.ptx.joined(",") + "\n";
}

}  // namespace

std::string render(const app::PushReport& report, Format format) {
  if (format == Format::json) {
    ordered_json pushed = ordered_json::array();
    for (const auto& p : report.pushed)
      pushed.push_back({{"recipe", p.recipe},
                        {"tier", p.tier},
                        {"manifest", p.manifest.to_string()},
                        {"artifact", p.artifact.to_string()},
                        {"tag", p.tag},
                        {"uploaded", p.uploaded},
                        {"skipped", p.skipped},
                        {"latest", p.moved_latest},
                        {"current", p.current},
                        {"newer", digest_or_null(p.newer)},
                        {"previous", digest_or_null(p.previous)}});
    return ordered_json{{"remote", report.remote}, {"pushed", std::move(pushed)}}.dump(2) + "\n";
  }
  std::string text;
  for (const auto& p : report.pushed) text += push_line(report, p);
  return text;
}

std::string render(const app::PromoteReport& report, Format format) {
  if (format == Format::json) {
    ordered_json out{{"recipe", report.recipe},
                     {"tier", report.tier},
                     {"digest", report.manifest.to_string()},
                     {"previous", digest_or_null(report.previous)},
                     {"remote", report.remote.empty() ? ordered_json(nullptr) : ordered_json(report.remote)}};
    out["tag"] = report.pushed ? ordered_json(site::latest_tag(report.recipe, report.tier)) : ordered_json(nullptr);
    out["tag_previous"] = report.pushed ? digest_or_null(report.pushed->previous) : ordered_json(nullptr);
    return out.dump(2) + "\n";
  }
  std::string text = "sha256:" + short_hex(report.manifest) + " is the current set of " + report.recipe + " for " +
                     report.tier + " here";
  if (report.previous)
    text += " (before: sha256:" + short_hex(*report.previous) +
            (report.previous_recorded ? "" : ", the newest verified set, as none was recorded") + ")";
  text += "\n";
  if (!report.pushed)
    return text +
           "  note: no remote is configured (ORCHESTRATE_REMOTE or 'remote:'): the registry's tag was not moved\n";
  const app::PushedEntry& p = *report.pushed;
  return text + "on " + report.remote + ": " + site::latest_tag(p.recipe, p.tier) + " names it" +
         (p.previous ? " (before: sha256:" + short_hex(*p.previous) + ")" : "") + "; " + std::to_string(p.uploaded) +
         " blobs sent, " + std::to_string(p.skipped) + " already there\n";
}

std::string render(const app::PullReport& report, Format format) {
  if (format == Format::json)
    return ordered_json{{"recipe", report.recipe},
                        {"tier", report.tier},
                        {"digest", report.manifest.to_string()},
                        {"downloaded", report.downloaded},
                        {"verified", report.verified}}
               .dump(2) +
           "\n";
  return (report.downloaded ? "pulled " : "already stored: ") + report.recipe + " for " + report.tier + " " +
         report.manifest.to_string() + "\n";
}

std::string render(const app::FetchReport& report, Format format) {
  if (format == Format::json) {
    ordered_json files = ordered_json::array();
    for (const auto& f : report.files)
      files.push_back({{"path", f.path}, {"sha256", f.sha256}, {"sass", f.sass.names()}, {"ptx", f.ptx.names()}});
    ordered_json verified{{"digest", report.digest_ok}, {"signature", report.signature_ok}, {"archs", report.archs_ok}};
    if (report.smoke_ok) verified["smoke"] = *report.smoke_ok;
    ordered_json warnings = ordered_json::array();
    for (const auto& w : report.warnings) warnings.push_back(warning_text(w));
    ordered_json out;  // insertion order is the documented order
    out["recipe"] = report.recipe;
    out["tier"] = report.tier;
    out["tier_from"] = report.tier_from_manifest ? "manifest" : "configuration";
    out["digest"] = report.manifest.to_string();
    out["dir"] = util::utf8_escaped(report.dir.string());
    out["from"] = report.from;
    out["files"] = std::move(files);
    out["verified"] = std::move(verified);
    out["warnings"] = std::move(warnings);
    return out.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
  }
  std::string out = "fetched " + report.recipe + " for " + report.tier + " " + report.manifest.to_string() + " from " +
                    (report.from == "store" ? std::string("the local store") : report.from) + " into " +
                    util::printable(report.dir.string()) + "\n";
  out += "verified: digest " + std::string(report.digest_ok ? "yes" : "no") + ", signature " +
         (report.signature_ok ? "yes (key " + report.signer + ")" : std::string("NO (--insecure)")) + ", archs " +
         (report.archs_ok ? "yes" : "no") +
         (report.tier_from_manifest
              ? " (against the GPUs its signed manifest records for " + report.tier + ": no configuration here)"
              : "") +
         (report.smoke_ok ? std::string(", smoke ") + (*report.smoke_ok ? "yes" : "no") : "") + "\n";
  for (const auto& j : report.jit) out += "note: " + j + "\n";
  for (const auto& f : report.files) out += file_line(report, f);
  return out;
}

void emit(Io& io, const app::PushReport& report, Format format) {
  io.out << render(report, format);
  io.exit_code = report.exit_code;
}

void emit(Io& io, const app::PromoteReport& report, Format format) {
  io.out << render(report, format);
  io.exit_code = report.exit_code;
}

void emit(Io& io, const app::PullReport& report, Format format) {
  io.out << render(report, format);
  warn(io, report.warnings);
  io.exit_code = report.exit_code;
}

void emit(Io& io, const app::FetchReport& report, Format format) {
  io.out << render(report, format);
  warn(io, report.warnings);
  io.exit_code = report.exit_code;
}

}  // namespace orc::cli
