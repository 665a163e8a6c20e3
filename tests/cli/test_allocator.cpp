// The command's allocator settings (cli/allocator.hpp): what GLIBC_TUNABLES becomes, and that the command
// run again under them gives what it gives without.
#include <gtest/gtest.h>

#include <string>

#include "../../cli/allocator.hpp"
#include "cli_process.hpp"

namespace {

using ecekde::cli::tuned_allocator_settings;

constexpr const char* kAll =
    "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456:"
    "glibc.malloc.arena_max=1";

TEST(Allocator, UnsetOrEmptyTakesEveryTunable) {
  EXPECT_EQ(tuned_allocator_settings(nullptr), kAll);
  EXPECT_EQ(tuned_allocator_settings(""), kAll);
}

TEST(Allocator, HugetlbNamedLeavesEverythingAsItIs) {
  EXPECT_FALSE(tuned_allocator_settings("glibc.malloc.hugetlb=0"));
  EXPECT_FALSE(tuned_allocator_settings("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2"));
  EXPECT_FALSE(tuned_allocator_settings(kAll));  // the command's own, after its exec
}

TEST(Allocator, TheUsersOtherTunablesStandAndComeFirst) {
  EXPECT_EQ(tuned_allocator_settings("glibc.malloc.tcache_count=0"),
            std::string("glibc.malloc.tcache_count=0:") + kAll);
  EXPECT_EQ(tuned_allocator_settings("glibc.malloc.trim_threshold=0"),
            "glibc.malloc.trim_threshold=0:glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432:"
            "glibc.malloc.arena_max=1");
  EXPECT_EQ(tuned_allocator_settings("glibc.malloc.arena_max=2"),
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432:"
            "glibc.malloc.trim_threshold=268435456");
  // A name that only ends like one of ours is not it.
  EXPECT_EQ(tuned_allocator_settings("x.glibc.malloc.hugetlb=0"), std::string("x.glibc.malloc.hugetlb=0:") + kAll);
}

TEST(Allocator, TheCommandRunAgainGivesTheSameOutput) {
  const testfiles::ScratchDir dir;
  const std::vector<std::string> args = {"estimate", "--probs", ECEKDE_EXAMPLES_DIR "/synthetic_probs.npy",
                                         "--labels", ECEKDE_EXAMPLES_DIR "/synthetic_labels.npy",
                                         "--type",   "top-label", "--json"};
  // Run from an environment without GLIBC_TUNABLES (make test sets it for the tests), and with the
  // allocator left as it is.
  auto run_with = [&](std::vector<std::string> env_args) {
    env_args.push_back(ECEKDE_CLI_PATH);
    env_args.insert(env_args.end(), args.begin(), args.end());
    return clitest::run_program(dir, "env", env_args);
  };
  const clitest::Output tuned = run_with({"-u", "GLIBC_TUNABLES"});
  const clitest::Output plain = run_with({"GLIBC_TUNABLES=glibc.malloc.hugetlb=0"});
  ASSERT_EQ(tuned.status, 0) << tuned.err;
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_NE(tuned.out.find("\"top-label\""), std::string::npos);
  EXPECT_EQ(tuned.out, plain.out);
  EXPECT_EQ(tuned.err, plain.err);
}

}  // namespace
