#include "orchestrator/front/nvcc_args.hpp"

#include <gtest/gtest.h>

namespace orc::front {
namespace {

using Args = std::vector<std::string>;

NvccCall read(const Args& args) { return read_nvcc_call(args); }

TEST(NvccArgs, ArchSmIsSassAndPtxOfThatArch) {
  const auto c = read({"-c", "k.cu", "-o", "k.o", "-arch=sm_80"});
  EXPECT_EQ(c.kind, CallKind::compile);
  EXPECT_EQ(c.choice, ArchChoice::listed);
  EXPECT_EQ(describe(c.targets), "sm_80 compute_80");
  EXPECT_EQ(c.sources, Args{"k.cu"});
  EXPECT_EQ(c.output, "k.o");
}

TEST(NvccArgs, ArchComputeAloneIsPtxOnly) {
  EXPECT_EQ(describe(read({"-c", "k.cu", "-arch", "compute_80"}).targets), "compute_80");
}

TEST(NvccArgs, ArchSpecificArchAloneAlsoEmbedsThePlainPtx) {
  // nvcc 12.4 and 13.0 --dryrun: -arch=sm_90a is sm_90a, compute_90a and compute_90.
  EXPECT_EQ(describe(read({"-c", "k.cu", "-arch=sm_90a"}).targets), "sm_90a compute_90 compute_90a");
  EXPECT_EQ(describe(read({"-c", "k.cu", "-arch=compute_100f"}).targets), "compute_100 compute_100f");
  // With -code, only what -code lists.
  EXPECT_EQ(describe(read({"k.cu", "-arch=compute_90a", "-code=sm_90a"}).targets), "sm_90a");
}

TEST(NvccArgs, CodeListsWhatIsEmbedded) {
  EXPECT_EQ(describe(read({"k.cu", "--gpu-architecture=compute_80", "--gpu-code=sm_80,sm_86"}).targets), "sm_80 sm_86");
  EXPECT_EQ(describe(read({"k.cu", "-arch=compute_90a", "-code", "sm_90a,compute_90a"}).targets), "sm_90a compute_90a");
}

TEST(NvccArgs, GencodeInEverySpellingCMakeAndMakefilesUse) {
  const auto c = read({"-c", "k.cu", "--generate-code=arch=compute_75,code=[compute_75,sm_75]", "-gencode",
                       "arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=\"sm_90,compute_90\""});
  EXPECT_EQ(describe(c.targets), "sm_75 sm_80 sm_90 compute_75 compute_90");
  EXPECT_EQ(c.arch_flags.size(), 3u);
  EXPECT_EQ(c.arch_flags[1], "-gencode arch=compute_80,code=sm_80");
}

TEST(NvccArgs, ArchBesideGencodeIsTheUnion) {
  // nvcc 13.0 --dryrun: sm_80 and compute_80 from -arch, sm_90 from -gencode.
  EXPECT_EQ(describe(read({"k.cu", "-arch=sm_80", "-gencode", "arch=compute_90,code=sm_90"}).targets),
            "sm_80 sm_90 compute_80");
}

TEST(NvccArgs, NvccDecidesNativeAllAndDefault) {
  EXPECT_EQ(read({"-c", "k.cu", "-arch=native"}).choice, ArchChoice::native);
  EXPECT_EQ(read({"-c", "k.cu", "-arch", "all-major"}).choice, ArchChoice::all_major);
  EXPECT_EQ(read({"-c", "k.cu", "-arch=all"}).choice, ArchChoice::all);
  const auto none = read({"-c", "k.cu", "-O2"});
  EXPECT_EQ(none.choice, ArchChoice::nvcc_default);
  EXPECT_TRUE(none.arch_flags.empty());
  EXPECT_EQ(describe(default_targets(arch::ComputeCapability(7, 5))), "sm_75 compute_75");
}

TEST(NvccArgs, LtoTargetsAreNeitherSassNorPtx) {
  const auto c = read({"-dc", "k.cu", "-gencode", "arch=compute_90,code=lto_90"});
  EXPECT_EQ(describe(c.targets), "lto_90");
  EXPECT_TRUE(c.targets.code.empty());
}

TEST(NvccArgs, WhatTheCallMakes) {
  EXPECT_EQ(read({"-dlink", "a.o", "b.o", "-o", "dlink.o", "-arch=sm_80"}).kind, CallKind::device_link);
  EXPECT_EQ(read({"a.o", "b.o", "-o", "app", "-arch=sm_80"}).kind, CallKind::link);
  EXPECT_EQ(read({"-E", "k.cu"}).kind, CallKind::preprocess);
  EXPECT_EQ(read({"--version"}).kind, CallKind::query);
  EXPECT_EQ(read({"-ptx", "k.cu", "-arch=compute_80"}).kind, CallKind::single_target);
  EXPECT_EQ(read({"-c", "host.cpp", "-o", "host.o"}).kind, CallKind::host_only);
  EXPECT_EQ(read({"-c", "-x", "cu", "host.cpp"}).kind, CallKind::compile);
  // Values of options are no inputs: -o k.o does not make a link.
  const auto c = read({"-c", "k.cu", "-o", "k.o", "-MF", "k.d", "-include", "p.h", "-Xcompiler", "-fPIC"});
  EXPECT_EQ(c.inputs, Args{"k.cu"});
}

TEST(NvccArgs, ValuesNvccWouldRefuseAreProblems) {
  const auto c = read({"k.cu", "-arch=sm_8x"});
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0], "sm_8x");
}

TEST(NvccArgs, StripRemovesEveryArchOptionAndItsValue) {
  const Args in = {"-O2",
                   "-arch",
                   "sm_75",
                   "-code=sm_75",
                   "-gencode",
                   "arch=compute_80,code=sm_80",
                   "--generate-code=arch=compute_90,code=sm_90",
                   "--gpu-architecture=sm_86",
                   "-c",
                   "k.cu"};
  EXPECT_EQ(strip_arch_options(in), (Args{"-O2", "-c", "k.cu"}));
}

TEST(NvccArgs, SplitFlagsQuotesAndEscapes) {
  EXPECT_EQ(split_flags("  -O2 \"-DNAME=a b\" '-DX=\"y\"' a\\ b\n-c"),
            (Args{"-O2", "-DNAME=a b", "-DX=\"y\"", "a b", "-c"}));
  EXPECT_TRUE(split_flags("   ").empty());
}

TEST(NvccArgs, OptionsFilesAreSplicedWhereTheyAreNamed) {
  static std::string text;
  text = "-gencode arch=compute_80,code=sm_80\n-I/inc";
  const auto reader = [](const std::string& path) -> std::optional<std::string> {
    if (path == "flags.txt") return text;
    return std::nullopt;
  };
  EXPECT_EQ(expand_options_files(Args{"-c", "--options-file", "flags.txt", "k.cu"}, reader),
            (Args{"-c", "-gencode", "arch=compute_80,code=sm_80", "-I/inc", "k.cu"}));
  // One that cannot be read stays as written (nvcc will say why).
  EXPECT_EQ(expand_options_files(Args{"-optf=missing.txt"}, reader), (Args{"-optf=missing.txt"}));
}

TEST(NvccArgs, DryrunImagesOf12And11) {
  const std::string v13 =
      "#$ fatbinary -64 --cicc-cmdline=\"-ftz=0\" \"--image3=kind=elf,sm=80,file=/tmp/a.cubin\" "
      "\"--image3=kind=ptx,sm=90,file=/tmp/a.ptx\" \"--image3=kind=elf,sm=90a,file=/tmp/b.cubin\"";
  auto t = targets_from_dryrun(v13);
  ASSERT_TRUE(t);
  EXPECT_EQ(describe(*t), "sm_80 sm_90a compute_90");
  auto old = targets_from_dryrun(
      "#$ fatbinary --create=x \"--image=profile=sm_70,file=a.cubin\" "
      "\"--image=profile=compute_70,file=a.ptx\"");
  ASSERT_TRUE(old);
  EXPECT_EQ(describe(*old), "sm_70 compute_70");
  EXPECT_FALSE(targets_from_dryrun("#$ g++ -c x.cpp"));
}

}  // namespace
}  // namespace orc::front
