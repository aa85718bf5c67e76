// Image references: the one parser every command that names an image by
// repository, tag or digest goes through (docker pull, stamp, images push,
// the watcher, inspect's docker:// and oci:// forms).
#include "orchestrator/digest/image_reference.hpp"

#include <gtest/gtest.h>

#include <string>

namespace orc::digest {
namespace {

const std::string k_digest = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

TEST(ImageReference, ANameWithoutRegistryIsAllPath) {
  const auto r = ImageReference::parse("orchestrate/cuda:12.4-trixie");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->domain(), "");
  EXPECT_EQ(r->path(), "orchestrate/cuda");
  EXPECT_EQ(r->repository(), "orchestrate/cuda");
  EXPECT_EQ(r->tag(), "12.4-trixie");
  EXPECT_FALSE(r->digest());
  EXPECT_EQ(r->to_string(), "orchestrate/cuda:12.4-trixie");
}

// The first component is a registry when it holds '.' or ':' or is
// localhost; a port is never a tag.
TEST(ImageReference, TheRegistryHostIsTheFirstComponentWithADotOrAColon) {
  struct Case {
    const char* text;
    const char* domain;
    const char* path;
    const char* tag;
  };
  for (const Case& c : {Case{"127.0.0.1:5000/team/cuda", "127.0.0.1:5000", "team/cuda", ""},
                        Case{"127.0.0.1:5000/team/cuda:12.4", "127.0.0.1:5000", "team/cuda", "12.4"},
                        Case{"nvcr.io/nvidia/cuda:12.4.1-devel-ubuntu22.04", "nvcr.io", "nvidia/cuda",
                             "12.4.1-devel-ubuntu22.04"},
                        Case{"localhost/x", "localhost", "x", ""}, Case{"[::1]:5000/x:y", "[::1]:5000", "x", "y"},
                        Case{"nvidia/cuda", "", "nvidia/cuda", ""}, Case{"ubuntu:22.04", "", "ubuntu", "22.04"}}) {
    const auto r = ImageReference::parse(c.text);
    ASSERT_TRUE(r) << c.text << ": " << r.error();
    EXPECT_EQ(r->domain(), c.domain) << c.text;
    EXPECT_EQ(r->path(), c.path) << c.text;
    EXPECT_EQ(r->tag().value_or(""), c.tag) << c.text;
    EXPECT_EQ(r->to_string(), c.text);
  }
  EXPECT_EQ(ImageReference::parse("127.0.0.1:5000/x")->tag_or_latest(), "latest");
}

TEST(ImageReference, ADigestWithOrWithoutATag) {
  const auto only = ImageReference::parse("reg.example/a/b@" + k_digest);
  ASSERT_TRUE(only) << only.error();
  EXPECT_FALSE(only->tag());
  ASSERT_TRUE(only->digest());
  EXPECT_EQ(only->digest()->to_string(), k_digest);
  EXPECT_EQ(only->repository(), "reg.example/a/b");

  const auto both = ImageReference::parse("a/b:v1@" + k_digest);
  ASSERT_TRUE(both) << both.error();
  EXPECT_EQ(both->tag(), "v1");
  EXPECT_EQ(both->to_string(), "a/b:v1@" + k_digest);
  EXPECT_EQ(both->with_tag("v2").to_string(), "a/b:v2");
}

// Every part has its own error, and each quotes the whole input.
TEST(ImageReference, WhatIsWrongIsNamed) {
  struct Case {
    std::string text;
    const char* says;
  };
  for (const Case& c : {Case{"", "is not a repository name"}, Case{"Upper/case", "is not a repository name"},
                        Case{"a//b", "is not a repository name"}, Case{"a/b:", "is not a tag"},
                        Case{"a/b:-x", "is not a tag"}, Case{"a/b@sha256:12", "hex digits"},
                        Case{"a/b@md5:" + std::string(32, '0'), "digest"}, Case{"bad_host.x/a", "registry host"},
                        Case{"h.example:port/a", "registry host"}, Case{"[::1/a", "registry host"},
                        Case{"a/b:" + std::string(129, 't'), "is not a tag"}}) {
    const auto r = ImageReference::parse(c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_NE(r.error().find(c.says), std::string::npos) << c.text << ": " << r.error();
    EXPECT_NE(r.error().find("image reference '"), std::string::npos) << r.error();
  }
  EXPECT_NE(ImageReference::parse("h.x/a:\x01").error().find("\\x01"), std::string::npos);
}

// oci://HOST/PATH: the host is taken as the URL gave it, even without a dot.
TEST(ImageReference, ARegistryKnownApart) {
  const auto r = ImageReference::parse_at("myregistry", "team/cuda@" + k_digest);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->repository(), "myregistry/team/cuda");
  EXPECT_FALSE(ImageReference::parse_at("h", "Team/cuda"));
}

TEST(ImageReference, RepositoriesAndTags) {
  for (const char* ok : {"a", "team/artifacts", "a.b_c__d-e--f/g0", "x/y/z"})
    EXPECT_TRUE(is_valid_repository(ok)) << ok;
  for (const char* bad : {"", "A", "a/", "/a", "a..b", "_a", "a_", "a___b", "a b", "a/../b"})
    EXPECT_FALSE(is_valid_repository(bad)) << bad;
  for (const char* ok : {"latest", "sha256-abc", "v1.2.3", "_x", "A-b.C"}) EXPECT_TRUE(is_valid_tag(ok)) << ok;
  for (const char* bad : {"", ".x", "-x", "a/b", "a:b", "sha256:ab"}) EXPECT_FALSE(is_valid_tag(bad)) << bad;
  EXPECT_FALSE(is_valid_tag(std::string(129, 'a')));
}

}  // namespace
}  // namespace orc::digest
