// ral-run --world-size=N: N ranks of one job as N processes on this machine, meeting on loopback,
// for a quick check of a module that calls collectives without a launcher.
//
// forkRanks() forks one child per rank with the variables a launcher would set (RAL_RANK,
// RAL_WORLD_SIZE, RAL_MASTER_ADDR=127.0.0.1 and a free RAL_MASTER_PORT), so each child goes on
// exactly as a process started by torchrun would. The parent forwards the children's output line
// by line, prefixed with "[rank i] ", waits for them and returns their exit code. Call it before
// the process starts any thread (fork copies only the calling thread).
#ifndef RAL_PLUGINS_STANDALONE_LOCAL_RANKS_H_
#define RAL_PLUGINS_STANDALONE_LOCAL_RANKS_H_

#include <string>

namespace ral::cli {

struct RankLaunch {
  bool is_parent = false;
  int rank = 0;       // in a child
  int exit_code = 0;  // in the parent: 0, else the first failing rank's code (in rank order)
};

// `world_size` >= 2. In the parent, returns once every child ended. When a rank fails, the others
// get `grace_seconds` to end by themselves (they see the failure through their collectives),
// then are stopped; a rank killed by a signal counts as failed (exit code 1).
RankLaunch forkRanks(int world_size, int grace_seconds);

// `text` with every "{rank}" replaced by `rank`: per-rank file names.
std::string substituteRank(const std::string& text, int rank);

}  // namespace ral::cli

#endif  // RAL_PLUGINS_STANDALONE_LOCAL_RANKS_H_
