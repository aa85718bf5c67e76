// The setup scripts compiled into the binary are images/offline's files
// byte for byte, and give the key the files give.
#include "orchestrator/imaging/setup_scripts.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <span>

#include "orchestrator/compat/image_catalog.hpp"
#include "orchestrator/digest/sha256.hpp"
#include "orchestrator/imaging/offline_image.hpp"
#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/fs.hpp"

namespace orc::imaging {
namespace {

namespace fs = std::filesystem;

const fs::path k_images = fs::path(ORC_SOURCE_DIR) / "images";

std::string sha256_hex(std::string_view text) {
  return digest::sha256(std::as_bytes(std::span(text.data(), text.size()))).hex();
}

TEST(SetupScripts, CompiledInAreTheSourceFilesByteForByte) {
  std::set<std::string> on_disk;
  for (const auto& entry : fs::recursive_directory_iterator(k_images / "offline"))
    if (entry.is_regular_file() && entry.path().extension() == ".sh")
      on_disk.insert(fs::relative(entry.path(), k_images / "offline").string());
  std::set<std::string> embedded;
  for (const EmbeddedScript& script : embedded_scripts()) {
    embedded.insert(std::string(script.path));
    EXPECT_EQ(script.content, util::read_file(k_images / "offline" / script.path).value_or("<missing>")) << script.path;
  }
  EXPECT_EQ(embedded, on_disk);
  EXPECT_TRUE(embedded.contains("common.sh"));
  for (const compat::OfflineImage& image : compat::offline_images())
    EXPECT_TRUE(embedded.contains(std::string(image.name) + "/setup.sh")) << image.name;
}

// The key as the files gave it before the scripts were compiled in (a frozen
// copy of its text): records of images built then stay up to date.
std::string key_from_files(const compat::OfflineImage& image) {
  const auto digest = [](const fs::path& file) { return sha256_hex(util::read_file(file).value_or("")); };
  std::string text = "orchestrate rootfs v1\n";
  text += "suite=" + std::string(image.suite) + "\n";
  text += "components=" + std::string(image.components) + "\n";
  text += "packages=";
  for (auto p : image.packages) text += std::string(p) + " ";
  text += "\ncommon.sh=" + digest(k_images / "offline" / "common.sh") + "\n";
  text += "setup.sh=" + digest(k_images / "offline" / image.name / "setup.sh") + "\n";
  return sha256_hex(text);
}

TEST(SetupScripts, TheKeyIsTheSameWhereverTheScriptsComeFrom) {
  ::unsetenv("ORCHESTRATE_IMAGES_DIR");
  for (const compat::OfflineImage& image : compat::offline_images()) {
    const SetupScripts built_in = setup_scripts(image, {});
    const SetupScripts from_folder = setup_scripts(image, k_images);
    EXPECT_EQ(built_in.origin, "compiled in");
    EXPECT_EQ(from_folder.origin, (k_images / "offline").string());
    EXPECT_EQ(rootfs_key(image, built_in), rootfs_key(image, from_folder)) << image.name;
    EXPECT_EQ(rootfs_key(image, built_in), key_from_files(image)) << image.name;
  }
  // Another image's scripts, another key.
  const auto& images = compat::offline_images();
  ASSERT_GE(images.size(), 2u);
  EXPECT_NE(rootfs_key(images[0], setup_scripts(images[0], {})), rootfs_key(images[1], setup_scripts(images[1], {})));
}

TEST(SetupScripts, AnEditedCopyInAFolderChangesTheKey) {
  const fs::path dir = fs::temp_directory_path() / ("orc-scripts-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "offline" / "host-bookworm");
  fs::copy_file(k_images / "offline" / "common.sh", dir / "offline" / "common.sh");
  std::ofstream(dir / "offline" / "host-bookworm" / "setup.sh")
      << util::read_file(k_images / "offline" / "host-bookworm" / "setup.sh").value() << "# edited\n";
  const compat::OfflineImage& image = *compat::find_offline_image("host-bookworm");
  ::setenv("ORCHESTRATE_IMAGES_DIR", dir.c_str(), 1);
  const SetupScripts edited = setup_scripts(image, {});
  ::unsetenv("ORCHESTRATE_IMAGES_DIR");
  EXPECT_EQ(edited.origin, (dir / "offline").string());
  EXPECT_NE(rootfs_key(image, edited), rootfs_key(image, setup_scripts(image, {})));

  // A folder without the image's script is bad input that names the file.
  try {
    setup_scripts(*compat::find_offline_image("12.4-trixie"), dir);
    ADD_FAILURE() << "a folder without 12.4-trixie/setup.sh was taken";
  } catch (const util::Failure& f) {
    EXPECT_EQ(f.code(), util::ExitCode::bad_input);
    EXPECT_NE(std::string(f.what()).find((dir / "offline" / "12.4-trixie" / "setup.sh").string()), std::string::npos)
        << f.what();
    EXPECT_NE(std::string(f.what()).find("--images-dir"), std::string::npos) << f.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace orc::imaging
