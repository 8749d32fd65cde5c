# Build-time SPIR-V for tests and benchmarks: OpenCL C sources compiled by clang-15
# (-cl-std=CL1.2 unless told, -target spir64) and llvm-spirv-15, build-time tools only.
#
# zehal_add_spirv_kernels(<target> [STD CL2.0] [CLANG_FLAGS ...] [SPIRV_FLAGS ...]
# SOURCES a.cl b.cl ...) adds the custom target <target> that writes <name>.spv for every
# source into ZEHAL_SPIRV_KERNEL_DIR (<build>/kernels); STD is the OpenCL C version
# (-cl-std, CL1.2 unless given), CLANG_FLAGS more options of clang (-cl-ext=...),
# SPIRV_FLAGS more options of llvm-spirv (--spirv-ext=...).
# zehal_use_spirv_kernels(<consumer> <target>) makes a test or benchmark depend on them
# and gives it ZEHAL_SPIRV_KERNEL_DIR="<that folder>" as a compile definition.
# ZEHAL_SPIRV_TOOLS_FOUND is OFF when the tools are missing; then <target> is not created
# and zehal_use_spirv_kernels does nothing.
set(ZEHAL_SPIRV_KERNEL_DIR ${CMAKE_BINARY_DIR}/kernels)
find_program(ZEHAL_CLANG_CL NAMES clang-15 HINTS /usr/lib/llvm-15/bin)
find_program(ZEHAL_LLVM_SPIRV NAMES llvm-spirv-15 llvm-spirv HINTS /usr/lib/llvm-15/bin)
if(ZEHAL_CLANG_CL AND ZEHAL_LLVM_SPIRV)
  set(ZEHAL_SPIRV_TOOLS_FOUND ON)
else()
  set(ZEHAL_SPIRV_TOOLS_FOUND OFF)
endif()

function(zehal_add_spirv_kernels target)
  cmake_parse_arguments(ARG "" "STD" "SOURCES;CLANG_FLAGS;SPIRV_FLAGS" ${ARGN})
  if(NOT ZEHAL_SPIRV_TOOLS_FOUND)
    return()
  endif()
  if(NOT ARG_STD)
    set(ARG_STD CL1.2)
  endif()
  file(MAKE_DIRECTORY ${ZEHAL_SPIRV_KERNEL_DIR})
  set(outputs "")
  foreach(source IN LISTS ARG_SOURCES)
    get_filename_component(name ${source} NAME_WE)
    get_filename_component(path ${source} ABSOLUTE)
    set(bc ${CMAKE_CURRENT_BINARY_DIR}/${name}.bc)
    set(spv ${ZEHAL_SPIRV_KERNEL_DIR}/${name}.spv)
    add_custom_command(OUTPUT ${spv}
      COMMAND ${ZEHAL_CLANG_CL} -cl-std=${ARG_STD} ${ARG_CLANG_FLAGS} -target spir64 -emit-llvm -c ${path} -o ${bc}
      COMMAND ${ZEHAL_LLVM_SPIRV} ${ARG_SPIRV_FLAGS} ${bc} -o ${spv}
      DEPENDS ${path} VERBATIM COMMENT "SPIR-V kernel ${name}.spv")
    list(APPEND outputs ${spv})
  endforeach()
  add_custom_target(${target} ALL DEPENDS ${outputs})
endfunction()

function(zehal_use_spirv_kernels consumer target)
  if(TARGET ${target})
    add_dependencies(${consumer} ${target})
    target_compile_definitions(${consumer} PRIVATE ZEHAL_SPIRV_KERNEL_DIR="${ZEHAL_SPIRV_KERNEL_DIR}")
  endif()
endfunction()
