#include "plugins/standalone/local_ranks.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace ral::cli {
namespace {

// A port nobody listens on now (the kernel's pick for a socket bound to port 0).
int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

// One of a child's output streams, forwarded by whole lines.
struct Stream {
  int fd = -1;
  int rank = 0;
  FILE* to = nullptr;
  std::string pending;
  void forward(const char* data, size_t n) {
    pending.append(data, n);
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1)
      std::fprintf(to, "[rank %d] %.*s\n", rank, static_cast<int>(nl - start),
                   pending.data() + start);
    pending.erase(0, start);
    std::fflush(to);
  }
  void flush() {
    if (!pending.empty()) std::fprintf(to, "[rank %d] %s\n", rank, pending.c_str());
    pending.clear();
    std::fflush(to);
  }
};

int exitCodeOf(int status, int rank) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    std::fprintf(stderr, "ral-run: error: rank %d was killed by signal %d (%s)\n", rank,
                 WTERMSIG(status), strsignal(WTERMSIG(status)));
    return 1;
  }
  return 1;
}

}  // namespace

std::string substituteRank(const std::string& text, int rank) {
  std::string out;
  const std::string key = "{rank}";
  size_t start = 0;
  for (size_t at; (at = text.find(key, start)) != std::string::npos; start = at + key.size())
    out += text.substr(start, at - start) + std::to_string(rank);
  return out + text.substr(start);
}

RankLaunch forkRanks(int world_size, int grace_seconds) {
  RankLaunch launch;
  launch.is_parent = true;
  const char* given_port = std::getenv("RAL_MASTER_PORT");
  const int port = given_port != nullptr ? std::atoi(given_port) : freeLoopbackPort();
  if (port <= 0) {
    std::fprintf(stderr, "ral-run: error: --world-size: no free TCP port on 127.0.0.1\n");
    launch.exit_code = 1;
    return launch;
  }
  std::vector<pid_t> pids(world_size, -1);
  std::vector<Stream> streams;
  std::fflush(stdout);
  std::fflush(stderr);
  for (int rank = 0; rank < world_size; ++rank) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
      std::perror("ral-run: error: --world-size: pipe");
      launch.exit_code = 1;
      break;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(out[1], STDOUT_FILENO);
      ::dup2(err[1], STDERR_FILENO);
      for (const Stream& s : streams) ::close(s.fd);
      ::close(out[0]);
      ::close(err[0]);
      ::setenv("RAL_RANK", std::to_string(rank).c_str(), 1);
      ::setenv("RAL_WORLD_SIZE", std::to_string(world_size).c_str(), 1);
      ::setenv("RAL_MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("RAL_MASTER_PORT", std::to_string(port).c_str(), 1);
      return RankLaunch{false, rank, 0};
    }
    ::close(out[1]);
    ::close(err[1]);
    if (pid < 0) {
      std::perror("ral-run: error: --world-size: fork");
      ::close(out[0]);
      ::close(err[0]);
      launch.exit_code = 1;
      break;
    }
    pids[rank] = pid;
    streams.push_back({out[0], rank, stdout, {}});
    streams.push_back({err[0], rank, stderr, {}});
  }

  // Forward output until every stream closed; after a failure (or a failed start), stop the
  // ranks still running once the grace period is over.
  using Clock = std::chrono::steady_clock;
  std::vector<int> codes(world_size, -1);
  bool failed = launch.exit_code != 0;
  Clock::time_point stop_at = failed ? Clock::now() : Clock::time_point::max();
  auto reap = [&](bool block) {
    for (int r = 0; r < world_size; ++r) {
      if (pids[r] <= 0 || codes[r] >= 0) continue;
      int status = 0;
      if (::waitpid(pids[r], &status, block ? 0 : WNOHANG) == pids[r]) {
        codes[r] = exitCodeOf(status, r);
        if (codes[r] != 0 && !failed) {
          failed = true;
          stop_at = Clock::now() + std::chrono::seconds(grace_seconds);
        }
      }
    }
  };
  bool stopped = false;
  while (true) {
    std::vector<pollfd> fds;
    for (const Stream& s : streams)
      if (s.fd >= 0) fds.push_back({s.fd, POLLIN, 0});
    if (fds.empty()) break;
    ::poll(fds.data(), fds.size(), 100);
    for (const pollfd& p : fds) {
      if ((p.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      for (Stream& s : streams) {
        if (s.fd != p.fd) continue;
        char buf[4096];
        const ssize_t n = ::read(s.fd, buf, sizeof(buf));
        if (n > 0) {
          s.forward(buf, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          s.flush();
          ::close(s.fd);
          s.fd = -1;
        }
      }
    }
    reap(false);
    if (failed && !stopped && Clock::now() >= stop_at) {
      for (int r = 0; r < world_size; ++r) {
        if (pids[r] > 0 && codes[r] < 0) {
          std::fprintf(stderr, "ral-run: error: stopping rank %d: another rank failed %d s ago\n",
                       r, grace_seconds);
          ::kill(pids[r], SIGKILL);
        }
      }
      stopped = true;
    }
  }
  reap(true);
  for (int r = 0; r < world_size && launch.exit_code == 0; ++r)
    if (codes[r] > 0) launch.exit_code = codes[r];
  return launch;
}

}  // namespace ral::cli
