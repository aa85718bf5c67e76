#include "orchestrator/util/redact.hpp"

#include <cctype>

namespace orc::util {

namespace {

constexpr std::string_view k_scheme_end = "://";

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The end of the word that starts at `from`: the next blank or "://".
std::size_t word_end(std::string_view text, std::size_t from) {
  std::size_t end = text.find(k_scheme_end, from);
  if (end == std::string_view::npos) end = text.size();
  for (std::size_t i = from; i < end; ++i)
    if (is_blank(text[i])) return i;
  return end;
}

// Whether the '@' at `at` of `word` starts a digest ("repo@sha256:" and
// hex): an image reference's, not the end of a userinfo. A password would
// have to hold '@', an algorithm, ':' and 32 hex digits to pass for one.
bool starts_digest(std::string_view word, std::size_t at) {
  std::size_t i = at + 1;
  const auto algorithm = i;
  while (i < word.size() && ((word[i] >= 'a' && word[i] <= 'z') || (word[i] >= '0' && word[i] <= '9') ||
                             word[i] == '+' || word[i] == '.' || word[i] == '_' || word[i] == '-'))
    ++i;
  if (i == algorithm || i >= word.size() || word[i] != ':') return false;
  std::size_t hex = 0;
  for (++i; i < word.size() && std::isxdigit(static_cast<unsigned char>(word[i])); ++i) ++hex;
  return hex >= 32;
}

}  // namespace

std::vector<TextSpan> credential_spans(std::string_view text) {
  std::vector<TextSpan> spans;
  std::size_t scheme = text.find(k_scheme_end);
  while (scheme != std::string_view::npos) {
    const std::size_t begin = scheme + k_scheme_end.size();
    const std::size_t end = word_end(text, begin);
    const std::string_view word = text.substr(begin, end - begin);
    std::size_t at = word.rfind('@');
    while (at != std::string_view::npos && at > 0 && starts_digest(word, at)) at = word.rfind('@', at - 1);
    if (at != std::string_view::npos && at > 0) spans.push_back({begin, begin + at});
    scheme = text.find(k_scheme_end, end);
  }
  return spans;
}

std::string redact_credentials(std::string_view text) {
  std::string out;
  std::size_t copied = 0;
  for (const TextSpan& span : credential_spans(text)) {
    out.append(text.substr(copied, span.begin - copied));
    out.append(k_redacted);
    copied = span.end;
  }
  out.append(text.substr(copied));
  return out;
}

std::size_t redacted_offset(std::string_view text, std::size_t offset) {
  std::size_t shifted = offset;
  for (const TextSpan& span : credential_spans(text)) {
    if (offset < span.begin) break;
    if (offset < span.end) return shifted - (offset - span.begin);
    shifted = shifted - (span.end - span.begin) + k_redacted.size();
  }
  return shifted;
}

}  // namespace orc::util
