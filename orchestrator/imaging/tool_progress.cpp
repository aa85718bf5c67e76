#include "orchestrator/imaging/tool_progress.hpp"

#include <charconv>
#include <cstdio>
#include <map>
#include <ostream>
#include <vector>

#include "orchestrator/util/strings.hpp"

namespace orc::imaging {

namespace {

using Clock = std::chrono::steady_clock;

// Packages between two lines in lines mode when the total is unknown.
constexpr std::size_t k_unknown_total_step = 25;

std::size_t leading_number(std::string_view text) {
  std::size_t n = 0;
  text = util::trim(text);
  std::from_chars(text.data(), text.data() + text.size(), n);
  return n;
}

// "libc6..." -> "libc6"; nullopt-like empty when `word` is not one package.
std::string_view package_of(std::string_view word) {
  if (!word.ends_with("...")) return {};
  word.remove_suffix(3);
  return word;
}

}  // namespace

ToolProgress::ToolProgress(std::ostream& out, ProgressOptions options) : m_out(out), m_options(std::move(options)) {
  if (!m_options.now) m_options.now = [] { return Clock::now(); };
  m_start = m_options.now();
}

void ToolProgress::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const auto end = bytes.find('\n');
    if (end == std::string_view::npos) {
      m_partial.append(bytes);
      return;
    }
    m_partial.append(bytes.substr(0, end));
    bytes.remove_prefix(end + 1);
    std::string line = std::move(m_partial);
    m_partial.clear();
    // apt redraws with '\r' on a terminal; the last part is what it meant.
    while (!line.empty() && line.back() == '\r') line.pop_back();
    if (const auto cr = line.rfind('\r'); cr != std::string::npos) line.erase(0, cr + 1);
    on_line(line);
  }
}

void ToolProgress::finish() {
  if (m_live_shown) m_out << "\r\x1b[2K" << std::flush;
  m_live_shown = false;
}

void ToolProgress::on_line(std::string_view line) {
  if (line.starts_with("I: "))
    on_debootstrap(line.substr(3));
  else
    on_apt(line);
}

void ToolProgress::on_debootstrap(std::string_view text) {
  const std::vector<std::string> words = util::split_any(text, " ");
  if (words.empty()) return;
  const std::string& verb = words.front();
  if (verb == "Retrieving" && words.size() == 3) {
    ++m_fetched;
    step("debootstrap", "fetching", "packages", 0, words[1]);
  } else if (verb == "Retrieving" && words.size() == 2) {
    step("debootstrap", "fetching", "index files", 0, words[1]);
  } else if (words.size() == 2 && !package_of(words[1]).empty()) {
    const std::string_view package = package_of(words[1]);
    if (verb == "Extracting") step("debootstrap", "extracting", "packages", m_fetched, package);
    if (verb == "Unpacking") step("debootstrap", "unpacking", "packages", m_fetched, package);
    if (verb == "Configuring") step("debootstrap", "configuring", "packages", m_fetched, package);
  }
}

void ToolProgress::on_apt(std::string_view line) {
  const std::vector<std::string> words = util::split_any(line, " ");
  if (words.empty()) return;
  if (words.front().starts_with("Get:")) {
    if (m_apt_total == 0)
      step("apt", "fetching", "index files", 0, words.size() > 3 ? words[2] + " " + words[3] : "");
    else
      step("apt", "fetching", "packages", m_apt_total, words.size() > 4 ? words[4] : "");
  } else if (const auto newly = line.find(" newly installed, "); newly != std::string_view::npos) {
    const auto comma = line.find(", ");
    const std::size_t upgraded = leading_number(line.substr(0, comma));
    const std::size_t installed = comma < newly ? leading_number(line.substr(comma + 2)) : 0;
    m_apt_total = upgraded + installed;
    std::erase_if(m_stages, [](const auto& entry) { return entry.first.starts_with("apt: "); });
    say("apt", std::to_string(m_apt_total) + " packages to install");
  } else if (line.starts_with("Need to get ")) {
    say("apt", std::string(util::trim(line.substr(12, line.find(" of archives") - 12))) + " to fetch");
  } else if (words.size() >= 3 && words[0] == "Unpacking") {
    step("apt", "unpacking", "packages", m_apt_total, words[1]);
  } else if (words.size() >= 4 && words[0] == "Setting" && words[1] == "up") {
    step("apt", "configuring", "packages", m_apt_total, words[2]);
  }
}

void ToolProgress::step(std::string_view tool, std::string_view verb, std::string_view noun, std::size_t total,
                        std::string_view item) {
  const std::string stage = std::string(tool) + ": " + std::string(verb) + " " + std::string(noun);
  const bool started = !m_stages.contains(stage);
  Count& c = m_stages[stage];
  ++c.done;
  // A total the stage outgrew (debootstrap configures one package more than
  // it fetched, apt fetches one more than it installs): the count alone,
  // and no more lines for it.
  const bool outgrown = total != 0 && c.done > total;
  if (outgrown) total = 0;
  const std::string count = total ? std::to_string(c.done) + " of " + std::to_string(total) : std::to_string(c.done);
  const std::string text = std::string(verb) + " " + std::string(noun) + ": " + count;
  if (m_options.style == ProgressStyle::live) {
    std::string status = "images: " + std::string(tool) + ": " + text + " [" + elapsed() + "] " + std::string(item);
    if (m_options.width > 4 && status.size() >= m_options.width) status.resize(m_options.width - 1);
    m_out << "\r\x1b[2K" << status << std::flush;
    m_live_shown = true;
    return;
  }
  const std::size_t tenth = total ? c.done * 10 / total : c.done / k_unknown_total_step;
  if (outgrown || (!started && tenth == c.shown)) return;
  c.shown = tenth;
  m_out << "images: " << tool << ": " << text << " [" << elapsed() << "]" << std::endl;
}

void ToolProgress::say(std::string_view tool, const std::string& text) {
  finish();
  m_out << "images: " << tool << ": " << text << " [" << elapsed() << "]" << std::endl;
}

std::string ToolProgress::elapsed() const {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(m_options.now() - m_start).count();
  char text[32];
  std::snprintf(text, sizeof text, "%lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  return text;
}

}  // namespace orc::imaging
