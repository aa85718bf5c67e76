// The blob store: content addressing, atomic writes, crash leftovers, and
// two processes writing at once.
#include "orchestrator/cache/store.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "orchestrator/digest/sha256.hpp"
#include "test_support.hpp"

namespace orc::cache {
namespace {

std::string sha(std::string_view s) { return digest::sha256(std::as_bytes(std::span(s.data(), s.size()))).hex(); }

class BlobStore : public testing::TempDirTest {
 protected:
  Store open() {
    auto store = Store::open(m_dir / "store");
    EXPECT_TRUE(store) << store.error().message;
    return std::move(*store);
  }
};

TEST_F(BlobStore, PutFileHashesWhileCopyingAndNeverRewrites) {
  Store store = open();
  const auto file = write("a.bin", "hello artifact");
  const auto put = store.put_file(file);
  ASSERT_TRUE(put) << put.error().message;
  EXPECT_EQ(put->digest.hex(), sha("hello artifact"));
  EXPECT_EQ(put->size, 14u);
  EXPECT_TRUE(put->added);
  const auto path = store.blob_path(put->digest);
  EXPECT_EQ(path, m_dir / "store" / "blobs.v1" / "sha256" / put->digest.hex().substr(0, 2) / put->digest.hex());
  EXPECT_EQ(slurp(path), "hello artifact");
  struct stat before {};
  ::stat(path.c_str(), &before);
  const auto again = store.put_file(write("copy.bin", "hello artifact"));
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->added);
  const auto bytes = store.put_bytes("hello artifact");
  ASSERT_TRUE(bytes);
  EXPECT_FALSE(bytes->added);
  struct stat after {};
  ::stat(path.c_str(), &after);
  EXPECT_EQ(before.st_ino, after.st_ino);  // the same file, not a rewrite
  EXPECT_TRUE(std::filesystem::is_empty(store.tmp_dir()));
  EXPECT_EQ(store.read_blob(put->digest).value(), "hello artifact");
}

TEST_F(BlobStore, MissingAndCorruptBlobsAreDistinctErrors) {
  Store store = open();
  EXPECT_EQ(store.read_blob(std::string(64, '0')).error().kind, ErrorKind::not_found);
  EXPECT_EQ(store.read_blob("xyz").error().kind, ErrorKind::invalid);
  const auto put = store.put_bytes("manifest bytes").value();
  std::filesystem::permissions(store.blob_path(put.digest), std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::add);
  std::ofstream(store.blob_path(put.digest), std::ios::binary) << "manifest bytez";
  EXPECT_EQ(store.read_blob(put.digest).error().kind, ErrorKind::corrupt);
  EXPECT_EQ(store.put_file(m_dir / "absent").error().kind, ErrorKind::not_found);
}

// A writer killed mid-copy leaves a *.tmp in tmp/ and nothing a reader can
// take for a blob.
TEST_F(BlobStore, CrashLeftTemporariesAreNeverBlobs) {
  Store store = open();
  const std::string content(3 << 20, 'x');
  const auto file = write("big.bin", content);
  const pid_t child = ::fork();
  if (child == 0) {
    // Stand-in for a crash: the first half written to a temporary, then gone.
    const auto temp = temp_name(store.tmp_dir(), "blob");
    std::ofstream(temp, std::ios::binary) << content.substr(0, content.size() / 2);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_EQ(std::distance(std::filesystem::directory_iterator(store.tmp_dir()), {}), 1);
  EXPECT_FALSE(store.has_blob(sha(content)));
  EXPECT_EQ(store.read_blob(sha(content)).error().kind, ErrorKind::not_found);
  const auto put = store.put_file(file);
  ASSERT_TRUE(put);
  EXPECT_TRUE(put->added);
  EXPECT_EQ(slurp(store.blob_path(put->digest)), content);
}

TEST_F(BlobStore, WriteFileAtomicRefusesToReplaceWhenAsked) {
  const auto target = m_dir / "t" / "file";
  ASSERT_TRUE(write_file_atomic(target, "one", m_dir / "tmp"));
  ASSERT_TRUE(write_file_atomic(target, "two", m_dir / "tmp"));
  EXPECT_EQ(slurp(target), "two");
  const auto refused = write_file_atomic(target, "three", m_dir / "tmp", 0644, Replace::refuse);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::invalid);
  EXPECT_EQ(slurp(target), "two");
  EXPECT_TRUE(std::filesystem::is_empty(m_dir / "tmp"));
}

// Two processes put the same blobs and their own at once, 40 times each:
// every blob ends whole and correct, and no temporary is left.
TEST_F(BlobStore, ConcurrentWritersOfSameAndDifferentBlobs) {
  { Store init = open(); }
  const auto shared = write("shared.bin", std::string(1 << 20, 's'));
  std::vector<pid_t> children;
  for (int p = 0; p < 2; ++p) {
    const pid_t child = ::fork();
    if (child == 0) {
      auto store = Store::open(m_dir / "store");
      bool ok = store.has_value();
      for (int i = 0; ok && i < 40; ++i) {
        ok = store->put_file(shared).has_value() &&
             store->put_bytes("process " + std::to_string(p) + " blob " + std::to_string(i)).has_value() &&
             store->put_bytes("common blob " + std::to_string(i)).has_value();
      }
      ::_exit(ok ? 0 : 1);
    }
    children.push_back(child);
  }
  for (const pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  Store store = open();
  EXPECT_EQ(store.read_blob(sha(std::string(1 << 20, 's'))).value().size(), 1u << 20);
  for (int i = 0; i < 40; ++i) {
    for (const std::string& text : {"process 0 blob " + std::to_string(i), "process 1 blob " + std::to_string(i),
                                    "common blob " + std::to_string(i)})
      EXPECT_EQ(store.read_blob(sha(text)).value_or("<missing>"), text);
  }
  EXPECT_TRUE(std::filesystem::is_empty(store.tmp_dir()));
}

TEST_F(BlobStore, RecordRefusesSetsWhoseBlobsAreMissing) {
  Store store = open();
  const auto manifest = store.put_bytes("m").value();
  IndexEntry entry{.manifest = manifest.digest, .recipe = "r", .tier = "t"};
  entry.files.push_back({.path = "x", .sha256 = std::string(64, 'f'), .size = 1});
  const auto refused = store.record(entry);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::not_found);
  EXPECT_NE(refused.error().message.find(std::string(64, 'f')), std::string::npos);
  entry.files.clear();
  EXPECT_TRUE(store.record(entry));
}

}  // namespace
}  // namespace orc::cache
