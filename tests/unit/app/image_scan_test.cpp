// A directory scanned as an image's root file system (issue 28): sparse
// bill-of-materials files that cost nothing on disk, a file whose path is
// longer than PATH_MAX, and a CUDA library's name that is a link out of the
// root. Each says what happened; none is passed over in silence.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "orchestrator/app/inspect/coverage.hpp"
#include "orchestrator/app/inspect/image_scan.hpp"
#include "tests/unit/inspect/bounded_child.hpp"

namespace orc::app {
namespace {

namespace fs = std::filesystem;

// Removes a tree however deep, one directory at a time: a path past
// PATH_MAX cannot be named whole.
void remove_at(int parent, const char* name) {
  const int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  if (fd < 0) {
    ::unlinkat(parent, name, 0);
    return;
  }
  std::vector<std::string> names;
  DIR* dir = ::fdopendir(fd);
  while (const dirent* e = ::readdir(dir))
    if (std::string_view(e->d_name) != "." && std::string_view(e->d_name) != "..") names.emplace_back(e->d_name);
  for (const auto& n : names) remove_at(::dirfd(dir), n.c_str());
  ::closedir(dir);
  ::unlinkat(parent, name, AT_REMOVEDIR);
}

class ImageScanDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    m_root = fs::temp_directory_path() / ("orc-image-scan-" + std::to_string(::getpid()));
    remove_at(AT_FDCWD, m_root.c_str());
    fs::create_directories(m_root);
  }
  void TearDown() override { remove_at(AT_FDCWD, m_root.c_str()); }

  ImageSource source() const {
    return ImageSource{.kind = ImageSourceKind::directory, .given = m_root.string(), .directory = m_root};
  }
  ImageReport cover() const {
    return cover_image(InspectRequest{.ccs = {"9.0"}, .config = m_root / "none.yaml"}, source());
  }

  fs::path m_root;
};

TEST_F(ImageScanDirectory, SparseBomFilesAreReadWithinTheirCapAndTheRestSaid) {
  const fs::path status = m_root / "var/lib/dpkg/status.d";
  fs::create_directories(status);
  for (int i = 0; i < 120; ++i) {
    const fs::path file = status / ("zero" + std::to_string(1000 + i));
    std::ofstream(file).close();
    fs::resize_file(file, 32u << 20);  // no block on disk
  }
  const std::string failure = inspect::testing::run_bounded(
      [&]() -> std::string {
        const ScannedImage image = scan_image(source(), inspect::InspectOptions{});
        const auto& unread = image.content.unread;
        // Eight files of 32 MiB fill the 256 MiB; which eight is the
        // directory's order.
        if (unread.size() != 1 ||
            !unread[0].starts_with("112 bill-of-materials files not read (the image's pass 268435456 bytes in all): "
                                   "'/var/lib/dpkg/status.d/zero1") ||
            !unread[0].ends_with(", and 107 more; the CUDA versions they hold are not in the bill of materials"))
          return "unread: " + (unread.empty() ? std::string("nothing") : unread[0]);
        return {};
      },
      512ull << 20, 300);
  EXPECT_EQ(failure, "");
  // The report says it among its warnings.
  const ImageReport report = cover();
  EXPECT_EQ(std::count_if(report.warnings.begin(), report.warnings.end(),
                          [](const std::string& w) { return w.starts_with("112 bill-of-materials files not read"); }),
            1);
}

TEST_F(ImageScanDirectory, AFileWhosePathPassesPathMaxIsAnErrorNotASilence) {
  int fd = ::open(m_root.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  std::string rel;
  for (int i = 0; i < 20; ++i) {
    const std::string name(250, 'd');
    ASSERT_EQ(::mkdirat(fd, name.c_str(), 0755), 0);
    const int next = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY);
    ::close(fd);
    fd = next;
    rel += name + "/";
  }
  rel += "libcudart.so.12";
  const int file = ::openat(fd, "libcudart.so.12", O_WRONLY | O_CREAT, 0644);
  ASSERT_EQ(::write(file,
                    "\x7f"
                    "ELF",
                    4),
            4);
  ::close(file);
  ::close(fd);

  const ImageReport report = cover();
  const std::size_t full = fs::absolute(m_root).lexically_normal().string().size() + 1 + rel.size();
  EXPECT_EQ(report.exit_code, util::ExitCode::bad_input);
  EXPECT_EQ(report.damaged, std::vector<std::string>{"/" + rel + ": cannot read: File name too long: its path is " +
                                                     std::to_string(full) +
                                                     " bytes, over PATH_MAX (4096); inspect a directory nearer to it"});
}

TEST_F(ImageScanDirectory, ALinkOutOfTheRootIsNoBundledRuntime) {
  fs::create_directories(m_root / "usr/lib");
  fs::create_symlink("/etc/shadow", m_root / "usr/lib/libcudart.so.12");
  fs::create_symlink("../../../../../../../etc/passwd", m_root / "usr/lib/libcufft.so.11");
  std::ofstream(m_root / "usr/lib/libcublas.so.12.4.5.8") << "not an ELF";
  fs::create_symlink("libcublas.so.12.4.5.8", m_root / "usr/lib/libcublas.so.12");

  const ImageReport report = cover();
  ASSERT_EQ(report.bom.size(), 1u);
  EXPECT_EQ(report.bom[0].key, "cublas");
  EXPECT_EQ(report.bom[0].version, "12.4.5.8");
  for (const auto& [link, target] : std::vector<std::pair<std::string, std::string>>{
           {"/usr/lib/libcudart.so.12", "/etc/shadow"}, {"/usr/lib/libcufft.so.11", "../../../../../../../etc/passwd"}})
    EXPECT_EQ(std::count(report.warnings.begin(), report.warnings.end(),
                         link + ": a symbolic link to '" + target +
                             "', which leads to no file in the image: not counted as a library the image carries"),
              1)
        << link;
  EXPECT_EQ(report.exit_code, util::ExitCode::ok);
}

}  // namespace
}  // namespace orc::app
