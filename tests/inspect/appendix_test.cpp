// cuobjdump 13.0.85's output as fatbin-format.md appendix A quotes it, over
// the same kinds of input built here with nvcc 13.0: the 13.0 behaviour is
// pinned even before goldens are recorded with cuobjdump 13.0 itself.
// Differences from the appendix's inputs: libk.a is `ar rcs libk.a k.o k2.o`
// (nvcc -lib's member names are random), and paths are this run's (@DIR@).
#include <gtest/gtest.h>

#include "tests/inspect/fixtures.hpp"

namespace orc::inspect_test {
namespace {

struct Case {
  std::string_view fixture;  // in the 13.0 fixture directory; absolute if it starts with '/'
  std::string_view mode;     // a modes() name
  std::string_view out;
  std::string_view err;
  int exit_code = 0;
};

#define NO_ELF(f) "cuobjdump info    : No ELF file found to extract from '@DIR@/" f "'. You may try with -all option.\n"
#define NO_PTX(f) "cuobjdump info    : No PTX file found to extract from '@DIR@/" f "'. You may try with -all option.\n"
#define NO_CODE(f) "cuobjdump info    : File '@DIR@/" f "' does not contain device code\n"
#define BAD_HEADER(f) "cuobjdump fatal   : Invalid fatbin header in '@DIR@/" f "'\n"
#define LTO(f) "cuobjdump warning : Can't deobfuscate entry '@DIR@/" f "' without obfuscation key\n"

const Case k_cases[] = {
    // A.1
    {"multi.fatbin", "lelf",
     "ELF file    1: multi.1.sm_75.cubin\nELF file    2: multi.2.sm_90a.cubin\nELF file    3: multi.3.sm_100.cubin\n"
     "ELF file    4: multi.4.sm_100a.cubin\nELF file    5: multi.5.sm_120.cubin\nELF file    6: "
     "multi.6.sm_110.cubin\n"},
    {"multi.fatbin", "lptx",
     "PTX file    1: multi.1.sm_90a.ptx\nPTX file    2: multi.2.sm_100f.ptx\nPTX file    3: multi.3.sm_120.ptx\n"},
    {"multi.fatbin", "lelf-lptx",
     "ELF file    1: multi.1.sm_75.cubin\nELF file    2: multi.2.sm_90a.cubin\nPTX file    1: multi.1.sm_90a.ptx\n"
     "ELF file    3: multi.3.sm_100.cubin\nPTX file    2: multi.2.sm_100f.ptx\nELF file    4: multi.4.sm_100a.cubin\n"
     "ELF file    5: multi.5.sm_120.cubin\nPTX file    3: multi.3.sm_120.ptx\nELF file    6: multi.6.sm_110.cubin\n"},
    {"t", "lelf", "ELF file    1: t.1.sm_80.cubin\nELF file    2: t.2.sm_80.cubin\nELF file    3: t.3.sm_80.cubin\n"},
    {"t", "lptx", "PTX file    1: t.1.sm_80.ptx\nPTX file    2: t.2.sm_80.ptx\n"},
    {"k.o", "lelf", "ELF file    1: k.1.sm_80.cubin\n"},
    {"k.o", "lptx", "PTX file    1: k.1.sm_80.ptx\n"},
    {"kr.o", "lelf", "ELF file    1: kr.1.sm_80.cubin\n"},
    {"kr.o", "lptx", "PTX file    1: kr.1.sm_80.ptx\n"},
    {"libk.a", "lelf",
     "\nmember @DIR@/libk.a:k.o:\nELF file    1: libk.1.sm_80.cubin\n"
     "\nmember @DIR@/libk.a:k2.o:\nELF file    2: libk.2.sm_80.cubin\n"},
    {"libk.a", "lptx",
     "\nmember @DIR@/libk.a:k.o:\nPTX file    1: libk.1.sm_80.ptx\n"
     "\nmember @DIR@/libk.a:k2.o:\nPTX file    2: libk.2.sm_80.ptx\n"},
    {"libk.so", "lelf",
     "ELF file    1: libk.1.sm_80.cubin\nELF file    2: libk.2.sm_80.cubin\nELF file    3: libk.3.sm_80.cubin\n"},
    {"libk.so", "lptx", "PTX file    1: libk.1.sm_80.ptx\nPTX file    2: libk.2.sm_80.ptx\n"},
    {"libk.so.13", "lelf",
     "ELF file    1: libk.so.1.sm_80.cubin\nELF file    2: libk.so.2.sm_80.cubin\nELF file    3: "
     "libk.so.3.sm_80.cubin\n"},
    {"libk.so.13", "lptx", "PTX file    1: libk.so.1.sm_80.ptx\nPTX file    2: libk.so.2.sm_80.ptx\n"},
    {"kd.o", "lelf", "", LTO("kd.o") NO_ELF("kd.o")},
    {"kd.o", "lptx", "PTX file    1: kd.1.sm_80.ptx\n", LTO("kd.o")},
    {"c90a.cubin", "lelf-lptx", "ELF file    1: c90a.sm_90a.cubin\n", NO_PTX("c90a.cubin")},
    {"sz.fatbin", "lelf-lptx", "ELF file    1: sz.1.sm_80.cubin\nPTX file    1: sz.1.sm_80.ptx\n"},
    {"sp.fatbin", "lelf-lptx", "ELF file    1: sp.1.sm_80.cubin\nPTX file    1: sp.1.sm_80.ptx\n"},
    {"id.fatbin", "lelf", "ELF file    1: foo.sm_80.cubin\n"},
    {"/bin/ls", "lelf", "", "cuobjdump info    : File '/bin/ls' does not contain device code\n", 255},
    // A.2
    {"mx.fatbin", "lelf", "ELF file    1: mx.1.sm_75.cubin\nELF file    2: mx.2.sm_90a.cubin\n"},
    {"szx.fatbin", "lelf-lptx", "ELF file    1: szx.1.sm_80.cubin\nPTX file    1: szx.1.sm_80.ptx\n"},
    {"c90a_noa.cubin", "lelf", "ELF file    1: c90a_noa.sm_90.cubin\n"},
    {"c90_f8.cubin", "lelf", "ELF file    1: c90_f8.sm_90.cubin\n"},
    {"c100f.cubin", "lelf", "ELF file    1: c100f.sm_100.cubin\n"},
    {"id2.fatbin", "lelf-lptx", "ELF file    1: a-b.sm_80.cubin\nPTX file    1: a-b.sm_80.ptx\n"},
    {"tg", "lelf", "ELF file    1: m-k.sm_80.cubin\nELF file    2: m.sm_80.cubin\nELF file    3: k.sm_80.cubin\n"},
    {"tg", "lptx", "PTX file    1: m.sm_80.ptx\nPTX file    2: k.sm_80.ptx\n"},
    {"tr", "lelf", "ELF file    1: tr.1.sm_80.cubin\n"},
    {"tr", "lptx", "", NO_PTX("tr")},
    {"tr", "all-lelf-lptx",
     "ELF file    1: tr.1.sm_80.cubin\nELF file    2: tr.2.sm_80.cubin\nPTX file    1: tr.1.sm_80.ptx\n"
     "ELF file    3: tr.3.sm_80.cubin\nPTX file    2: tr.2.sm_80.ptx\n"},
    {"cat.fatbin", "lelf", "ELF file    1: cat.1.sm_80.cubin\nELF file    2: cat.2.sm_80.cubin\n"},
    {"cat.fatbin", "lptx", "PTX file    1: cat.1.sm_80.ptx\nPTX file    2: cat.2.sm_80.ptx\n"},
    {"trunc.fatbin", "lelf", "", BAD_HEADER("trunc.fatbin"), 1},
    {"nonexist", "lelf", "", "cuobjdump fatal   : Could not open input file '@DIR@/nonexist'\n", 1},
    // A.3
    {"p.fatbin", "lelf", "", NO_ELF("p.fatbin")},
    {"p.fatbin", "lptx", "PTX file    1: p.1.sm_90a.ptx\n"},
    {"px.fatbin", "lptx", "PTX file    1: px.1.sm_90.ptx\n"},
    {"mix.a", "lelf", "\nmember @DIR@/mix.a:h.o:\n\nmember @DIR@/mix.a:k.o:\nELF file    1: mix.1.sm_80.cubin\n"},
    {"mix.a", "lptx", "\nmember @DIR@/mix.a:h.o:\n\nmember @DIR@/mix.a:k.o:\nPTX file    1: mix.1.sm_80.ptx\n"},
    {"k.ptx", "lelf", "", NO_CODE("k.ptx"), 255},
    {"gap.fatbin", "lelf", "ELF file    1: gap.1.sm_80.cubin\nELF file    2: gap.2.sm_80.cubin\n"},
    {"gap.fatbin", "lptx", "PTX file    1: gap.1.sm_80.ptx\nPTX file    2: gap.2.sm_80.ptx\n"},
    {"hgap.o", "lelf", "ELF file    1: hgap.1.sm_80.cubin\nELF file    2: hgap.2.sm_80.cubin\n"},
    {"junk.fatbin", "lelf", "ELF file    1: junk.1.sm_80.cubin\n", BAD_HEADER("junk.fatbin"), 1},
    {"hjunk.o", "lelf", "ELF file    1: hjunk.1.sm_80.cubin\n", BAD_HEADER("hjunk.o"), 1},
    {"uk.fatbin", "lelf-lptx", "ELF file    1: uk.1.sm_80.cubin\nPTX file    1: uk.1.sm_80.ptx\n"},
    {"huk.o", "lelf-lptx", "ELF file    1: huk.1.sm_80.cubin\nPTX file    1: huk.1.sm_80.ptx\n"},
    {"h.o", "lelf", "", NO_CODE("h.o"), 255},
};

const Mode& mode_named(std::string_view name) {
  for (const Mode& m : modes())
    if (m.name == name) return m;
  throw std::logic_error("no mode " + std::string(name));
}

std::string at_dir(std::string_view text, const fs::path& dir) {
  std::string s(text);
  for (std::size_t at = 0; (at = s.find("@DIR@", at)) != std::string::npos;) s.replace(at, 5, dir.string());
  return s;
}

TEST(AppendixA, Cuobjdump13ListingsOfNvcc13Fixtures) {
  const FixtureSet& set = fixture_set("13.0");
  ASSERT_EQ(set.build_error, "");
  if (set.dir.empty()) GTEST_SKIP() << set.missing;
  for (const Case& c : k_cases) {
    const fs::path input = c.fixture.starts_with('/') ? fs::path(c.fixture) : set.dir / c.fixture;
    if (c.fixture.starts_with('h') && c.fixture.ends_with(".o") && c.fixture != "h.o" && !fs::exists(input)) {
      std::cout << "[ skipped  ] " << c.fixture << ": make-fixtures.sh found no objcopy\n";
      continue;
    }
    for (const bool exact : {true, false}) {
      if (!exact && c.fixture == "szx.fatbin") continue;  // its header lies; golden_test covers it
      inspect::ListOptions options = mode_named(c.mode).options;
      options.exact = exact;
      SCOPED_TRACE(std::string(c.fixture) + " (" + std::string(c.mode) + (exact ? ", exact)" : ", header)"));
      const Listing expected{at_dir(c.out, set.dir), at_dir(c.err, set.dir), c.exit_code};
      EXPECT_EQ(describe(list(input, options)), describe(expected));
    }
  }
}

}  // namespace
}  // namespace orc::inspect_test
