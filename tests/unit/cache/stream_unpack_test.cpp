// Unpacking while the archive arrives: an ArchivePipe fed by a producer
// thread into unpack_stream, with the options a pull uses (hash, mirror,
// max_bytes, check); the temporary trees of killed unpacks; place_files; and
// pack()'s mode override.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <future>
#include <memory>
#include <random>
#include <span>
#include <thread>

#include "orchestrator/cache/chunks.hpp"
#include "orchestrator/cache/pack.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "raw_tar.hpp"
#include "test_support.hpp"

namespace orc::cache {
namespace {

namespace fs = std::filesystem;
using testing::RawEntry;
using testing::write_tar;
using namespace std::chrono_literals;

// Odd-sized pushes, so no push lines up with the pipe's 4 MiB blocks.
constexpr std::size_t k_chunk = 7 * 1024 + 3;

std::span<const std::byte> as_bytes(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

std::string sha256_of(std::string_view s) { return digest::sha256(as_bytes(s)).hex(); }

// Bytes zstd cannot shrink, so the pack is as large as its files.
std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; i += 4) {
    const std::uint32_t v = gen();
    for (std::size_t j = 0; j < 4 && i + j < n; ++j) out[i + j] = static_cast<char>(v >> (8 * j));
  }
  return out;
}

unsigned mode_of(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

// A dead pid: a child that exited at once, reaped.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

// A download on a thread of its own: pushes `bytes` in k_chunk pieces into
// the pipe, then ends as told. Its state is shared with the thread, so a
// thread that hangs (a bug) can be left behind without a dangling pipe.
class Download {
 public:
  enum class End {
    finish,  // finish() after the bytes
    fail,    // fail("network gone") after `fail_after` bytes
    endless  // zeros after the bytes, until a push() returns false
  };

  explicit Download(std::string bytes, End end = End::finish, std::size_t fail_after = 0)
      : m_state(std::make_shared<State>()) {
    auto done = m_state->done.get_future();
    m_done = std::move(done);
    m_thread = std::thread([state = m_state, bytes = std::move(bytes), end, fail_after] {
      const std::size_t stop = end == End::fail ? std::min(fail_after, bytes.size()) : bytes.size();
      bool open = true;
      for (std::size_t at = 0; open && at < stop; at += k_chunk) {
        const std::size_t n = std::min(k_chunk, stop - at);
        open = state->pipe.push(as_bytes(std::string_view(bytes).substr(at, n)));
        state->pushed += n;
      }
      if (open && end == End::endless) {
        const std::string zeros(k_chunk, '\0');
        // 1 GiB is far more than the pipe ever holds unread: a push that
        // never returns false blocks long before this.
        while (open && state->pushed < (std::uint64_t{1} << 30)) {
          open = state->pipe.push(as_bytes(zeros));
          state->pushed += zeros.size();
        }
      }
      state->refused = !open;
      if (open) {
        if (end == End::fail)
          state->pipe.fail(Error{ErrorKind::io, "network gone"});
        else
          state->pipe.finish();
      }
      state->done.set_value();
    });
  }
  Download(const Download&) = delete;
  Download& operator=(const Download&) = delete;
  ~Download() {
    m_state->pipe.close();
    join();
  }

  ArchivePipe& pipe() { return m_state->pipe; }

  // Waits for the thread; false (and the thread left running) when it does
  // not end within a few seconds.
  bool join() {
    if (!m_thread.joinable()) return true;
    if (m_done.wait_for(5s) != std::future_status::ready) {
      m_thread.detach();
      return false;
    }
    m_thread.join();
    return true;
  }
  bool refused() const { return m_state->refused; }  // a push() returned false
  std::uint64_t pushed() const { return m_state->pushed; }

 private:
  struct State {
    ArchivePipe pipe;
    std::atomic<std::uint64_t> pushed{0};
    std::atomic<bool> refused{false};
    std::promise<void> done;
  };
  std::shared_ptr<State> m_state;
  std::future<void> m_done;
  std::thread m_thread;
};

class StreamUnpack : public testing::TempDirTest {
 protected:
  // bin/tool (0755), lib/libbig.so (9 MiB that do not compress: the pack
  // spans three of the pipe's blocks), share/note (0644), packed into
  // p.tar.zst.
  fs::path make_pack() {
    // Not a multiple of 4 KiB: the store copy ends with a buffered write after O_DIRECT ones.
    m_big = random_bytes((9 << 20) + 777, 7);
    const auto tool = write("src/tool", "#!/bin/sh\necho tool\n");
    fs::permissions(tool, static_cast<fs::perms>(0755));
    const auto big = write("src/libbig.so", m_big);
    fs::permissions(big, static_cast<fs::perms>(0644));
    const auto note = write("src/note", "a note\n");
    fs::permissions(note, static_cast<fs::perms>(0644));
    const auto out = m_dir / "p.tar.zst";
    const auto packed = pack({{"bin/tool", tool}, {"lib/libbig.so", big}, {"share/note", note}}, out);
    EXPECT_TRUE(packed) << packed.error().message;
    return out;
  }
  std::uint64_t content_bytes() const { return m_big.size() + std::string("#!/bin/sh\necho tool\n").size() + 7; }

  // Every name in m_dir that is an unpack's temporary tree.
  std::vector<std::string> unpack_trees() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(m_dir))
      if (e.path().filename().string().find(".unpack-") != std::string::npos) out.push_back(e.path().filename());
    return out;
  }

  // Checks the three files of make_pack() under `dir`.
  void expect_unpacked(const fs::path& dir) {
    EXPECT_EQ(slurp(dir / "bin/tool"), "#!/bin/sh\necho tool\n");
    EXPECT_EQ(mode_of(dir / "bin/tool"), 0755u);
    EXPECT_TRUE(slurp(dir / "lib/libbig.so") == m_big) << "lib/libbig.so differs";
    EXPECT_EQ(mode_of(dir / "lib/libbig.so"), 0644u);
    EXPECT_EQ(slurp(dir / "share/note"), "a note\n");
    EXPECT_EQ(mode_of(dir / "share/note"), 0644u);
  }

  // A refused or failed unpack into out/ (and mirror/) left neither tree,
  // nor a temporary one.
  void expect_nothing_left() const {
    EXPECT_FALSE(fs::exists(m_dir / "out"));
    EXPECT_FALSE(fs::exists(m_dir / "mirror"));
    EXPECT_TRUE(unpack_trees().empty()) << unpack_trees().front();
  }

  // lib/libbig.so's signed entry with its three chunks, hashed from the
  // file make_pack() packed.
  ManifestFile signed_big() {
    const auto chunks = hash_chunks(m_dir / "src/libbig.so", m_big.size());
    EXPECT_TRUE(chunks) << chunks.error().message;
    EXPECT_EQ(chunks.value_or(FileChunks{}).sha256.size(), 3u);
    return {.path = "lib/libbig.so",
            .sha256 = sha256_of(m_big),
            .size = m_big.size(),
            .chunks = chunks.value_or(FileChunks{})};
  }
  // UnpackOptions::signed_file that knows only `f`.
  static auto only(const ManifestFile& f) {
    return [&f](std::string_view name) { return name == f.path ? &f : nullptr; };
  }

  std::string m_big;
};

TEST_F(StreamUnpack, StreamedPackUnpacksLikeTheFileWithHashesAndModes) {
  const auto archive = make_pack();
  const auto from_file = unpack(archive, m_dir / "file", {.sync = false, .hash = true});
  ASSERT_TRUE(from_file) << from_file.error().message;

  Download download(slurp(archive));
  const auto streamed = unpack_stream(download.pipe(), m_dir / "stream", {.hash = true});
  ASSERT_TRUE(streamed) << streamed.error().message;
  EXPECT_TRUE(download.pipe().drain());  // the producer finished: the stream ended well
  download.pipe().close();
  ASSERT_TRUE(download.join());
  EXPECT_FALSE(download.refused());

  ASSERT_EQ(streamed->size(), 3u);
  ASSERT_EQ(from_file->size(), 3u);
  const std::vector<std::pair<std::string, std::string>> expected{
      {"bin/tool", "#!/bin/sh\necho tool\n"}, {"lib/libbig.so", m_big}, {"share/note", "a note\n"}};
  const std::vector<unsigned> modes{0755, 0644, 0644};
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(expected[i].first);
    const UnpackedFile& s = (*streamed)[i];
    const UnpackedFile& f = (*from_file)[i];
    EXPECT_EQ(s.name, expected[i].first);
    EXPECT_EQ(s.size, expected[i].second.size());
    EXPECT_EQ(s.sha256, sha256_of(expected[i].second));
    EXPECT_EQ(s.mode, modes[i]);
    EXPECT_EQ(f.name, s.name);
    EXPECT_EQ(f.size, s.size);
    EXPECT_EQ(f.sha256, s.sha256);
    EXPECT_EQ(f.mode, s.mode);
  }
  expect_unpacked(m_dir / "stream");
  expect_unpacked(m_dir / "file");
  EXPECT_EQ(mode_of(m_dir / "stream"), 0755u);
  EXPECT_TRUE(unpack_trees().empty()) << unpack_trees().front();
}

TEST_F(StreamUnpack, WithoutHashTheFilesCarryNoDigest) {
  const auto archive = make_pack();
  Download download(slurp(archive));
  const auto streamed = unpack_stream(download.pipe(), m_dir / "out", {.sync = false});
  ASSERT_TRUE(streamed) << streamed.error().message;
  download.pipe().close();
  ASSERT_TRUE(download.join());
  ASSERT_EQ(streamed->size(), 3u);
  for (const auto& f : *streamed) EXPECT_EQ(f.sha256, "") << f.name;
  EXPECT_EQ((*streamed)[1].size, m_big.size());
}

TEST_F(StreamUnpack, MirrorGetsTheSameFilesAndModes) {
  const auto archive = make_pack();
  fs::create_directories(m_dir / "mirror");  // an empty directory is accepted too
  Download download(slurp(archive));
  const auto streamed =
      unpack_stream(download.pipe(), m_dir / "out", {.sync = false, .hash = true, .mirror = m_dir / "mirror"});
  ASSERT_TRUE(streamed) << streamed.error().message;
  download.pipe().close();
  ASSERT_TRUE(download.join());
  expect_unpacked(m_dir / "out");
  expect_unpacked(m_dir / "mirror");
  // Separate files, not links to one inode: changing one leaves the other.
  write("out/share/note", "changed");
  EXPECT_EQ(slurp(m_dir / "mirror/share/note"), "a note\n");
  EXPECT_TRUE(unpack_trees().empty()) << unpack_trees().front();
}

TEST_F(StreamUnpack, MaxBytesBelowTheContentRefusesAndLeavesNothing) {
  const auto archive = make_pack();
  Download download(slurp(archive));
  const auto streamed = unpack_stream(download.pipe(), m_dir / "out",
                                      {.sync = false, .mirror = m_dir / "mirror", .max_bytes = content_bytes() - 1});
  download.pipe().close();
  ASSERT_TRUE(download.join());
  ASSERT_FALSE(streamed);
  EXPECT_EQ(streamed.error().kind, ErrorKind::invalid);
  EXPECT_NE(streamed.error().message.find(std::to_string(content_bytes() - 1) + " bytes"), std::string::npos)
      << streamed.error().message;
  expect_nothing_left();
}

TEST_F(StreamUnpack, MaxBytesEqualToTheContentIsAccepted) {
  const auto archive = make_pack();
  const auto files = unpack(archive, m_dir / "out", {.sync = false, .max_bytes = content_bytes()});
  ASSERT_TRUE(files) << files.error().message;
  expect_unpacked(m_dir / "out");
  // A bomb stops early: the first file alone is over this cap.
  const auto small = unpack(archive, m_dir / "small", {.sync = false, .max_bytes = 10});
  ASSERT_FALSE(small);
  EXPECT_EQ(small.error().kind, ErrorKind::invalid);
  EXPECT_NE(small.error().message.find("'bin/tool'"), std::string::npos) << small.error().message;
  EXPECT_FALSE(fs::exists(m_dir / "small"));
}

TEST_F(StreamUnpack, CheckErrorLeavesNeitherDirNorMirror) {
  const auto archive = make_pack();
  std::vector<UnpackedFile> seen;
  bool dir_visible_during_check = true;
  Download download(slurp(archive));
  const auto streamed =
      unpack_stream(download.pipe(), m_dir / "out",
                    {.sync = false,
                     .hash = true,
                     .mirror = m_dir / "mirror",
                     .check = [&](const std::vector<UnpackedFile>& files) -> std::expected<void, Error> {
                       seen = files;
                       dir_visible_during_check = fs::exists(m_dir / "out") || fs::exists(m_dir / "mirror");
                       return std::unexpected(Error{ErrorKind::corrupt, "lib/libbig.so does not match the manifest"});
                     }});
  download.pipe().close();
  ASSERT_TRUE(download.join());
  ASSERT_FALSE(streamed);
  EXPECT_EQ(streamed.error().kind, ErrorKind::corrupt);
  EXPECT_EQ(streamed.error().message, "lib/libbig.so does not match the manifest");
  // The check saw every file, hashed, before anything was in place.
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[1].name, "lib/libbig.so");
  EXPECT_EQ(seen[1].sha256, sha256_of(m_big));
  EXPECT_FALSE(dir_visible_during_check);
  expect_nothing_left();
}

// lib/libbig.so is three chunks: with its signed entry it is checked chunk
// by chunk, and its digest is then the signed one.
TEST_F(StreamUnpack, SignedChunksAreCheckedInsteadOfTheWholeFileDigest) {
  const auto archive = make_pack();
  const ManifestFile big = signed_big();
  Download download(slurp(archive));
  const auto streamed = unpack_stream(download.pipe(), m_dir / "out",
                                      {.hash = true, .mirror = m_dir / "mirror", .signed_file = only(big)});
  download.pipe().close();
  ASSERT_TRUE(download.join());
  ASSERT_TRUE(streamed) << streamed.error().message;
  ASSERT_EQ(streamed->size(), 3u);
  EXPECT_TRUE((*streamed)[1].chunked);
  EXPECT_EQ((*streamed)[1].sha256, sha256_of(m_big));
  EXPECT_FALSE((*streamed)[0].chunked);  // small files are hashed whole, as before
  EXPECT_EQ((*streamed)[0].sha256, sha256_of("#!/bin/sh\necho tool\n"));
  expect_unpacked(m_dir / "out");
  expect_unpacked(m_dir / "mirror");
}

TEST_F(StreamUnpack, AChunkThatDoesNotMatchRefusesTheArchiveAndLeavesNothing) {
  const auto archive = make_pack();
  ManifestFile big = signed_big();
  big.chunks.sha256.at(1) = std::string(64, '0');  // what the signer said differs from the bytes
  bool checked = false;
  Download download(slurp(archive));
  const auto streamed = unpack_stream(download.pipe(), m_dir / "out",
                                      {.hash = true,
                                       .mirror = m_dir / "mirror",
                                       .signed_file = only(big),
                                       .check = [&](const std::vector<UnpackedFile>&) -> std::expected<void, Error> {
                                         checked = true;
                                         return {};
                                       }});
  download.pipe().close();
  ASSERT_TRUE(download.join());
  ASSERT_FALSE(streamed);
  EXPECT_EQ(streamed.error().kind, ErrorKind::invalid);
  EXPECT_NE(streamed.error().message.find("'lib/libbig.so': digest mismatch: chunk 1 (bytes 4194304-8388607)"),
            std::string::npos)
      << streamed.error().message;
  EXPECT_FALSE(checked);
  expect_nothing_left();
}

// A write that fails while chunks are checked is a write error (exit 3
// upstream), not a refusal of the registry's bytes: the chunks that never
// arrived are not a mismatch.
TEST_F(StreamUnpack, AWriteFailureInAChunkedFileIsAnIoErrorNotARefusal) {
  const auto archive = make_pack();
  const ManifestFile big = signed_big();
  // Files may grow to 6 MiB: lib/libbig.so (9 MiB) fails part way with EFBIG.
  struct Limit {
    rlimit old{};
    void (*old_handler)(int) = SIG_DFL;
    Limit() {
      ::getrlimit(RLIMIT_FSIZE, &old);
      old_handler = ::signal(SIGXFSZ, SIG_IGN);
      const rlimit small{6 << 20, old.rlim_max};
      ::setrlimit(RLIMIT_FSIZE, &small);
    }
    ~Limit() {
      ::setrlimit(RLIMIT_FSIZE, &old);
      ::signal(SIGXFSZ, old_handler);
    }
  };
  std::expected<std::vector<UnpackedFile>, Error> streamed;
  {
    Limit limit;
    Download download(slurp(archive));
    streamed = unpack_stream(download.pipe(), m_dir / "out", {.hash = true, .signed_file = only(big)});
    download.pipe().close();
    ASSERT_TRUE(download.join());
  }
  ASSERT_FALSE(streamed);
  EXPECT_EQ(streamed.error().kind, ErrorKind::io) << streamed.error().message;
  EXPECT_NE(streamed.error().message.find("File too large"), std::string::npos) << streamed.error().message;
  expect_nothing_left();
}

TEST_F(StreamUnpack, StreamFailureIsReturnedAsItCameAndLeavesNothing) {
  const auto archive = make_pack();
  const std::string bytes = slurp(archive);
  ASSERT_GT(bytes.size(), std::size_t{6} << 20);
  // Past the first 4 MiB block, so the reader is inside lib/libbig.so when
  // the stream fails.
  Download download(bytes, Download::End::fail, 6 << 20);
  const auto streamed = unpack_stream(download.pipe(), m_dir / "out", {.sync = false, .mirror = m_dir / "mirror"});
  EXPECT_FALSE(download.pipe().drain());  // the stream ended with the failure
  download.pipe().close();
  ASSERT_TRUE(download.join());
  ASSERT_FALSE(streamed);
  EXPECT_EQ(streamed.error().kind, ErrorKind::io);
  EXPECT_EQ(streamed.error().message, "network gone");
  expect_nothing_left();
}

TEST_F(StreamUnpack, StreamFailureBeforeAnyBlockIsReturnedAsItCame) {
  const auto archive = make_pack();
  Download download(slurp(archive), Download::End::fail, 100);
  const auto streamed = unpack_stream(download.pipe(), m_dir / "out", {.sync = false});
  download.pipe().close();
  ASSERT_TRUE(download.join());
  ASSERT_FALSE(streamed);
  EXPECT_EQ(streamed.error().kind, ErrorKind::io);
  EXPECT_EQ(streamed.error().message, "network gone");
  expect_nothing_left();
}

TEST_F(StreamUnpack, ATruncatedStreamThatEndsCleanlyIsDamaged) {
  const auto archive = make_pack();
  const std::string bytes = slurp(archive);
  Download download(bytes.substr(0, bytes.size() / 2));
  const auto streamed = unpack_stream(download.pipe(), m_dir / "out", {.sync = false});
  download.pipe().close();
  ASSERT_TRUE(download.join());
  ASSERT_FALSE(streamed);
  EXPECT_EQ(streamed.error().kind, ErrorKind::invalid);
  expect_nothing_left();
}

TEST_F(StreamUnpack, AdmitSeesEveryFileBeforeAnythingIsMadeForIt) {
  const auto archive = make_pack();
  std::vector<std::pair<std::string, std::uint64_t>> seen;
  const auto admit_all = [&](std::string_view name, std::uint64_t size,
                             unsigned mode) -> std::expected<unsigned, Error> {
    seen.emplace_back(name, size);
    return mode;
  };
  const auto all = unpack(archive, m_dir / "all", {.sync = false, .admit = admit_all});
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, std::uint64_t>>{
                      {"bin/tool", 20}, {"lib/libbig.so", m_big.size()}, {"share/note", 7}}));

  // A name it does not know: refused at its header, so no byte of it, nor of
  // anything after it, is written; neither tree appears.
  const auto known_only = [](std::string_view name, std::uint64_t, unsigned mode) -> std::expected<unsigned, Error> {
    if (name == "bin/tool") return mode;
    return std::unexpected(invalid_error("'" + std::string(name) + "' is not in the manifest"));
  };
  const auto refused = unpack(archive, m_dir / "out", {.sync = false, .mirror = m_dir / "mirror", .admit = known_only});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::invalid);
  EXPECT_NE(refused.error().message.find("'lib/libbig.so' is not in the manifest"), std::string::npos)
      << refused.error().message;
  expect_nothing_left();
}

TEST_F(StreamUnpack, WithAdmitLinksAreRefusedAndDirectoryEntriesNotMade) {
  const auto admit = [](std::string_view, std::uint64_t, unsigned mode) -> std::expected<unsigned, Error> {
    return mode;
  };
  write_tar(m_dir / "dirs.tar.zst", {{.name = "empty", .type = AE_IFDIR}, {.name = "d/a", .data = "a"}});
  const auto dirs = unpack(m_dir / "dirs.tar.zst", m_dir / "dirs", {.sync = false, .admit = admit});
  ASSERT_TRUE(dirs) << dirs.error().message;
  EXPECT_FALSE(fs::exists(m_dir / "dirs/empty")) << "a directory entry the files do not need";
  EXPECT_EQ(slurp(m_dir / "dirs/d/a"), "a");
  EXPECT_EQ(mode_of(m_dir / "dirs/d"), 0755u);

  write_tar(m_dir / "link.tar.zst", {{.name = "a", .data = "a"}, {.name = "b", .type = AE_IFLNK, .link = "a"}});
  const auto link = unpack(m_dir / "link.tar.zst", m_dir / "link", {.sync = false, .admit = admit});
  ASSERT_FALSE(link);
  EXPECT_EQ(link.error().kind, ErrorKind::invalid);
  EXPECT_FALSE(fs::exists(m_dir / "link"));
  write_tar(m_dir / "hard.tar.zst", {{.name = "a", .data = "a"}, {.name = "h", .hardlink = "a"}});
  EXPECT_FALSE(unpack(m_dir / "hard.tar.zst", m_dir / "hard", {.sync = false, .admit = admit}));
  EXPECT_FALSE(fs::exists(m_dir / "hard"));
}

TEST_F(StreamUnpack, ADirectoryEntryNeverMakesAWorldWritableDirectory) {
  // write_tar gives every entry 0644; a directory of 0777 is made by hand.
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_add_filter_zstd(a);
  ASSERT_EQ(archive_write_open_filename(a, (m_dir / "open.tar.zst").c_str()), ARCHIVE_OK);
  archive_entry* e = archive_entry_new();
  archive_entry_set_pathname(e, "d");
  archive_entry_set_filetype(e, AE_IFDIR);
  archive_entry_set_perm(e, 0777);
  archive_write_header(a, e);
  archive_entry_free(e);
  archive_write_close(a);
  archive_write_free(a);
  const auto out = unpack(m_dir / "open.tar.zst", m_dir / "out", {.sync = false});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(mode_of(m_dir / "out/d"), 0755u);
}

TEST_F(StreamUnpack, ReaderRefusingEarlyStopsTheProducerThroughClose) {
  // A hostile first entry, then 40 MiB: more than the pipe holds unread
  // (four queued 4 MiB blocks and the one being filled), so the producer is
  // still pushing when the reader gives up, and only close() can stop it.
  write_tar(m_dir / "hostile.tar.zst",
            {{.name = "/abs/x", .data = "evil"}, {.name = "big", .data = random_bytes(40 << 20, 11)}});
  const std::string bytes = slurp(m_dir / "hostile.tar.zst");
  ASSERT_GT(bytes.size(), std::size_t{40} << 20);
  Download download(bytes);
  const auto streamed = unpack_stream(download.pipe(), m_dir / "out", {.sync = false, .mirror = m_dir / "mirror"});
  ASSERT_FALSE(streamed);
  EXPECT_EQ(streamed.error().kind, ErrorKind::invalid);
  EXPECT_NE(streamed.error().message.find("'/abs/x'"), std::string::npos) << streamed.error().message;
  download.pipe().close();
  ASSERT_TRUE(download.join()) << "the producer still blocks in push() after close()";
  EXPECT_TRUE(download.refused());
  EXPECT_LT(download.pushed(), bytes.size());
  EXPECT_FALSE(fs::exists(m_dir / "out"));
  EXPECT_FALSE(fs::exists(m_dir / "mirror"));
  EXPECT_FALSE(fs::exists("/abs/x"));
  EXPECT_TRUE(unpack_trees().empty()) << unpack_trees().front();
}

TEST_F(StreamUnpack, CloseStopsAProducerThatWouldNeverEnd) {
  // A plain tar (the reader takes any filter) whose refused first entry is
  // followed by zeros for ever: the producer ends only through close().
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  ASSERT_EQ(archive_write_open_filename(a, (m_dir / "hostile.tar").c_str()), ARCHIVE_OK);
  archive_entry* e = archive_entry_new();
  archive_entry_set_pathname(e, "../x");
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_perm(e, 0644);
  archive_entry_set_size(e, 4);
  archive_write_header(a, e);
  archive_write_data(a, "evil", 4);
  archive_entry_free(e);
  archive_write_close(a);
  archive_write_free(a);
  Download download(slurp(m_dir / "hostile.tar"), Download::End::endless);
  const auto streamed = unpack_stream(download.pipe(), m_dir / "out", {.sync = false});
  ASSERT_FALSE(streamed);
  EXPECT_EQ(streamed.error().kind, ErrorKind::invalid);
  EXPECT_NE(streamed.error().message.find("'../x'"), std::string::npos) << streamed.error().message;
  download.pipe().close();
  ASSERT_TRUE(download.join()) << "the producer still blocks in push() after close()";
  EXPECT_TRUE(download.refused());
  EXPECT_LT(download.pushed(), std::uint64_t{1} << 30);
  EXPECT_FALSE(fs::exists(m_dir / "out"));
  EXPECT_FALSE(fs::exists(m_dir / "x"));
  EXPECT_TRUE(unpack_trees().empty()) << unpack_trees().front();
}

TEST(ArchivePipeTest, PushAfterCloseReturnsFalseEvenForAFewBytes) {
  ArchivePipe pipe;
  EXPECT_TRUE(pipe.push(as_bytes("abc")));
  pipe.close();
  EXPECT_FALSE(pipe.push(as_bytes("def")));
}

TEST(ArchivePipeTest, ReaderGetsTheBytesInOrderThenTheEnd) {
  ArchivePipe pipe;
  const std::string bytes = random_bytes((4 << 20) + 12345, 3);  // one full block and a part
  std::thread producer([&] {
    for (std::size_t at = 0; at < bytes.size(); at += k_chunk)
      pipe.push(as_bytes(std::string_view(bytes).substr(at, k_chunk)));
    pipe.finish();
  });
  std::string got;
  for (;;) {
    const auto next = pipe.next();
    EXPECT_TRUE(next) << next.error().message;
    if (!next || next->empty()) break;
    got.append(reinterpret_cast<const char*>(next->data()), next->size());
  }
  pipe.close();
  producer.join();
  EXPECT_EQ(got.size(), bytes.size());
  EXPECT_TRUE(got == bytes);
}

TEST_F(StreamUnpack, RemoveAbandonedUnpacksRemovesOnlyTreesOfDeadProcesses) {
  const std::string dead = std::to_string(dead_pid());
  const std::string live = std::to_string(::getpid());
  write(".x.unpack-" + dead + "-ABCDEF/lib/partial.so", "half");
  fs::create_directories(m_dir / (".x.unpack-" + live + "-ABCDEF"));
  fs::create_directories(m_dir / "x");
  fs::create_directories(m_dir / ("x.unpack-" + dead + "-ABCDEF"));  // no leading dot
  fs::create_directories(m_dir / (".x.unpack-" + dead + "-ABC"));    // not mkdtemp's six
  fs::create_directories(m_dir / ".x.unpack-notapid-ABCDEF");
  EXPECT_EQ(remove_abandoned_unpacks(m_dir), 1u);
  EXPECT_FALSE(fs::exists(m_dir / (".x.unpack-" + dead + "-ABCDEF")));
  EXPECT_TRUE(fs::exists(m_dir / (".x.unpack-" + live + "-ABCDEF")));
  EXPECT_TRUE(fs::exists(m_dir / "x"));
  EXPECT_TRUE(fs::exists(m_dir / ("x.unpack-" + dead + "-ABCDEF")));
  EXPECT_TRUE(fs::exists(m_dir / (".x.unpack-" + dead + "-ABC")));
  EXPECT_TRUE(fs::exists(m_dir / ".x.unpack-notapid-ABCDEF"));
  EXPECT_EQ(remove_abandoned_unpacks(m_dir), 0u);
}

TEST_F(StreamUnpack, UnpackRemovesAStaleSiblingOfItsOwnTarget) {
  const auto f = write("f", "x");
  ASSERT_TRUE(pack({{"f", f}}, m_dir / "p.tar.zst"));
  const std::string dead = std::to_string(dead_pid());
  const std::string live = std::to_string(::getpid());
  write(".out.unpack-" + dead + "-ABCDEF/f", "left by a killed unpack");
  fs::create_directories(m_dir / (".out.unpack-" + live + "-ABCDEF"));    // ours: maybe in use
  fs::create_directories(m_dir / (".other.unpack-" + dead + "-ABCDEF"));  // another target's
  const auto files = unpack(m_dir / "p.tar.zst", m_dir / "out", {.sync = false});
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(slurp(m_dir / "out/f"), "x");
  EXPECT_FALSE(fs::exists(m_dir / (".out.unpack-" + dead + "-ABCDEF")));
  EXPECT_TRUE(fs::exists(m_dir / (".out.unpack-" + live + "-ABCDEF")));
  EXPECT_TRUE(fs::exists(m_dir / (".other.unpack-" + dead + "-ABCDEF")));
}

TEST_F(StreamUnpack, StreamedUnpackAlsoRemovesAStaleSiblingOfItsTarget) {
  const auto f = write("f", "x");
  ASSERT_TRUE(pack({{"f", f}}, m_dir / "p.tar.zst"));
  const std::string dead = std::to_string(dead_pid());
  write(".out.unpack-" + dead + "-ABCDEF/f", "left by a killed unpack");
  Download download(slurp(m_dir / "p.tar.zst"));
  const auto files = unpack_stream(download.pipe(), m_dir / "out", {.sync = false});
  download.pipe().close();
  ASSERT_TRUE(download.join());
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_FALSE(fs::exists(m_dir / (".out.unpack-" + dead + "-ABCDEF")));
  EXPECT_TRUE(unpack_trees().empty()) << unpack_trees().front();
}

TEST_F(StreamUnpack, PlaceFilesHashesAndKeepsModes) {
  const auto tool = write("store/aa", "#!/bin/sh\n");
  const auto lib = write("store/bb", "ELF library");
  fs::permissions(tool, static_cast<fs::perms>(0644));  // the store's blobs carry no modes
  const auto placed = place_files({{.name = "bin/tool", .source = tool, .mode = 0755},
                                   {.name = "lib/libx.so", .source = lib, .mode = 0644},
                                   {.name = "lib/private.so", .source = lib, .mode = 0600}},
                                  m_dir / "out");
  ASSERT_TRUE(placed) << placed.error().message;
  ASSERT_EQ(placed->size(), 3u);
  EXPECT_EQ((*placed)[0].name, "bin/tool");
  EXPECT_EQ((*placed)[0].sha256, sha256_of("#!/bin/sh\n"));
  EXPECT_EQ((*placed)[0].size, 10u);
  EXPECT_EQ((*placed)[0].mode, 0755u);
  EXPECT_EQ((*placed)[1].sha256, sha256_of("ELF library"));
  EXPECT_EQ((*placed)[1].mode, 0644u);
  EXPECT_EQ((*placed)[2].sha256, sha256_of("ELF library"));
  EXPECT_EQ((*placed)[2].mode, 0600u);
  EXPECT_EQ(slurp(m_dir / "out/bin/tool"), "#!/bin/sh\n");
  EXPECT_EQ(mode_of(m_dir / "out/bin/tool"), 0755u);
  EXPECT_EQ(slurp(m_dir / "out/lib/libx.so"), "ELF library");
  EXPECT_EQ(mode_of(m_dir / "out/lib/libx.so"), 0644u);
  EXPECT_EQ(mode_of(m_dir / "out/lib/private.so"), 0600u);
  // Copies: the store's blob is not linked into the output.
  EXPECT_EQ(fs::hard_link_count(lib), 1u);
  EXPECT_EQ(mode_of(tool), 0644u);
  EXPECT_TRUE(unpack_trees().empty()) << unpack_trees().front();
}

TEST_F(StreamUnpack, PlaceFilesCheckErrorLeavesNothing) {
  const auto lib = write("store/bb", "ELF library");
  std::vector<UnpackedFile> seen;
  const auto placed = place_files({{.name = "lib/libx.so", .source = lib, .mode = 0755}}, m_dir / "out",
                                  {.check = [&](const std::vector<UnpackedFile>& files) -> std::expected<void, Error> {
                                    seen = files;
                                    return std::unexpected(Error{ErrorKind::corrupt, "lib/libx.so: wrong digest"});
                                  }});
  ASSERT_FALSE(placed);
  EXPECT_EQ(placed.error().kind, ErrorKind::corrupt);
  EXPECT_EQ(placed.error().message, "lib/libx.so: wrong digest");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].sha256, sha256_of("ELF library"));
  EXPECT_EQ(seen[0].mode, 0755u);
  expect_nothing_left();
}

TEST_F(StreamUnpack, PlaceFilesRefusesAnEscapingNameAndLeavesNothing) {
  const auto lib = write("store/bb", "ELF library");
  const auto placed =
      place_files({{.name = "ok", .source = lib}, {.name = "../escape", .source = lib}}, m_dir / "work/out");
  ASSERT_FALSE(placed);
  EXPECT_EQ(placed.error().kind, ErrorKind::invalid);
  EXPECT_FALSE(fs::exists(m_dir / "work/out"));
  EXPECT_FALSE(fs::exists(m_dir / "work/escape"));
  EXPECT_TRUE(fs::is_empty(m_dir / "work"));
}

TEST_F(StreamUnpack, PackModeOverridesTheSourcePermissions) {
  const auto tool = write("src/tool", "#!/bin/sh\n");
  fs::permissions(tool, static_cast<fs::perms>(0644));
  const auto lib = write("src/lib.so", "ELF");
  fs::permissions(lib, static_cast<fs::perms>(0755));
  ASSERT_TRUE(pack({{.name = "bin/tool", .source = tool, .mode = 0755},
                    {.name = "lib/lib.so", .source = lib, .mode = 0640},
                    {.name = "lib/as-is.so", .source = lib}},
                   m_dir / "p.tar.zst"));
  const auto files = unpack(m_dir / "p.tar.zst", m_dir / "out", {.sync = false});
  ASSERT_TRUE(files) << files.error().message;
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0].name, "bin/tool");
  EXPECT_EQ((*files)[0].mode, 0755u);
  EXPECT_EQ(mode_of(m_dir / "out/bin/tool"), 0755u);
  EXPECT_EQ((*files)[1].name, "lib/as-is.so");
  EXPECT_EQ((*files)[1].mode, 0755u);  // unset: the source's
  EXPECT_EQ((*files)[2].name, "lib/lib.so");
  EXPECT_EQ((*files)[2].mode, 0640u);
  EXPECT_EQ(mode_of(m_dir / "out/lib/lib.so"), 0640u);
  EXPECT_EQ(mode_of(tool), 0644u);  // the source is left as it was
}

TEST_F(StreamUnpack, SameFilesAndModesMakeByteIdenticalPacks) {
  const auto tool = write("src/tool", "#!/bin/sh\n");
  fs::permissions(tool, static_cast<fs::perms>(0644));
  const auto lib = write("src/lib.so", "ELF");
  ASSERT_TRUE(pack({{.name = "bin/tool", .source = tool, .mode = 0755}, {.name = "lib/lib.so", .source = lib}},
                   m_dir / "one.tar.zst"));
  // Another time, other order, the source's own mode now what the entry says:
  // the same bytes.
  fs::permissions(tool, static_cast<fs::perms>(0755));
  fs::last_write_time(tool, fs::file_time_type::clock::now() - std::chrono::hours(3));
  ASSERT_TRUE(pack({{.name = "lib/lib.so", .source = lib}, {.name = "bin/tool", .source = tool, .mode = 0755}},
                   m_dir / "two.tar.zst"));
  EXPECT_TRUE(slurp(m_dir / "one.tar.zst") == slurp(m_dir / "two.tar.zst"));
  // Another mode is another pack.
  ASSERT_TRUE(pack({{.name = "bin/tool", .source = tool, .mode = 0700}, {.name = "lib/lib.so", .source = lib}},
                   m_dir / "three.tar.zst"));
  EXPECT_FALSE(slurp(m_dir / "one.tar.zst") == slurp(m_dir / "three.tar.zst"));
}

}  // namespace
}  // namespace orc::cache
