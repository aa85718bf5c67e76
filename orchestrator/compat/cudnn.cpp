#include "orchestrator/compat/cudnn.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::compat {

namespace {

// One cuDNN minor release as written in the table below. `cuda` is a
// space-separated list of inclusive major.minor spans ("11.0-11.8 12.0-12.2")
// or single toolkits ("9.0"); `unconfirmed` names fields the reference marks
// UNCONFIRMED or that we had to infer.
struct Row {
  std::string_view version;
  std::string_view cuda;
  std::string_view min_cc;
  std::string_view unconfirmed;
  std::string_view source;
};

// cuda-compat.md section 4. The reference groups patch releases ("7.5.1 -
// 7.6.2") and some minors ("9.1 - 9.4"); a row here is one minor release and
// its `cuda` is the union over that minor's patch releases, since the
// resolver asks "is there a build of 7.6 for CUDA 10.2", not "of 7.6.0".
//
// min_cc is the oldest CC any build runs on: 3.0 while a CUDA 10.2 (or older)
// build exists (up to 8.4), 3.5 for the CUDA-11-only 8.5 - 8.8, 5.0 for 8.9 -
// 9.10, 7.5 from 9.11. CUDA 11 itself rejects sm_30, so 3.0 on 8.0 - 8.4 never
// pairs Kepler 3.0 with a CUDA 11 build.
//
// Where the reference says only "12.x" we write 12.0-12.9, as NVIDIA's 9.17
// matrix does. CUDA 13 upper ends: only 9.17 is given (13.0-13.1). 9.12 -
// 9.16 predate CUDA 13.1 and get 13.0; 9.18 - 9.20 get at least what 9.17
// lists. All of these are marked.
constexpr std::array k_rows = {
    Row{"7.0", "8.0 9.0", "3.0", "cuda", "[SRC-spack-cudnn]; matrix not seen"},
    Row{"7.1", "8.0 9.0-9.2", "3.0", "cuda", "[SRC-spack-cudnn] 7.1.3-9.1; cuDNN 8.0.1 matrix TOC (7.1.4: 9.2)"},
    Row{"7.2", "8.0 9.0 9.2", "3.0", "cuda", "cuDNN 8.0.1 matrix TOC (7.1.4-7.2.1); [SRC-spack-cudnn]"},
    Row{"7.3", "9.0 9.2 10.0", "3.0", "", "cudnn_760 support matrix"},
    Row{"7.4", "9.0 9.2 10.0", "3.0", "", "cudnn_760 support matrix"},
    Row{"7.5", "9.0 9.2 10.0-10.1", "3.0", "", "cudnn_760 support matrix (7.5.0; 7.5.1 adds 10.1)"},
    Row{"7.6", "9.0 9.2 10.0-10.2", "3.0", "", "cudnn_760 and cudnn-803 support matrices (7.6.4 adds 10.2)"},
    Row{"8.0", "10.1-10.2 11.0-11.1", "3.0", "", "cudnn-803 support matrix; [SRC-spack-cudnn] 8.0.4-8.0.5"},
    Row{"8.1", "10.2 11.0-11.2", "3.0", "", "cudnn-822 support matrix"},
    Row{"8.2", "10.2 11.0-11.4", "3.0", "", "cudnn-822 support matrix"},
    Row{"8.3", "10.2 11.0-11.5", "3.0", "", "cudnn-830 support matrix"},
    Row{"8.4", "10.2 11.0-11.6", "3.0", "", "cudnn-840 support matrix"},
    Row{"8.5", "11.0-11.7", "3.5", "cuda", "cudnn-850 support matrix (10.2 build not visible)"},
    Row{"8.6", "11.0-11.8", "3.5", "min_cc", "[SRC-spack-cudnn] 8.6.0.163-11.8"},
    Row{"8.7", "11.0-11.8", "3.5", "min_cc", "[SRC-spack-cudnn] 8.7.0.84-11.8"},
    Row{"8.8", "11.0-11.8 12.0", "3.5", "min_cc", "[SRC-spack-cudnn] 8.8.1.3-12/-11; nvidia/cuda 12.0.1 image"},
    Row{"8.9", "11.0-11.8 12.0-12.2", "5.0", "", "cudnn-896 support matrix"},
    Row{"9.0", "11.0-11.8 12.0-12.3", "5.0", "", "cuDNN v9.0.0 support matrix"},
    // 9.1 - 9.4: "up to 12.4/12.5/12.6 per release"; 9.1 and 9.2 are pinned by
    // the nvidia/cuda 12.4.1 and 12.5.1 images, 9.3/9.4 are our reading.
    Row{"9.1", "11.0-11.8 12.0-12.4", "5.0", "", "cuDNN 9.1.0 support matrix; nvidia/cuda 12.4.1 image"},
    Row{"9.2", "11.0-11.8 12.0-12.5", "5.0", "", "cuDNN support matrix; nvidia/cuda 12.5.1 image"},
    Row{"9.3", "11.0-11.8 12.0-12.6", "5.0", "cuda", "cuDNN support matrix (9.1-9.4 row)"},
    Row{"9.4", "11.0-11.8 12.0-12.6", "5.0", "cuda", "cuDNN v9.5.0 matrix (9.4.0 for CUDA 11.x)"},
    Row{"9.5", "11.0-11.8 12.0-12.6", "5.0", "", "cuDNN v9.5.1 support matrix"},
    Row{"9.6", "11.8 12.0-12.9", "5.0", "cuda", "cuDNN 9.10.2 support matrix (9.6-9.10 row)"},
    Row{"9.7", "11.8 12.0-12.9", "5.0", "cuda", "cuDNN 9.10.2 support matrix (9.6-9.10 row)"},
    Row{"9.8", "11.8 12.0-12.9", "5.0", "cuda", "cuDNN 9.10.2 support matrix (9.6-9.10 row); 12.8.1 image"},
    Row{"9.9", "11.8 12.0-12.9", "5.0", "cuda", "cuDNN 9.10.2 support matrix (9.6-9.10 row)"},
    Row{"9.10", "11.8 12.0-12.9", "5.0", "", "cuDNN 9.10.2 support matrix; last CUDA 11 build [SRC-spack-cudnn]"},
    Row{"9.11", "12.0-12.9", "7.5", "", "[SRC-spack-cudnn] -12 only; SM >= 7.5 [3P] build scripts"},
    Row{"9.12", "12.0-12.9 13.0", "7.5", "cuda", "[SRC-spack-cudnn] 9.12.0.46-13; nvidia/cuda 13.0.0 image"},
    Row{"9.13", "12.0-12.9 13.0", "7.5", "cuda", "[SRC-spack-cudnn] -12/-13 builds"},
    Row{"9.14", "12.0-12.9 13.0", "7.5", "cuda", "[SRC-spack-cudnn] -12/-13 builds"},
    Row{"9.15", "12.0-12.9 13.0", "7.5", "cuda", "[SRC-spack-cudnn] -12/-13 builds"},
    Row{"9.16", "12.0-12.9 13.0", "7.5", "cuda", "[SRC-spack-cudnn] -12/-13 builds"},
    Row{"9.17", "12.0-12.9 13.0-13.1", "7.5", "", "cuDNN 9.17.0 support matrix"},
    Row{"9.18", "12.0-12.9 13.0-13.1", "7.5", "cuda", "[SRC-spack-cudnn] -12/-13 builds"},
    Row{"9.19", "12.0-12.9 13.0-13.1", "7.5", "cuda", "[SRC-spack-cudnn] -12/-13 builds"},
    Row{"9.20", "12.0-12.9 13.0-13.1", "7.5", "cuda", "[SRC-spack-cudnn] -12/-13 builds"},
    // 9.21 - 9.28: NVIDIA's redistrib_9.X.Y.json (release date, cuda12 and
    // cuda13 builds); the JSON names the CUDA major only and no support
    // matrix after 9.17 was seen, so each row's CUDA 13 span ends at the
    // newest 13.x released before it (13.2 March 2026, 13.3 2026-05-26,
    // 13.4.1 2026-09-09, 13.5.0 2026-11-04, per NVIDIA's CUDA redist
    // manifests), marked.
    Row{"9.21", "12.0-12.9 13.0-13.2", "7.5", "cuda",
        "redistrib_9.21.0.json (2026-04-14); [SRC-spack-cudnn] 9.21.0.82-13"},
    Row{"9.22", "12.0-12.9 13.0-13.2", "7.5", "cuda min_cc", "redistrib_9.22.0.json (2026-05-08, 9.22.0.52)"},
    Row{"9.23", "12.0-12.9 13.0-13.3", "7.5", "cuda min_cc", "redistrib_9.23.0.json (2026-05-29, 9.23.0.39)"},
    Row{"9.24", "12.0-12.9 13.0-13.3", "7.5", "cuda min_cc", "redistrib_9.24.0.json (2026-07-02, 9.24.0.43)"},
    Row{"9.25", "12.0-12.9 13.0-13.3", "7.5", "cuda min_cc", "redistrib_9.25.0.json (2026-07-17, 9.25.0.15)"},
    Row{"9.26", "12.0-12.9 13.0-13.4", "7.5", "cuda min_cc", "redistrib_9.26.0.json (2026-09-09, 9.26.0.51)"},
    Row{"9.27", "12.0-12.9 13.0-13.4", "7.5", "cuda min_cc", "redistrib_9.27.0.json (2026-09-29, 9.27.0.42)"},
    // No 9.28.0 manifest was seen; 9.28.1 came two days after CUDA 13.5.0.
    Row{"9.28", "12.0-12.9 13.0-13.5", "7.5", "cuda min_cc", "redistrib_9.28.1.json (2026-11-06, 9.28.1.4)"},
};

constexpr std::array<std::string_view, 2> k_fields = {"cuda", "min_cc"};

// The table is compiled in, so a literal that does not parse is a bug in this
// file: fail loudly (the first test that reads the table fails) instead of
// dropping the entry.
[[noreturn]] void bad_row(std::string_view version, const std::string& what) {
  throw util::Failure(util::ExitCode::check_failed, "cuDNN table, row " + std::string(version) + ": " + what);
}

// major.minor exactly: a third component would make contains() ambiguous.
util::Version parse_major_minor(const Row& row, std::string_view text) {
  auto v = util::Version::parse(text);
  if (!v) bad_row(row.version, v.error());
  if (v->size() != 2) bad_row(row.version, "'" + std::string(text) + "' is not major.minor");
  return *v;
}

CudaSpan parse_span(const Row& row, std::string_view text) {
  const auto dash = text.find('-');
  CudaSpan span;
  span.first = parse_major_minor(row, text.substr(0, dash));
  span.last = dash == std::string_view::npos ? span.first : parse_major_minor(row, text.substr(dash + 1));
  // A span never crosses a major: cuDNN ships one build per CUDA major.
  if (span.last < span.first || span.first.major() != span.last.major())
    bad_row(row.version, "bad CUDA span '" + std::string(text) + "'");
  return span;
}

CudnnRelease build(const Row& row) {
  CudnnRelease r;
  r.version = parse_major_minor(row, row.version);
  for (std::string_view word : util::split_words(row.cuda)) {
    CudaSpan span = parse_span(row, word);
    if (!r.cuda.empty() && !(r.cuda.back().last < span.first)) bad_row(row.version, "CUDA spans out of order");
    r.cuda.push_back(std::move(span));
  }
  if (r.cuda.empty()) bad_row(row.version, "no CUDA span");
  auto cc = arch::ComputeCapability::parse(row.min_cc);
  if (!cc) bad_row(row.version, cc.error());
  r.min_cc = *cc;
  for (std::string_view field : util::split_words(row.unconfirmed)) {
    if (std::ranges::find(k_fields, field) == k_fields.end())
      bad_row(row.version, "unknown field '" + std::string(field) + "' in unconfirmed");
    r.unconfirmed.push_back(field);
  }
  r.source = row.source;
  return r;
}

std::vector<CudnnRelease> build_table() {
  std::vector<CudnnRelease> table;
  table.reserve(k_rows.size());
  for (const Row& row : k_rows) {
    CudnnRelease r = build(row);
    if (!table.empty() && !(table.back().version < r.version)) bad_row(row.version, "versions out of order");
    table.push_back(std::move(r));
  }
  return table;
}

}  // namespace

bool CudaSpan::contains(const util::Version& cuda) const {
  const util::Version mm = cuda.truncated(2);
  return first <= mm && mm <= last;
}

// The parameter is not called `cuda`: that would shadow the member.
bool CudnnRelease::supports_cuda(const util::Version& toolkit) const {
  return std::ranges::any_of(cuda, [&](const CudaSpan& s) { return s.contains(toolkit); });
}

bool CudnnRelease::is_unconfirmed(std::string_view field) const {
  return std::ranges::find(unconfirmed, field) != unconfirmed.end();
}

std::span<const CudnnRelease> cudnn_table() {
  static const std::vector<CudnnRelease> k_table = build_table();
  return k_table;
}

const CudnnRelease* find_cudnn(const util::Version& version) {
  const util::Version wanted = version.truncated(2);
  for (const CudnnRelease& r : cudnn_table())
    if (r.version == wanted) return &r;
  return nullptr;
}

}  // namespace orc::compat
