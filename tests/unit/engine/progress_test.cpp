#include "orchestrator/engine/progress.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace orc::engine {
namespace {

TEST(ProgressLine, BuildOutputAuxIdAndError) {
  auto out = parse_progress_line(R"({"stream":"Step 1/2 : FROM orc/base:1\n"})");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->stream, "Step 1/2 : FROM orc/base:1\n");
  auto aux = parse_progress_line(R"({"aux":{"ID":"sha256:abc"}})");
  ASSERT_TRUE(aux);
  EXPECT_TRUE(aux->is_aux_id);
  EXPECT_EQ(aux->id, "sha256:abc");
  // A failed RUN step: the status was 200, the failure is in the stream.
  auto failed = parse_progress_line(
      R"({"errorDetail":{"code":9,"message":"The command '/bin/sh -c exit 9' returned a non-zero code: 9"},)"
      R"("error":"The command '/bin/sh -c exit 9' returned a non-zero code: 9"})");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->error, "The command '/bin/sh -c exit 9' returned a non-zero code: 9");
  auto detail_only = parse_progress_line(R"({"errorDetail":{"message":"only detail"}})");
  ASSERT_TRUE(detail_only);
  EXPECT_EQ(detail_only->error, "only detail");
}

TEST(ProgressLine, ImportStatusAndBlankAndGarbage) {
  auto status = parse_progress_line("{\"status\":\"sha256:0123\"}\r");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->status, "sha256:0123");
  auto blank = parse_progress_line("");
  ASSERT_TRUE(blank);
  EXPECT_TRUE(blank->stream.empty() && blank->error.empty());
  EXPECT_FALSE(parse_progress_line("<html>502 Bad Gateway</html>"));
  EXPECT_FALSE(parse_progress_line("[1,2]"));
  // Wrong types are ignored rather than trusted.
  auto odd = parse_progress_line(R"({"stream":42,"error":{"x":1},"aux":"ID"})");
  ASSERT_TRUE(odd);
  EXPECT_TRUE(odd->stream.empty() && odd->error.empty() && !odd->is_aux_id);
}

TEST(ProgressParser, LinesSplitAcrossChunks) {
  const std::string text = "{\"stream\":\"a\"}\n{\"stream\":\"b\"}\n{\"aux\":{\"ID\":\"sha256:x\"}}";
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    std::vector<std::string> seen;
    ProgressParser parser([&](const ProgressEvent& e) { seen.push_back(e.is_aux_id ? e.id : e.stream); });
    parser.feed(text.substr(0, cut));
    parser.feed(text.substr(cut));
    parser.finish();
    EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "sha256:x"})) << cut;
    EXPECT_FALSE(parser.error());
  }
}

TEST(ProgressParser, KeepsTheFirstBadLineAndGoesOn) {
  std::vector<std::string> seen;
  ProgressParser parser([&](const ProgressEvent& e) { seen.push_back(e.stream); });
  parser.feed("not json\n{\"stream\":\"after\"}\nalso bad\n");
  parser.finish();
  ASSERT_TRUE(parser.error());
  EXPECT_NE(parser.error()->find("not json"), std::string::npos);
  EXPECT_EQ(seen, std::vector<std::string>{"after"});
}

TEST(ProgressParser, ALongLineFedInPiecesIsOneEvent) {
  // Found by fuzz_docker_api (a 128 KiB line in 1-13 byte reads took over
  // 10 s): each read searched the whole pending line for a newline again.
  const std::string text = "{\"stream\":\"" + std::string(1 << 20, 'x') + "\"}\n";
  std::vector<std::size_t> sizes;
  ProgressParser parser([&](const ProgressEvent& e) { sizes.push_back(e.stream.size()); });
  for (std::size_t at = 0; at < text.size(); at += 7) parser.feed(std::string_view(text).substr(at, 7));
  parser.finish();
  EXPECT_FALSE(parser.error());
  EXPECT_EQ(sizes, std::vector<std::size_t>{1u << 20});
}

TEST(ProgressParser, ALineWithoutEndIsAnErrorNotMemory) {
  std::vector<std::string> seen;
  ProgressParser parser([&](const ProgressEvent& e) { seen.push_back(e.stream); });
  const std::string mib(1 << 20, 'y');
  parser.feed("{\"stream\":\"");
  for (int i = 0; i < 17; ++i) parser.feed(mib);
  // The rest of the long line up to its newline is dropped; what follows is read.
  parser.feed("still the long line\"}\n{\"stream\":\"next\"}\n");
  parser.finish();
  ASSERT_TRUE(parser.error());
  EXPECT_EQ(*parser.error(), "a progress line longer than 16 MiB");
  EXPECT_EQ(seen, std::vector<std::string>{"next"});
}

}  // namespace
}  // namespace orc::engine
