# Script mode (cmake -P): writes the SPIR-V file SPV as a uint32_t array SYMBOL in NAMESPACE,
# into the C++ source OUT. SPIR-V is a little-endian stream of 32-bit words.
file(READ ${SPV} hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR bytes "${hex_length} / 2")
math(EXPR remainder "${bytes} % 4")
if(bytes EQUAL 0 OR NOT remainder EQUAL 0)
  message(FATAL_ERROR "${SPV}: ${bytes} bytes is not a SPIR-V module")
endif()
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," words "${hex}")
string(REGEX REPLACE "((0x[0-9a-f]+u,){8})" "\\1\n    " words "${words}")
file(WRITE ${OUT}.tmp
"// Generated from ${SPV} by cmake/RalSpirvEmbed.cmake; do not edit.
#include <cstddef>
#include <cstdint>

namespace ${NAMESPACE} {
extern const uint32_t ${SYMBOL}[];
extern const size_t ${SYMBOL}_size;
const uint32_t ${SYMBOL}[] = {
    ${words}};
const size_t ${SYMBOL}_size = ${bytes};
}  // namespace ${NAMESPACE}
")
file(RENAME ${OUT}.tmp ${OUT})
