// The integrity check of a module file's manifest. Code and constants carry checksums of their
// bytes; the manifest checksum covers everything else (name, entry, ABI version, signatures,
// imports, executable and constant descriptions) together with those payload checksums, so any
// damaged byte of a module file is caught when it loads. Not cryptographic: it detects
// corruption, not an attacker who can rewrite the file (who could rewrite the code anyway).
#ifndef RAL_RAL_MANIFEST_CHECKSUM_H_
#define RAL_RAL_MANIFEST_CHECKSUM_H_

#include <cstddef>
#include <cstdint>

#include "ral/status.h"

namespace ral {
namespace fb {
struct Module;
}  // namespace fb

namespace internal {

// The checksum of every field of `module` except manifest_checksum itself. `module` must have
// passed the FlatBuffers verifier. Never 0 (0 means "no checksum": files from before it existed).
uint64_t manifestChecksum(const fb::Module& module);

// Rewrites the manifest checksum of a size-prefixed module buffer in place, after the buffer was
// edited (the builder seals what it built; tests and the fuzzer reseal what they changed).
// InvalidArgument when the buffer does not verify or has no manifest_checksum field.
Status resealManifest(uint8_t* data, size_t size);

}  // namespace internal
}  // namespace ral

#endif  // RAL_RAL_MANIFEST_CHECKSUM_H_
