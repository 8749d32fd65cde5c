# One static library per layer, each compiled with only the include roots of the layers
# below it, so that an upward include (hal -> aml, a backend -> the registry, ...) does not
# compile. The sources keep their include paths ("hal/device.hpp", "aml/area.hpp"): every
# layer gets an include root of its own under ${ZEHAL_ROOTS}, holding symbolic links to
# just that layer's headers or folder (file links for the hal core, whose folder also holds
# the backends and the registry).
set(ZEHAL_ROOTS ${CMAKE_CURRENT_BINARY_DIR}/zehal_include_roots)

# zehal_layer_link(<target> <path in the include root> <file or folder it names>)
function(zehal_layer_link target path source)
  set(link ${ZEHAL_ROOTS}/${target}/${path})
  get_filename_component(parent ${link} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  if(NOT IS_SYMLINK ${link})
    file(CREATE_LINK ${source} ${link} SYMBOLIC)
  endif()
endfunction()

# zehal_add_layer(<target> SOURCES ... [DEPENDS <layer targets>...] [OWN_OPTIONS]): a static
# layer library whose include root (given by zehal_layer_link) is public to the layers above
# it. Its symbols keep default visibility: the core library (libzehal_core.so) that holds
# every layer exports them to the Python module, libzehal.so and the driver built with it.
# OWN_OPTIONS: the layer adds compile options of its own, so it does not share the standard
# library's precompiled header (zehal_use_std_pch).
function(zehal_add_layer target)
  cmake_parse_arguments(ARG "OWN_OPTIONS" "" "SOURCES;DEPENDS" ${ARGN})
  add_library(${target} STATIC ${ARG_SOURCES})
  file(MAKE_DIRECTORY ${ZEHAL_ROOTS}/${target})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${ZEHAL_ROOTS}/${target}>)
  target_link_libraries(${target} PUBLIC ${ARG_DEPENDS})
  set_target_properties(${target} PROPERTIES C_VISIBILITY_PRESET default CXX_VISIBILITY_PRESET default
    VISIBILITY_INLINES_HIDDEN OFF)
  zehal_target_options(${target})
  if(NOT ARG_OWN_OPTIONS)
    zehal_use_std_pch(${target})
  endif()
endfunction()

# zehal_add_capi(<target> SOURCES ... LAYER <layer target>): a layer's C API, a static library
# that libzehal.so embeds. It sees the layer's headers and links nothing: the layer's code
# comes from the core library.
function(zehal_add_capi target)
  cmake_parse_arguments(ARG "" "LAYER" "SOURCES" ${ARGN})
  add_library(${target} STATIC ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE $<COMPILE_ONLY:${ARG_LAYER}>)
  zehal_target_options(${target})
  zehal_use_std_pch(${target})
endfunction()
