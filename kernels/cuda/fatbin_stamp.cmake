# Writes a header naming the fatbin's MD5, so the object that embeds it (with .incbin, which
# compiler caches cannot see) is rebuilt, never reused from a cache, when the device code changes.
file(MD5 "${FATBIN}" digest)
file(WRITE "${OUT}.tmp" "// Generated: the MD5 of the embedded fatbin.\n#define RAL_CUDA_FATBIN_MD5 \"${digest}\"\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
