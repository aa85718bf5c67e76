// Issue 28: what an image report prints of names the image and the user
// chose. A reference's credentials are in no renderer's output (they never
// reach the report: ImageSource::given is the reference without them), and
// no file name can add a cell, a row or a code span to the Markdown report.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "orchestrator/app/inspect/coverage.hpp"
#include "orchestrator/app/stamp/stamp.hpp"
#include "orchestrator/cli/render.hpp"
#include "orchestrator/util/escape.hpp"

namespace orc::cli {
namespace {

constexpr std::string_view k_password = "Pw-9f3kQz";

app::CoverageCell cell(inspect::Outcome outcome, std::string decided_by, std::string why) {
  return app::CoverageCell{.outcome = outcome, .runtime_kernels = false, .decided_by = decided_by, .why = why};
}

// One tier of two GPUs, a row per path.
app::ImageReport report(const std::string& reference, const std::vector<std::string>& paths) {
  app::ImageReport r;
  const auto source = app::parse_image_source(reference);
  r.image.source = source->given;
  r.image.identity = "sha256:" + std::string(64, 'c');
  app::CoverageTier tier{.name = "tier-x", .driver = util::Version(580, 65), .gpus = {}, .rows = {}};
  tier.gpus.push_back({.label = "H100 (9.0)", .cc = {9, 0}, .driver = {}, .tier = "tier-x", .name = "H100"});
  tier.gpus.push_back({.label = "A100 (8.0)", .cc = {8, 0}, .driver = {}, .tier = "tier-x", .name = "A100"});
  for (const auto& p : paths)
    tier.rows.push_back({.path = p,
                         .sass = {"sm_80"},
                         .ptx = {"compute_80"},
                         .cells = {cell(inspect::Outcome::jit, "compute_80", "only PTX | `x`"),
                                   cell(inspect::Outcome::native, "sm_80", "")}});
  r.tiers.push_back(std::move(tier));
  r.warnings.push_back("| a warning | that | looks like cells |");
  return r;
}

TEST(CoverageRender, NoRendererPrintsTheCredentialsOfTheReference) {
  const std::string reference = "oci+http://user:" + std::string(k_password) + "@127.0.0.1:5000/team/cuda:12.4";
  const app::ImageReport r = report(reference, {"/usr/lib/libk.so"});
  const std::string shown = "oci+http://127.0.0.1:5000/team/cuda:12.4";
  const std::string text = coverage_text(r, false), json = coverage_json(r), html = coverage_html(r),
                    markdown = coverage_markdown(r);
  for (const auto* out : {&text, &json, &html, &markdown}) EXPECT_EQ(out->find(k_password), std::string::npos) << *out;
  EXPECT_TRUE(text.starts_with(shown + "  sha256:")) << text;
  EXPECT_EQ(nlohmann::json::parse(json)["source"], shown);
  EXPECT_NE(html.find("<title>GPU coverage: " + shown + "</title>"), std::string::npos) << html;
  EXPECT_NE(html.find("GPU coverage of <code>" + shown + "</code></h1>"), std::string::npos) << html;
  EXPECT_TRUE(markdown.starts_with("### GPU coverage of `" + shown + "`\n")) << markdown;

  app::StampReport stamped{.coverage = r,
                           .values = {},
                           .stamped = "oci+http://127.0.0.1:5000/team/cuda:12.4-tier-x",
                           .identity = "sha256:" + std::string(64, 'd'),
                           .removed = {"NVIDIA_DISABLE_REQUIRE=1"},
                           .stamped_ok = true};
  const auto doc = nlohmann::json::parse(stamp_json(stamped));
  EXPECT_EQ(doc["coverage"]["source"], shown);
  EXPECT_EQ(doc["removed"], nlohmann::json::array({"NVIDIA_DISABLE_REQUIRE=1"}));
}

// The cells of a GFM table row as GitHub's parser (cmark-gfm) splits them:
// at each '|' that no backslash escapes, the outer ones dropped; "\|" then
// stands for '|'.
std::vector<std::string> cells_of(const std::string& row) {
  std::vector<std::string> cells{""};
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '\\' && i + 1 < row.size() && row[i + 1] == '|') {
      cells.back() += '|';
      ++i;
    } else if (row[i] == '|') {
      cells.emplace_back();
    } else {
      cells.back() += row[i];
    }
  }
  EXPECT_TRUE(cells.front().empty() && cells.back().empty()) << row;
  return std::vector<std::string>(cells.begin() + 1, cells.end() - 1);
}

// A code span's content: the fence of backticks off each end and one space
// of padding from each side when both have one (CommonMark 6.1).
std::string code_span(std::string cell) {
  while (cell.starts_with(' ')) cell.erase(0, 1);
  while (cell.ends_with(' ')) cell.pop_back();
  const auto fence = cell.find_first_not_of('`');
  EXPECT_NE(fence, 0u) << cell;
  EXPECT_TRUE(cell.ends_with(std::string(fence, '`'))) << cell;
  // The content holds no run of backticks as long as the fence.
  std::string body = cell.substr(fence, cell.size() - 2 * fence);
  EXPECT_EQ(body.find(std::string(fence, '`')), std::string::npos) << cell;
  if (body.size() >= 2 && body.front() == ' ' && body.back() == ' ') body = body.substr(1, body.size() - 2);
  return body;
}

TEST(CoverageRender, MarkdownNamesCannotRewriteTheTable) {
  const std::vector<std::string> paths = {
      "/usr/lib/a|b.so", "/usr/lib/`x`|``y``.so", "/usr/lib/nl\n| z | w |.so", "/usr/lib/back\\|.so", "`", " | "};
  const std::string md = coverage_markdown(report("docker://img:`|`", paths));
  std::vector<std::string> rows;
  std::size_t start = 0;
  for (std::size_t end; (end = md.find('\n', start)) != std::string::npos; start = end + 1)
    if (md.compare(start, 1, "|") == 0) rows.push_back(md.substr(start, end - start));
  // The header, the delimiter row, one row per path: three cells each.
  ASSERT_EQ(rows.size(), 2 + paths.size()) << md;
  for (const auto& row : rows) EXPECT_EQ(cells_of(row).size(), 3u) << row;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    EXPECT_EQ(code_span(cells_of(rows[2 + i])[0]), util::printable(paths[i])) << rows[2 + i];
    EXPECT_EQ(cells_of(rows[2 + i])[1], " 🟡 jit compute_80 ");
  }
  // Headings and list items: the warning's pipes and the why's backticks escaped.
  EXPECT_TRUE(md.starts_with("### GPU coverage of `` docker://img:`|` ``\n")) << md;
  EXPECT_NE(md.find("- \\| a warning \\| that \\| looks like cells \\|\n"), std::string::npos) << md;
  EXPECT_NE(md.find(": only PTX \\| \\`x\\`\n"), std::string::npos) << md;
}

}  // namespace
}  // namespace orc::cli
