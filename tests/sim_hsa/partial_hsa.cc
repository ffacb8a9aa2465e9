// libral_partial_hsa.so: an "HSA runtime" that exports only hsa_init and hsa_status_string, so
// the HSA driver's test can check the error for a runtime missing a symbol RAL needs.
#include <hsa/hsa.h>

extern "C" {
hsa_status_t hsa_init() { return HSA_STATUS_SUCCESS; }
hsa_status_t hsa_status_string(hsa_status_t, const char** text) {
  *text = "partial runtime";
  return HSA_STATUS_SUCCESS;
}
}
