// Gloo communicators for standalone hosts (ral/communicator.h has the contract): collectives
// over Gloo's TCP transport, ranks meeting through a rendezvous store, either a directory every
// rank reaches (Gloo's file store) or a TCP store one rank serves, configured like PyTorch's.
//
// A StandaloneContext with no communicator in its options makes one from the environment on the
// first collective (communicatorFromEnvironment), so a module runs under `torchrun`-style
// launchers unchanged:
//   RAL_RANK / RANK, RAL_WORLD_SIZE / WORLD_SIZE    this rank and the number of ranks
//   RAL_MASTER_ADDR / MASTER_ADDR (127.0.0.1), RAL_MASTER_PORT / MASTER_PORT (29500)
//                                                   the TCP store, served by rank 0
//   RAL_STORE_DIR                                   a file store instead (one fresh directory
//                                                   per job: old keys would mislead the ranks)
//   RAL_COLLECTIVE_TIMEOUT                          seconds a rendezvous or collective may take
//                                                   before it fails (default 300)
//   GLOO_SOCKET_IFNAME                              the network interface for the transport
// RAL_WORLD_SIZE=1 runs collectives on one rank (they copy). With no world size at all, a
// collective fails naming these variables rather than guess that the job has one rank.
#ifndef RAL_GLOO_COMMUNICATOR_H_
#define RAL_GLOO_COMMUNICATOR_H_

#include <chrono>
#include <memory>
#include <string>

#include "ral/communicator.h"
#include "ral/status.h"

namespace ral {

struct GlooOptions {
  int rank = 0;
  int size = 1;
  // Rendezvous: a file store in this directory when set, else the TCP store at
  // store_host:store_port, served by this process when store_server is set.
  std::string store_dir;
  std::string store_host = "127.0.0.1";
  int store_port = 29500;
  bool store_server = false;
  // Keys of this communicator in the store start with it, so one store serves several.
  std::string prefix = "ral";
  // The transport: the interface to use (empty: the address other ranks reach this host at,
  // 127.0.0.1 when the store is on loopback, else this host's name).
  std::string interface;
  std::chrono::milliseconds timeout = std::chrono::seconds(300);
};

// Connects `options.size` ranks (this one is `options.rank`); returns once every rank joined,
// or fails after the timeout naming the ranks that did not.
StatusOr<std::shared_ptr<Communicator>> createGlooCommunicator(const GlooOptions& options);

// GlooOptions from the variables above; INVALID_ARGUMENT naming a malformed one, NOT_FOUND when
// no world size is set.
StatusOr<GlooOptions> glooOptionsFromEnvironment();

// The communicator of this process's environment: made on first use and shared by every caller
// while one holds it (a process is one rank). Thread-safe.
StatusOr<std::shared_ptr<Communicator>> communicatorFromEnvironment();

// Whether this build has Gloo (RAL_ENABLE_GLOO); without it the functions above fail.
bool glooAvailable();

}  // namespace ral

#endif  // RAL_GLOO_COMMUNICATOR_H_
