/* missing_import: imports two names nothing registers (one a typo of a real name). Loading
 * works; linking must fail, naming both. */
#include "test_module.h"

RAL_IMPORTS(RAL_IMPORT_RECV_INPUT("m1df32"), {"ral_no_such_function___cpu___pvoid___void", 0},
            {"ral_recv_inptu___cpu___pvoid_i64___m1df32", 0});

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  void* args[] = {&ctx};
  ral_imports[1].fn(ctx, args);
}
