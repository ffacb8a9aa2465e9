// Output files (ral/file_writer.h): what a tool may replace, what it must refuse, and that nothing
// is left behind. Every special file here is made in a temporary directory of the test's own
// (FIFOs, sockets, and as root a device node with /dev/null's numbers and files of another user):
// were the rules broken, the test would replace its own copies, never the machine's.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ral/file_writer.h"
#include "ral/module_builder.h"

namespace ral {
namespace {

// A user id other than ours, for files that belong to someone else (root only can chown).
constexpr uid_t kOtherUser = 65534;  // nobody

class OutputFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/ral-output-files-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    const std::string command = "rm -rf '" + dir_ + "'";
    EXPECT_EQ(std::system(command.c_str()), 0);
  }

  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  static void writePlain(const std::string& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  }
  static std::string read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // The names in the directory, sorted: what a failed or finished write left there.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    const std::string command = "ls -A '" + dir_ + "'";
    if (std::FILE* p = popen(command.c_str(), "r")) {
      char line[512];
      while (std::fgets(line, sizeof(line), p)) {
        std::string name(line);
        if (!name.empty() && name.back() == '\n') name.pop_back();
        names.push_back(name);
      }
      pclose(p);
    }
    return names;
  }

  // Refused with InvalidArgument naming `what`, leaving the directory as it was.
  void expectRefused(const std::string& target, const std::string& what) {
    const std::vector<std::string> before = entries();
    const Status checked = checkOutputFile(target);
    EXPECT_EQ(checked.code(), StatusCode::kInvalidArgument) << checked.toString();
    EXPECT_NE(checked.toString().find(what), std::string::npos) << checked.toString();
    const Status written = writeFileAtomically(target, "new", 3);
    EXPECT_EQ(written.code(), StatusCode::kInvalidArgument) << written.toString();
    EXPECT_EQ(entries(), before) << "a refused write left a file behind";
  }

  std::string dir_;
};

TEST_F(OutputFilesTest, NewAndRegularFiles) {
  const std::string out = path("out.bin");
  ASSERT_TRUE(writeFileAtomically(out, "first", 5).ok());
  EXPECT_EQ(read(out), "first");
  ASSERT_EQ(chmod(out.c_str(), 0640), 0);
  ASSERT_TRUE(writeFileAtomically(out, "second", 6).ok());
  EXPECT_EQ(read(out), "second");
  struct stat st {};
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u) << "the replaced file's permissions are kept";
  EXPECT_EQ(entries(), std::vector<std::string>{"out.bin"}) << "no temporary file is left";
  // A new file gets 0666 less the umask, like any other.
  const mode_t mask = umask(027);
  ASSERT_TRUE(writeFileAtomically(path("masked"), "x", 1).ok());
  umask(mask);
  ASSERT_EQ(stat(path("masked").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST_F(OutputFilesTest, SpecialFilesAreRefused) {
  ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
  expectRefused(path("fifo"), "is a FIFO");
  ASSERT_EQ(mkdir(path("dir").c_str(), 0700), 0);
  expectRefused(path("dir"), "is a directory");
  // A socket, bound here.
  const int s = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof(address.sun_path), "%s", path("socket").c_str());
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  expectRefused(path("socket"), "is a socket");
  close(s);
  // Missing directories, and an empty path.
  EXPECT_EQ(checkOutputFile(path("missing/out")).code(), StatusCode::kNotFound);
  EXPECT_EQ(checkOutputFile("").code(), StatusCode::kInvalidArgument);
  // The FIFO is still a FIFO: nothing was renamed over it.
  struct stat st {};
  ASSERT_EQ(lstat(path("fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(OutputFilesTest, DeviceNodesAreRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "mknod of a character device needs root";
  // A node with /dev/null's numbers: what `-o /dev/null` is, in a place the test owns.
  struct stat null_st {};
  ASSERT_EQ(stat("/dev/null", &null_st), 0);
  const std::string node = path("null");
  if (mknod(node.c_str(), S_IFCHR | 0666, null_st.st_rdev) != 0)
    GTEST_SKIP() << "mknod refused here (a container without CAP_MKNOD): " << std::strerror(errno);
  expectRefused(node, "is a character device");
  // Through a link too.
  ASSERT_EQ(symlink(node.c_str(), path("link-to-null").c_str()), 0);
  expectRefused(path("link-to-null"), "which is a character device");
  struct stat st {};
  ASSERT_EQ(lstat(node.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device node was replaced";
  EXPECT_EQ(st.st_rdev, null_st.st_rdev);
  // ModuleBuilder::writeFile (ral-pack, ral-compile) refuses it before building anything.
  const Status built = ModuleBuilder("m").writeFile(node);
  EXPECT_EQ(built.code(), StatusCode::kInvalidArgument) << built.toString();
}

TEST_F(OutputFilesTest, LinksAreWrittenThroughOnlyToOwnRegularFiles) {
  // To one's own regular file: the target is replaced, the link stays a link.
  writePlain(path("target"), "old");
  ASSERT_EQ(symlink("target", path("link").c_str()), 0);
  ASSERT_TRUE(writeFileAtomically(path("link"), "new", 3).ok());
  EXPECT_EQ(read(path("target")), "new");
  struct stat st {};
  ASSERT_EQ(lstat(path("link").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link itself was replaced";
  // A dangling link would create a file wherever it points.
  ASSERT_EQ(symlink(path("nowhere").c_str(), path("dangling").c_str()), 0);
  expectRefused(path("dangling"), "is a symbolic link to a missing file");
  EXPECT_NE(access(path("nowhere").c_str(), F_OK), 0);
  // To a FIFO.
  ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
  ASSERT_EQ(symlink("fifo", path("link-to-fifo").c_str()), 0);
  expectRefused(path("link-to-fifo"), "which is a FIFO");
}

TEST_F(OutputFilesTest, LinksToOtherUsersFilesAreRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "a file of another user can only be made by root (chown)";
  // A link planted in a shared directory, pointing at a file of someone else.
  const std::string theirs = path("theirs");
  writePlain(theirs, "precious");
  ASSERT_EQ(chown(theirs.c_str(), kOtherUser, kOtherUser), 0);
  ASSERT_EQ(symlink(theirs.c_str(), path("planted").c_str()), 0);
  expectRefused(path("planted"), "belongs to user 65534");
  EXPECT_EQ(read(theirs), "precious");
  // Named directly, another user's file is replaced (as `mv` would), and stays theirs.
  ASSERT_TRUE(writeFileAtomically(theirs, "replaced", 8).ok());
  struct stat st {};
  ASSERT_EQ(stat(theirs.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kOtherUser);
  EXPECT_EQ(read(theirs), "replaced");
}

TEST_F(OutputFilesTest, PredictableNamesAreNotUsed) {
  // What the writer used to create: <path>.partial, here a link an attacker planted to a file of
  // the test's. The write must neither follow it nor fail because of it.
  writePlain(path("victim"), "intact");
  ASSERT_EQ(symlink(path("victim").c_str(), path("out.ralm.partial").c_str()), 0);
  ASSERT_TRUE(writeFileAtomically(path("out.ralm"), "module", 6).ok());
  EXPECT_EQ(read(path("victim")), "intact");
  EXPECT_EQ(read(path("out.ralm")), "module");
}

TEST_F(OutputFilesTest, DiscardedFilesLeaveNothing) {
  {
    OutputFile file;
    ASSERT_TRUE(file.open(path("out")).ok());
    ASSERT_TRUE(file.write("abc", 3).ok());
    EXPECT_EQ(entries().size(), 1u);  // the temporary file
  }
  EXPECT_TRUE(entries().empty()) << "an uncommitted output was left behind";
  // The path turned into a FIFO while the data was written: refused at commit, nothing left.
  OutputFile file;
  ASSERT_TRUE(file.open(path("out")).ok());
  ASSERT_TRUE(file.write("abc", 3).ok());
  ASSERT_EQ(mkfifo(path("out").c_str(), 0600), 0);
  const Status committed = file.commit();
  EXPECT_EQ(committed.code(), StatusCode::kInvalidArgument) << committed.toString();
  EXPECT_EQ(entries(), std::vector<std::string>{"out"});
}

}  // namespace
}  // namespace ral
