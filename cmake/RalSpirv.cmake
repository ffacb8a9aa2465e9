# Compute shaders: GLSL compiled to SPIR-V by glslc at build time and embedded in libral.so.
#
# ral_spirv_sources(<out_var> NAMESPACE <c++ namespace> SHADERS a.comp b.comp ...)
# compiles each shader to <binary dir>/<name>.spv and generates <name>.spv.cc defining
#   namespace <ns> { extern const uint32_t <name>[]; extern const size_t <name>_size; }
# (the name is the file name without extension, '-' and '.' replaced by '_'; _size in bytes).
# <out_var> receives the generated sources, to be added to a component.

function(ral_spirv_sources out_var)
  set(embed_script ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/RalSpirvEmbed.cmake)
  cmake_parse_arguments(ARG "" "NAMESPACE" "SHADERS" ${ARGN})
  set(generated)
  foreach(shader ${ARG_SHADERS})
    get_filename_component(src ${shader} ABSOLUTE)
    get_filename_component(stem ${shader} NAME_WE)
    string(REGEX REPLACE "[-.]" "_" symbol ${stem})
    set(spv ${CMAKE_CURRENT_BINARY_DIR}/spirv/${stem}.spv)
    set(cc ${CMAKE_CURRENT_BINARY_DIR}/spirv/${stem}.spv.cc)
    add_custom_command(
      OUTPUT ${spv}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/spirv
      COMMAND ${RAL_GLSLC} -fshader-stage=compute --target-env=vulkan1.2 -O -Werror
              -MD -MF ${spv}.d -o ${spv} ${src}
      DEPENDS ${src}
      DEPFILE ${spv}.d
      COMMENT "glslc ${shader}")
    add_custom_command(
      OUTPUT ${cc}
      COMMAND ${CMAKE_COMMAND} -DSPV=${spv} -DOUT=${cc} -DSYMBOL=${symbol}
              -DNAMESPACE=${ARG_NAMESPACE} -P ${embed_script}
      DEPENDS ${spv} ${embed_script}
      COMMENT "embedding ${stem}.spv")
    list(APPEND generated ${cc})
  endforeach()
  set(${out_var} ${generated} PARENT_SCOPE)
endfunction()
