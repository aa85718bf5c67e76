#include "orchestrator/cache/manifest.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>

#include "orchestrator/cache/signing.hpp"
#include "orchestrator/cache/store.hpp"
#include "orchestrator/util/json_nesting.hpp"

namespace orc::cache {

namespace {

using nlohmann::json;

// Deeper than any manifest goes (files[i].embedded.sass[j] is 4 levels).
constexpr std::size_t k_max_depth = 8;

json null_if_empty(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json archs(const arch::ArchList& sass, const arch::ArchList& ptx) {
  return {{"sass", sass.names()}, {"ptx", ptx.names()}};
}

// Reads typed fields, remembering the first violation with its JSON path.
class Reader {
 public:
  std::optional<ManifestError> error;

  void fail(const std::string& path, const std::string& what) {
    if (!error) error = ManifestError{ManifestError::Kind::malformed, path + ": " + what};
  }

  // `j` is an object with exactly these keys, and maybe the optional ones.
  bool object(const json& j, const std::string& path, std::initializer_list<std::string_view> keys,
              std::initializer_list<std::string_view> optional = {}) {
    if (!j.is_object()) return fail(path, "expected an object"), false;
    for (const auto& [key, value] : j.items())
      if (std::ranges::find(keys, std::string_view(key)) == keys.end() &&
          std::ranges::find(optional, std::string_view(key)) == optional.end())
        return fail(path, "unknown key '" + key + "'"), false;
    for (const auto key : keys)
      if (!j.contains(key)) return fail(path, "missing key '" + std::string(key) + "'"), false;
    return true;
  }

  std::string string(const json& j, const std::string& path, bool nullable = false) {
    if (nullable && j.is_null()) return {};
    if (!j.is_string()) return fail(path, nullable ? "expected a string or null" : "expected a string"), std::string();
    const auto& s = j.get_ref<const std::string&>();
    if (s.size() > k_max_manifest_string) return fail(path, "longer than the limit"), std::string();
    if (s.empty() && nullable) return fail(path, "empty string (null means none)"), std::string();
    return s;
  }

  std::vector<std::string> strings(const json& j, const std::string& path) {
    std::vector<std::string> out;
    if (!j.is_array()) return fail(path, "expected an array of strings"), out;
    if (j.size() > k_max_manifest_list) return fail(path, "more entries than the limit"), out;
    for (std::size_t i = 0; i < j.size(); ++i) out.push_back(string(j[i], path + "[" + std::to_string(i) + "]"));
    return out;
  }

  std::uint64_t size(const json& j, const std::string& path) {
    if (!j.is_number_unsigned() && !(j.is_number_integer() && j.get<std::int64_t>() >= 0))
      return fail(path, "expected a non-negative integer"), 0;
    return j.get<std::uint64_t>();
  }

  // "<hex>".
  std::string digest(const json& j, const std::string& path) {
    std::string s = string(j, path);
    if (!j.is_string()) return s;  // said already
    if (!is_sha256_hex(s)) return fail(path, "expected 64 lower-case hex digits"), std::string();
    return s;
  }

  // "sha256:<hex>" or null, parsed here once; a malformed one is a damaged
  // manifest, said with what is wrong with it.
  std::optional<digest::Digest> nullable_digest(const json& j, const std::string& path) {
    const std::string s = string(j, path, true);
    if (s.empty()) return std::nullopt;  // null, or said already
    auto parsed = digest::Digest::parse(s);
    if (!parsed) return fail(path, "expected sha256:<64 hex digits>; " + parsed.error()), std::nullopt;
    return *parsed;
  }

  void archs(const json& j, const std::string& path, arch::ArchList& sass, arch::ArchList& ptx) {
    if (!object(j, path, {"sass", "ptx"})) return;
    sass = arch::ArchList(strings(j["sass"], path + ".sass"));
    ptx = arch::ArchList(strings(j["ptx"], path + ".ptx"));
  }
};

// "0644": four octal digits, the first 0, so at most 0777.
void read_mode(Reader& r, const json& j, const std::string& path, ManifestFile& file) {
  const std::string text = r.string(j, path);
  if (r.error) return;
  if (text.size() != 4 || text[0] != '0' || text.find_first_not_of("01234567") != std::string::npos)
    return r.fail(path, "expected four octal digits from 0000 to 0777");
  file.mode = static_cast<unsigned>(std::stoul(text, nullptr, 8));
}

// Present only on a file larger than one chunk, laid out exactly as
// chunk_size_for says: a pull relies on the chunks covering every byte.
void read_chunks(Reader& r, const json& j, const std::string& path, ManifestFile& file) {
  if (!r.object(j, path, {"sha256", "size"})) return;
  file.chunks.size = r.size(j["size"], path + ".size");
  const json& digests = j["sha256"];
  if (!digests.is_array()) return r.fail(path + ".sha256", "expected an array");
  if (digests.size() > k_max_chunks) return r.fail(path + ".sha256", "more entries than the limit");
  for (std::size_t i = 0; i < digests.size(); ++i)
    file.chunks.sha256.push_back(r.digest(digests[i], path + ".sha256[" + std::to_string(i) + "]"));
  if (r.error) return;
  if (file.chunks.size == 0) return r.fail(path, "a file without chunks has no \"chunks\" key");
  if (auto problem = chunk_layout_problem(file.chunks, file.size); !problem.empty()) r.fail(path, problem);
}

// A library key as inspect's table writes them: lower-case letters and digits.
bool library_key(std::string_view s) {
  return !s.empty() && s.size() <= 64 && s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") == s.npos;
}

// "libcublas.so.13" names major 13: the soname's first version component.
bool soname_names_major(std::string_view soname, std::optional<int> major) {
  const auto so = soname.rfind(".so");
  if (so == std::string_view::npos) return false;
  const std::string_view rest = soname.substr(so + 3);
  if (!major) return rest.empty();
  const std::string digits = std::to_string(*major);
  return rest.starts_with("." + digits) && (rest.size() == digits.size() + 1 || rest[digits.size() + 1] == '.');
}

constexpr int k_max_library_major = 9999;

// Present only on a file that needs something: each soname once, sorted.
void read_needs(Reader& r, const json& j, const std::string& path, ManifestFile& file) {
  if (!j.is_array()) return r.fail(path, "expected an array");
  if (j.empty()) return r.fail(path, "empty (a file that needs nothing has no \"needs\" key)");
  if (j.size() > k_max_manifest_list) return r.fail(path, "more entries than the limit");
  for (std::size_t i = 0; i < j.size() && !r.error; ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (!r.object(j[i], at, {"library", "major", "soname"})) return;
    LibraryNeed need{.library = r.string(j[i]["library"], at + ".library"),
                     .major = std::nullopt,
                     .soname = r.string(j[i]["soname"], at + ".soname")};
    if (!j[i]["major"].is_null()) {
      const std::uint64_t major = r.size(j[i]["major"], at + ".major");
      if (major > k_max_library_major) return r.fail(at + ".major", "larger than the limit");
      need.major = static_cast<int>(major);
    }
    if (r.error) return;
    if (!library_key(need.library)) return r.fail(at + ".library", "expected lower-case letters and digits");
    if (need.soname.find('/') != std::string::npos || !soname_names_major(need.soname, need.major))
      return r.fail(at + ".soname", "'" + need.soname + "' is not a file name of that major");
    if (!file.needs.empty() && !(file.needs.back().soname < need.soname))
      return r.fail(at + ".soname", "needs are not sorted by soname, or '" + need.soname + "' appears twice");
    file.needs.push_back(std::move(need));
  }
}

void read_files(Reader& r, const json& j, Manifest& m) {
  if (!j.is_array()) return r.fail("files", "expected an array");
  if (j.size() > k_max_manifest_files) return r.fail("files", "more files than the limit");
  for (std::size_t i = 0; i < j.size() && !r.error; ++i) {
    const std::string path = "files[" + std::to_string(i) + "]";
    const json& f = j[i];
    if (!r.object(f, path, {"path", "sha256", "size", "requested", "embedded"}, {"chunks", "mode", "needs"})) return;
    ManifestFile file{.path = r.string(f["path"], path + ".path"),
                      .sha256 = r.digest(f["sha256"], path + ".sha256"),
                      .size = r.size(f["size"], path + ".size")};
    r.archs(f["requested"], path + ".requested", file.requested_sass, file.requested_ptx);
    r.archs(f["embedded"], path + ".embedded", file.embedded_sass, file.embedded_ptx);
    if (f.contains("chunks")) read_chunks(r, f["chunks"], path + ".chunks", file);
    if (f.contains("mode")) read_mode(r, f["mode"], path + ".mode", file);
    if (f.contains("needs")) read_needs(r, f["needs"], path + ".needs", file);
    if (file.path.empty()) r.fail(path + ".path", "empty");
    if (!m.files.empty() && !(m.files.back().path < file.path))
      r.fail(path + ".path", "files are not sorted by path, or '" + file.path + "' appears twice");
    m.files.push_back(std::move(file));
  }
}

// A tier has GPUs (recipe/ refuses one without); names and CCs are read
// as text here and as compute capabilities where the set is judged.
void read_built_for(Reader& r, const json& j, Manifest& m) {
  if (!r.object(j, "built_for", {"gpus", "ptx"})) return;
  BuiltFor b;
  b.ptx = r.string(j["ptx"], "built_for.ptx");
  if (b.ptx != "none" && b.ptx != "highest" && b.ptx != "all")
    return r.fail("built_for.ptx", "'" + b.ptx + "' is not a PTX policy (none, highest, all)");
  const json& gpus = j["gpus"];
  if (!gpus.is_array() || gpus.empty()) return r.fail("built_for.gpus", "not a list of GPUs");
  for (std::size_t i = 0; i < gpus.size() && !r.error; ++i) {
    const std::string at = "built_for.gpus[" + std::to_string(i) + "]";
    if (!r.object(gpus[i], at, {"name", "cc"})) return;
    b.gpus.push_back(
        {.name = r.string(gpus[i]["name"], at + ".name", true), .cc = r.string(gpus[i]["cc"], at + ".cc")});
  }
  m.built_for = std::move(b);
}

void read_trigger(Reader& r, const json& j, Manifest& m) {
  if (!r.object(j, "trigger", {"reason", "from", "to"})) return;
  RebuildTrigger t;
  t.reason = r.string(j["reason"], "trigger.reason");
  if (r.object(j["from"], "trigger.from", {"set", "toolkit", "image", "image_digest"})) {
    t.from_set = r.nullable_digest(j["from"]["set"], "trigger.from.set");
    t.from_toolkit = r.string(j["from"]["toolkit"], "trigger.from.toolkit");
    t.from_image = r.string(j["from"]["image"], "trigger.from.image");
    t.from_image_digest = r.string(j["from"]["image_digest"], "trigger.from.image_digest", true);
  }
  if (r.object(j["to"], "trigger.to", {"toolkit", "image", "image_digest"})) {
    t.to_toolkit = r.string(j["to"]["toolkit"], "trigger.to.toolkit");
    t.to_image = r.string(j["to"]["image"], "trigger.to.image");
    t.to_image_digest = r.string(j["to"]["image_digest"], "trigger.to.image_digest", true);
  }
  m.trigger = std::move(t);
}

// The signed keys of a run, all present or all absent (an unsigned run of
// before runs were signed). Only their shape is checked here; whether the
// signature is the named node's over this run, for this set and tier, is
// verify_smoke_run's question (smoke_run.hpp), asked by whoever relies on it.
void read_run_signature(Reader& r, const json& j, const std::string& at, SmokeAttestation& run) {
  constexpr std::array<std::string_view, 5> k_signed = {"key_id", "member", "node", "ordinal", "signature"};
  const auto present = std::ranges::count_if(k_signed, [&](std::string_view k) { return j.contains(k); });
  if (present == 0) return;
  for (const auto key : k_signed)
    if (!j.contains(key)) return r.fail(at, "missing key '" + std::string(key) + "' of a signed run");
  run.node = r.string(j["node"], at + ".node");
  if (run.node.empty()) r.fail(at + ".node", "empty");
  run.key_id = r.string(j["key_id"], at + ".key_id");
  if (run.key_id.size() != 16 || run.key_id.find_first_not_of("0123456789abcdef") != std::string::npos)
    r.fail(at + ".key_id", "expected 16 lower-case hex digits");
  const std::uint64_t ordinal = r.size(j["ordinal"], at + ".ordinal");
  if (ordinal > k_max_gpu_ordinal) r.fail(at + ".ordinal", "larger than the limit");
  run.ordinal = static_cast<std::uint32_t>(ordinal);
  if (!j["member"].is_boolean()) return r.fail(at + ".member", "expected true or false");
  run.member = j["member"].get<bool>();
  const auto raw = base64_decode(r.string(j["signature"], at + ".signature"));
  if (!raw || raw->size() != 64) return r.fail(at + ".signature", "expected 64 bytes of base64");
  run.signature = *raw;
}

void read_smoke(Reader& r, const json& j, Manifest& m) {
  if (!j.is_object()) return r.fail("smoke", "expected an object of tiers");
  if (j.size() > k_max_manifest_list) return r.fail("smoke", "more tiers than the limit");
  for (const auto& [tier, runs] : j.items()) {
    const std::string path = "smoke." + tier;
    if (!runs.is_array()) return r.fail(path, "expected an array");
    if (runs.size() > k_max_manifest_list) return r.fail(path, "more entries than the limit");
    auto& list = m.smoke[tier];
    for (std::size_t i = 0; i < runs.size() && !r.error; ++i) {
      const std::string at = path + "[" + std::to_string(i) + "]";
      const json& run = runs[i];
      if (!r.object(run, at, {"gpu", "cc", "driver", "outcome", "time"},
                    {"key_id", "member", "node", "ordinal", "signature"}))
        return;
      SmokeAttestation a{.gpu = r.string(run["gpu"], at + ".gpu"),
                         .cc = r.string(run["cc"], at + ".cc"),
                         .driver = r.string(run["driver"], at + ".driver"),
                         .outcome = r.string(run["outcome"], at + ".outcome"),
                         .time = r.string(run["time"], at + ".time")};
      read_run_signature(r, run, at, a);
      list.push_back(std::move(a));
    }
  }
}

}  // namespace

std::string mode_text(unsigned mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", mode & 07777u);
  return text;
}

unsigned landing_mode(const ManifestFile& file, unsigned found) {
  if (file.mode) return *file.mode & 0777u;
  return (found & 0100u) != 0 ? 0755u : 0644u;
}

std::string mode_problem(const ManifestFile& file, unsigned found) {
  if (!file.mode || (found & 07777u) == *file.mode) return {};
  return "'" + file.path + "' has mode " + mode_text(found) + " in the layer; the signed manifest says " +
         mode_text(*file.mode);
}

std::string canonical_json(const Manifest& m) {
  // nlohmann::json keeps object keys in a std::map: sorted, which is the point.
  json j;
  j["schema_version"] = Manifest::k_schema_version;
  j["recipe"] = m.recipe;
  j["framework"] = m.framework;
  j["tier"] = m.tier;
  j["key"] = m.key;
  j["source"] = {{"kind", m.source_kind}, {"revision", m.source_revision}};
  j["engine"] = m.engine;
  j["image"] = {{"reference", m.image}, {"digest", null_if_empty(m.image_digest)}};
  j["toolkit"] = m.toolkit;
  j["cudnn"] = null_if_empty(m.cudnn);
  j["host_compiler"] = null_if_empty(m.host_compiler);
  std::vector<const ManifestFile*> files;
  for (const auto& f : m.files) files.push_back(&f);
  std::ranges::sort(files, {}, &ManifestFile::path);
  j["files"] = json::array();
  for (const ManifestFile* f : files) {
    json file{{"path", f->path},
              {"sha256", f->sha256},
              {"size", f->size},
              {"requested", archs(f->requested_sass, f->requested_ptx)},
              {"embedded", archs(f->embedded_sass, f->embedded_ptx)}};
    if (f->chunks.size != 0) file["chunks"] = {{"sha256", f->chunks.sha256}, {"size", f->chunks.size}};
    if (f->mode) file["mode"] = mode_text(*f->mode);
    if (!f->needs.empty()) {
      std::vector<const LibraryNeed*> needs;
      for (const auto& n : f->needs) needs.push_back(&n);
      std::ranges::sort(needs, {}, &LibraryNeed::soname);
      json list = json::array();
      for (const LibraryNeed* n : needs)
        list.push_back(
            {{"library", n->library}, {"major", n->major ? json(*n->major) : json(nullptr)}, {"soname", n->soname}});
      file["needs"] = std::move(list);
    }
    j["files"].push_back(std::move(file));
  }
  j["build_log"] = m.build_log ? json(m.build_log->to_string()) : json(nullptr);
  j["warnings"] = m.warnings;
  j["created"] = m.created;
  j["smoke"] = json::object();
  for (const auto& [tier, runs] : m.smoke) {
    json list = json::array();
    for (const auto& s : runs) {
      json run{{"gpu", s.gpu}, {"cc", s.cc}, {"driver", s.driver}, {"outcome", s.outcome}, {"time", s.time}};
      if (s.is_signed()) {
        run["node"] = s.node;
        run["key_id"] = s.key_id;
        run["ordinal"] = s.ordinal;
        run["member"] = s.member;
        run["signature"] = base64_encode(s.signature);
      }
      list.push_back(std::move(run));
    }
    j["smoke"][tier] = std::move(list);
  }
  if (m.trigger) {
    const RebuildTrigger& t = *m.trigger;
    j["trigger"] = {
        {"reason", t.reason},
        {"from",
         {{"set", t.from_set ? json(t.from_set->to_string()) : json(nullptr)},
          {"toolkit", t.from_toolkit},
          {"image", t.from_image},
          {"image_digest", null_if_empty(t.from_image_digest)}}},
        {"to", {{"toolkit", t.to_toolkit}, {"image", t.to_image}, {"image_digest", null_if_empty(t.to_image_digest)}}}};
  }
  if (m.built_for) {
    json gpus = json::array();
    for (const auto& g : m.built_for->gpus) gpus.push_back({{"name", null_if_empty(g.name)}, {"cc", g.cc}});
    j["built_for"] = {{"gpus", std::move(gpus)}, {"ptx", m.built_for->ptx}};
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::expected<Manifest, ManifestError> parse_manifest(std::string_view text) {
  using Kind = ManifestError::Kind;
  if (text.size() > k_max_manifest_bytes)
    return std::unexpected(
        ManifestError{Kind::malformed, "larger than " + std::to_string(k_max_manifest_bytes) + " bytes"});
  if (!util::json_nesting_within(text, k_max_depth))
    return std::unexpected(ManifestError{Kind::not_ours, "nested deeper than any manifest"});
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::unexpected(ManifestError{Kind::not_ours, "not a JSON object"});
  const auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer() || version->get<std::int64_t>() != Manifest::k_schema_version)
    return std::unexpected(ManifestError{Kind::not_ours, "not a manifest of schema version 2"});

  Reader r;
  if (!r.object(j, "manifest",
                {"schema_version", "recipe", "framework", "tier", "key", "source", "engine", "image", "toolkit",
                 "cudnn", "host_compiler", "files", "build_log", "warnings", "created", "smoke"},
                {"trigger", "built_for"}))
    return std::unexpected(*r.error);
  Manifest m;
  m.recipe = r.string(j["recipe"], "recipe");
  m.framework = r.string(j["framework"], "framework");
  m.tier = r.string(j["tier"], "tier");
  m.key = r.string(j["key"], "key");
  if (r.object(j["source"], "source", {"kind", "revision"})) {
    m.source_kind = r.string(j["source"]["kind"], "source.kind");
    m.source_revision = r.string(j["source"]["revision"], "source.revision");
  }
  m.engine = r.string(j["engine"], "engine");
  if (r.object(j["image"], "image", {"reference", "digest"})) {
    m.image = r.string(j["image"]["reference"], "image.reference");
    m.image_digest = r.string(j["image"]["digest"], "image.digest", true);
  }
  m.toolkit = r.string(j["toolkit"], "toolkit");
  m.cudnn = r.string(j["cudnn"], "cudnn", true);
  m.host_compiler = r.string(j["host_compiler"], "host_compiler", true);
  if (!r.error) read_files(r, j["files"], m);
  m.build_log = r.nullable_digest(j["build_log"], "build_log");
  m.warnings = r.strings(j["warnings"], "warnings");
  m.created = r.string(j["created"], "created");
  if (!r.error) read_smoke(r, j["smoke"], m);
  if (!r.error && j.contains("trigger")) read_trigger(r, j["trigger"], m);
  if (!r.error && j.contains("built_for")) read_built_for(r, j["built_for"], m);
  if (r.error) return std::unexpected(*r.error);
  return m;
}

}  // namespace orc::cache
