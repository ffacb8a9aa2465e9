// ral/gloo_communicator.h in a build without Gloo (RAL_ENABLE_GLOO=OFF): every way to make a
// Gloo communicator says so.
#include "ral/gloo_communicator.h"

namespace ral {

bool glooAvailable() { return false; }

StatusOr<std::shared_ptr<Communicator>> createGlooCommunicator(const GlooOptions& options) {
  return unsupported("rank ", options.rank, " of ", options.size,
                     ": this RAL was built without Gloo (RAL_ENABLE_GLOO=OFF; install libgloo-dev "
                     "and reconfigure), so it has no transport between processes");
}

}  // namespace ral
