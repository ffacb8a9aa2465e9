// glooOptionsFromEnvironment and communicatorFromEnvironment (ral/gloo_communicator.h): a rank's
// communicator from the variables launchers such as torchrun set.
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <string>

#include "ral/gloo_communicator.h"

namespace ral {
namespace {

// The first of `names` that is set, or null.
const char* firstSet(std::initializer_list<const char*> names, const char** which) {
  for (const char* name : names) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') {
      *which = name;
      return v;
    }
  }
  return nullptr;
}

StatusOr<long long> parseInteger(const char* name, const char* text, long long low,
                                 long long high) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < low || v > high)
    return invalidArgument(name, "='", text, "' is not an integer in [", low, ", ", high, "]");
  return v;
}

}  // namespace

StatusOr<GlooOptions> glooOptionsFromEnvironment() {
  GlooOptions o;
  const char* which = nullptr;
  const char* size = firstSet({"RAL_WORLD_SIZE", "WORLD_SIZE"}, &which);
  if (size == nullptr)
    return notFound(
        "no world size: set RAL_WORLD_SIZE (or WORLD_SIZE, as torchrun does) and RAL_RANK (or "
        "RANK), with RAL_MASTER_ADDR/RAL_MASTER_PORT or RAL_STORE_DIR for the rendezvous; "
        "RAL_WORLD_SIZE=1 runs collectives on one rank");
  RAL_ASSIGN_OR_RETURN(long long n, parseInteger(which, size, 1, 1 << 20));
  o.size = static_cast<int>(n);
  if (const char* rank = firstSet({"RAL_RANK", "RANK"}, &which)) {
    RAL_ASSIGN_OR_RETURN(long long r, parseInteger(which, rank, 0, o.size - 1));
    o.rank = static_cast<int>(r);
  } else if (o.size > 1) {
    return notFound("the world size is ", o.size, " but no rank is set (RAL_RANK or RANK)");
  }
  if (const char* dir = firstSet({"RAL_STORE_DIR"}, &which)) o.store_dir = dir;
  if (const char* addr = firstSet({"RAL_MASTER_ADDR", "MASTER_ADDR"}, &which)) o.store_host = addr;
  if (const char* port = firstSet({"RAL_MASTER_PORT", "MASTER_PORT"}, &which)) {
    RAL_ASSIGN_OR_RETURN(long long p, parseInteger(which, port, 1, 65535));
    o.store_port = static_cast<int>(p);
  }
  o.store_server = o.rank == 0;
  if (const char* seconds = firstSet({"RAL_COLLECTIVE_TIMEOUT"}, &which)) {
    RAL_ASSIGN_OR_RETURN(long long s, parseInteger(which, seconds, 1, 7 * 24 * 3600));
    o.timeout = std::chrono::seconds(s);
  }
  if (const char* iface = firstSet({"GLOO_SOCKET_IFNAME"}, &which)) o.interface = iface;
  // A restarted job (torchelastic's run id) must not meet the keys of the one before.
  if (const char* run = firstSet({"TORCHELASTIC_RUN_ID"}, &which))
    o.prefix += "/" + std::string(run);
  return o;
}

StatusOr<std::shared_ptr<Communicator>> communicatorFromEnvironment() {
  static std::mutex mutex;
  static std::weak_ptr<Communicator> current;
  static int generation = 0;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto c = current.lock()) return c;
  RAL_ASSIGN_OR_RETURN(GlooOptions o, glooOptionsFromEnvironment());
  std::shared_ptr<Communicator> c;
  if (o.size == 1) {
    c = singleRankCommunicator();
  } else {
    // Every rank makes the same sequence of communicators, so the generation tells a new
    // rendezvous from the keys an earlier one left in the store. A failed rendezvous is tried
    // again under the same generation.
    o.prefix += "/" + std::to_string(generation);
    RAL_ASSIGN_OR_RETURN(c, createGlooCommunicator(o));
    ++generation;
  }
  current = c;
  return c;
}

}  // namespace ral
