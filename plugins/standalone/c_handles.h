// What the C API's source files share: the communicator handle and how a failure becomes a
// return code and ral_last_error()'s message.
#ifndef RAL_PLUGINS_STANDALONE_C_HANDLES_H_
#define RAL_PLUGINS_STANDALONE_C_HANDLES_H_

#include <memory>

#include "ral/communicator.h"
#include "ral/status.h"

struct ral_communicator {
  std::shared_ptr<ral::Communicator> communicator;
};

namespace ral::c_api {

// RAL_OK for OK; otherwise the status code, with the message kept for ral_last_error().
int report(const Status& s);
// INVALID_ARGUMENT "<what> is NULL".
int nullArgument(const char* what);

}  // namespace ral::c_api

#endif  // RAL_PLUGINS_STANDALONE_C_HANDLES_H_
