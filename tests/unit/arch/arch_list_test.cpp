// The targets a stored set records, read through one type.
#include "orchestrator/arch/arch_list.hpp"

#include <gtest/gtest.h>

namespace orc::arch {
namespace {

TEST(ArchList, NamesStayAsRecordedAndReadAsCcs) {
  const ArchList sass{"sm_90a", "sm_80", "sm_130x", "sm_100f"};
  EXPECT_EQ(sass.names(), (std::vector<std::string>{"sm_90a", "sm_80", "sm_130x", "sm_100f"}));
  // The list's order, the unread name left out of the CCs and kept apart.
  EXPECT_EQ(sass.ccs(),
            (std::vector<ComputeCapability>{{9, 0, Variant::arch_specific}, {8, 0}, {10, 0, Variant::family}}));
  EXPECT_EQ(sass.cc_set().begin()->number(), 80);
  EXPECT_EQ(sass.unread(), std::vector<std::string>{"sm_130x"});
  // CMake's digits, the unread name in its place as written.
  EXPECT_EQ(sass.digits(), "90a,80,sm_130x,100f");
  EXPECT_EQ(sass.joined(" "), "sm_90a sm_80 sm_130x sm_100f");
  EXPECT_EQ(ArchList{}.joined(","), "-");
  EXPECT_EQ(ArchList{}.joined(" ", ""), "");
  EXPECT_EQ(ArchList{}.digits(), "");
}

TEST(ArchList, FromCcsAscendingAsSassOrPtx) {
  const std::set<ComputeCapability> ccs{{12, 0}, {9, 0, Variant::arch_specific}, {8, 6}};
  EXPECT_EQ(ArchList::sass(ccs).names(), (std::vector<std::string>{"sm_86", "sm_90a", "sm_120"}));
  EXPECT_EQ(ArchList::ptx(ccs).names(), (std::vector<std::string>{"compute_86", "compute_90a", "compute_120"}));
  EXPECT_TRUE(ArchList::sass({}).empty());
}

TEST(ArchList, AUnionIsEachNameOnceSortedAsText) {
  // Sorted as text, as the index has always stored a set's union: sm_100
  // before sm_80.
  const ArchList a{"sm_80", "sm_90"};
  const ArchList b{"sm_100", "sm_80", "sm_999"};
  const std::vector<const ArchList*> both{&a, &b};
  EXPECT_EQ(ArchList::union_of(both), (ArchList{"sm_100", "sm_80", "sm_90", "sm_999"}));
  EXPECT_TRUE(ArchList::union_of({}).empty());
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace orc::arch
