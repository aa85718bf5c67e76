#include "orchestrator/app/build/build_key.hpp"

#include <fstream>
#include <sstream>

#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/recipe/config.hpp"
#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/process.hpp"
#include "orchestrator/util/redact.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::app {

namespace {

void put(std::string& bytes, std::string_view piece) {
  bytes += piece;
  bytes += '\0';
}

std::string file_digest(const std::filesystem::path& file) {
  const auto read = util::read_file(file, util::k_no_read_cap);
  if (!read) return "unreadable";
  const std::string& data = *read;
  return digest::sha256(std::as_bytes(std::span(data.data(), data.size()))).hex();
}

}  // namespace

void KeyHasher::text(std::string_view name, std::string_view value) {
  put(m_bytes, name);
  put(m_bytes, "text");
  put(m_bytes, std::to_string(value.size()));
  put(m_bytes, value);
  m_lines.emplace_back(std::string(name), std::string(value));
}

void KeyHasher::list(std::string_view name, const std::vector<std::string>& values) {
  put(m_bytes, name);
  put(m_bytes, "list");
  put(m_bytes, std::to_string(values.size()));
  for (const auto& v : values) {
    put(m_bytes, std::to_string(v.size()));
    put(m_bytes, v);
  }
  if (values.empty()) m_lines.emplace_back(std::string(name), "(none)");
  for (std::size_t i = 0; i < values.size(); ++i)
    m_lines.emplace_back(std::string(name) + "[" + std::to_string(i) + "]", values[i]);
}

void KeyHasher::lists(std::string_view name, const std::vector<std::vector<std::string>>& values) {
  put(m_bytes, name);
  put(m_bytes, "lists");
  put(m_bytes, std::to_string(values.size()));
  for (const auto& list : values) {
    put(m_bytes, std::to_string(list.size()));
    for (const auto& v : list) {
      put(m_bytes, std::to_string(v.size()));
      put(m_bytes, v);
    }
  }
  if (values.empty()) m_lines.emplace_back(std::string(name), "(none)");
  for (std::size_t i = 0; i < values.size(); ++i)
    m_lines.emplace_back(std::string(name) + "[" + std::to_string(i) + "]", util::shell_quoted(values[i]));
}

std::string KeyHasher::hex() const {
  return digest::sha256(std::as_bytes(std::span(m_bytes.data(), m_bytes.size()))).hex();
}

std::string KeyHasher::explain() const {
  std::string out;
  for (const auto& [name, value] : m_lines) {
    // A value with newlines (the canonical recipe) stays one line per field.
    std::string flat;
    for (char c : value)
      flat += c == '\n' ? std::string("\\n") : c == '\x1f' ? std::string(" \\x1f ") : std::string(1, c);
    out += name + ": " + flat + "\n";
  }
  return out;
}

std::string canonical_recipe(const recipe::Recipe& r) {
  std::string out;
  out += "name=" + r.name + "\n";
  out += "framework=" + std::string(recipe::framework_name(r.framework)) + "\n";
  if (r.source.kind == recipe::Source::Kind::git)
    // Credentials are no input of the build, and --explain prints this text.
    out += "source=git " + util::redact_credentials(r.source.url) + " " + r.source.ref + "\n";
  else
    out += "source=path\n";
  const auto range = [&out](std::string_view key, const std::optional<recipe::Requirement>& req) {
    if (req) out += "requires." + std::string(key) + "=" + req->range.text() + "\n";
  };
  range("cuda", r.requires_.cuda);
  range("cudnn", r.requires_.cudnn);
  range("gcc", r.requires_.gcc);
  range("framework", r.requires_.framework);
  for (const auto& step : r.build) {
    if (step.argv.empty())
      out += "step=script " + step.script.filename().string() + " sha256:" + file_digest(step.script) + "\n";
    else
      out += "step=argv " + util::join(step.argv, "\x1f") + "\n";
  }
  for (const auto& glob : r.artifacts) out += "artifact=" + glob + "\n";
  out += "nvcc=" + std::string(recipe::nvcc_policy_name(r.nvcc)) + "\n";
  return out;
}

KeyHasher hash_key(const KeyInputs& in) {
  KeyHasher h;
  h.text("schema", k_key_schema);
  h.text("tool.version", in.tool_version);
  h.text("recipe", in.recipe_text);
  h.text("tier", in.tier);
  h.text("source.kind", in.source_kind);
  h.text("source.revision", in.source_revision);
  h.text("engine", in.engine);
  h.text("image.reference", in.image);
  h.text("image.digest", in.image_digest.empty() ? "unknown" : in.image_digest);
  h.text("toolkit", in.toolkit);
  h.text("cudnn", in.cudnn.empty() ? "none" : in.cudnn);
  h.list("archs.sass", in.sass);
  h.list("archs.ptx", in.ptx);
  h.list("env", in.env);
  h.lists("steps", in.steps);
  return h;
}

}  // namespace orc::app
