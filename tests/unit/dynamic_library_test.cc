// drivers/common/dynamic_library.h: where RAL looks for a vendor library (RAL_<NAME>_PATH unset, a
// file, directories) and what a failed load says.
#include "drivers/common/dynamic_library.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace ral::drivers {
namespace {

constexpr char kEnv[] = "RAL_TEST_LIBRARY_PATH";

class DynamicLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/ral_dynamic_library_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    std::ofstream(dir_ + "/libtwo.so") << "not a library";
  }
  void TearDown() override {
    unsetenv(kEnv);
    std::remove((dir_ + "/libtwo.so").c_str());
    rmdir(dir_.c_str());
  }
  std::string dir_;
};

TEST_F(DynamicLibraryTest, UnsetOrEmptyMeansTheSonamesInOrder) {
  unsetenv(kEnv);
  EXPECT_EQ(libraryCandidates(kEnv, {"libone.so.1", "libtwo.so"}),
            (std::vector<std::string>{"libone.so.1", "libtwo.so"}));
  setenv(kEnv, "", 1);
  EXPECT_EQ(libraryCandidates(kEnv, {"libone.so.1"}), std::vector<std::string>{"libone.so.1"});
}

TEST_F(DynamicLibraryTest, AFileIsTakenAsIs) {
  setenv(kEnv, (dir_ + "/libtwo.so").c_str(), 1);
  EXPECT_EQ(libraryCandidates(kEnv, {"libone.so.1"}),
            std::vector<std::string>{dir_ + "/libtwo.so"});
}

TEST_F(DynamicLibraryTest, DirectoriesAreSearchedForTheSonames) {
  setenv(kEnv, ("/nonexistent:" + dir_).c_str(), 1);
  EXPECT_EQ(libraryCandidates(kEnv, {"libone.so.1", "libtwo.so"}),
            std::vector<std::string>{dir_ + "/libtwo.so"});
  // Nothing found: the value itself, so the error names what was set.
  setenv(kEnv, "/nonexistent:/also-missing", 1);
  EXPECT_EQ(libraryCandidates(kEnv, {"libone.so.1"}),
            std::vector<std::string>{"/nonexistent:/also-missing"});
}

TEST_F(DynamicLibraryTest, AFailedLoadNamesEveryPathTriedAndTheVariable) {
  setenv(kEnv, dir_.c_str(), 1);
  StatusOr<DynamicLibrary> lib =
      openDynamicLibrary("test: cannot load libtwo", kEnv, {"libtwo.so"}, "libtwo-dev");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), StatusCode::kUnavailable);
  const std::string message(lib.status().message());
  EXPECT_EQ(message.rfind("test: cannot load libtwo; tried:", 0), 0u) << message;
  EXPECT_NE(message.find(dir_ + "/libtwo.so: "), std::string::npos) << message;
  EXPECT_NE(message.find("Install libtwo-dev or point RAL_TEST_LIBRARY_PATH at it"),
            std::string::npos)
      << message;
}

TEST_F(DynamicLibraryTest, ALibraryThatExistsLoads) {
  unsetenv(kEnv);
  StatusOr<DynamicLibrary> lib = openDynamicLibrary("test", kEnv, {"libm.so.6"}, "libc6");
  ASSERT_TRUE(lib.ok()) << lib.status();
  EXPECT_NE(lib->handle, nullptr);
  EXPECT_EQ(lib->path, "libm.so.6");
  dlclose(lib->handle);
}

}  // namespace
}  // namespace ral::drivers
