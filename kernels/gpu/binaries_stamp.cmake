# Writes a header naming the MD5 of the embedded GPU binaries (BINARIES, comma-separated), so the object
# that embeds them (with .incbin, which compiler caches cannot see) is rebuilt, never reused from
# a cache, when the device code changes.
set(all "")
string(REPLACE "," ";" binaries "${BINARIES}")
foreach(binary ${binaries})
  file(MD5 "${binary}" digest)
  string(APPEND all "${digest}")
endforeach()
string(MD5 digest "${all}")
file(WRITE "${OUT}.tmp"
     "// Generated: the MD5 of the embedded GPU binaries.\n#define RAL_GPU_BINARIES_MD5 \"${digest}\"\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
