/* missing_import: imports two names nothing registers (one a typo of a real name). Loading
 * works; linking must fail, naming both. */
#include "test_module.h"

RAL_MODULE_EXPORT ral_import ral_imports[] = {
    {"ral_recv_input___cpu___pvoid_i64___m1df32", 0},
    {"ral_no_such_function___cpu___pvoid___void", 0},
    {"ral_recv_inptu___cpu___pvoid_i64___m1df32", 0},
};
RAL_MODULE_EXPORT uint32_t ral_import_count = 3;

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  void* args[] = {&ctx};
  ral_imports[1].fn(ctx, args);
}
