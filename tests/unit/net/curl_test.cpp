// The header lines libcurl hands its callback, read as both transports read them.
#include "orchestrator/net/curl.hpp"

#include <gtest/gtest.h>

namespace orc::net {
namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;

TEST(ReadHeaderLine, AStatusLineStartsAResponseAndHeadersAreTrimmed) {
  int status = 0;
  Headers headers;
  EXPECT_TRUE(read_header_line("HTTP/1.1 100 Continue\r\n", status, headers));
  EXPECT_FALSE(read_header_line("X-Early: dropped\r\n", status, headers));
  EXPECT_EQ(status, 100);
  EXPECT_TRUE(read_header_line("HTTP/1.1 206 Partial Content\r\n", status, headers));
  EXPECT_FALSE(read_header_line("Content-Range:  bytes 5-9/10 \r\n", status, headers));
  EXPECT_FALSE(read_header_line("Docker-Content-Digest:sha256:ab\r\n", status, headers));
  EXPECT_FALSE(read_header_line("\r\n", status, headers));  // the end of the headers
  EXPECT_EQ(status, 206);
  EXPECT_EQ(headers, (Headers{{"Content-Range", "bytes 5-9/10"}, {"Docker-Content-Digest", "sha256:ab"}}));
}

TEST(ReadHeaderLine, AStatusLineWithoutACodeReadsAsZero) {
  int status = 7;
  Headers headers{{"a", "b"}};
  EXPECT_TRUE(read_header_line("HTTP/2\r\n", status, headers));
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(headers.empty());
}

TEST(HandlePool, AReleasedHandleIsTheNextOneAcquired) {
  HandlePool pool;
  CurlHandle first = pool.acquire();
  Curl* raw = first.get();
  ASSERT_NE(raw, nullptr);
  CurlHandle second = pool.acquire();  // none idle: a new one
  EXPECT_NE(second.get(), raw);
  pool.release(std::move(first));
  EXPECT_EQ(pool.acquire().get(), raw);
}

}  // namespace
}  // namespace orc::net
