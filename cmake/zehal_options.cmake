# Compiler options shared by every target of the project.
find_package(Threads REQUIRED)

# Hidden visibility everywhere: only what carries ZEHAL_API (the C API) leaves a shared
# library of ours.
set(CMAKE_C_VISIBILITY_PRESET hidden)
set(CMAKE_CXX_VISIBILITY_PRESET hidden)
set(CMAKE_VISIBILITY_INLINES_HIDDEN ON)

if(ZEHAL_SANITIZE)
  add_compile_options(-fsanitize=${ZEHAL_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  # UBSan's vptr check reads an object's type information, which the compiler layer's objects
  # (built without RTTI, as libLLVM is) do not have: every shared_ptr they own would be
  # reported. The other undefined-behaviour checks stay.
  if(ZEHAL_SANITIZE MATCHES "undefined")
    add_compile_options(-fno-sanitize=vptr)
  endif()
  add_link_options(-fsanitize=${ZEHAL_SANITIZE})
endif()

# Warnings (and -Werror under ZEHAL_WERROR) for a target of ours.
function(zehal_target_options target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(ZEHAL_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# A shared library or module of ours over the core library (the Python module): it links
# the core, which it finds in its own folder or in `subdir` below it once installed.
# --exclude-libs keeps any static library it embeds to itself.
function(zehal_link_core target)
  cmake_parse_arguments(ARG "" "SUBDIR" "" ${ARGN})
  target_link_libraries(${target} PRIVATE zehal::internal)
  target_link_options(${target} PRIVATE -Wl,--exclude-libs,ALL)
  zehal_runpath_origin(${target} ${ARG_SUBDIR})
endfunction()

# The Level Zero driver: a copy of the layers of its own, kept to itself (--exclude-libs
# makes every symbol of the static layers local), so it never binds to the core library
# that the same process may hold (docs/build.md, "Why the driver keeps its own copy").
function(zehal_embed_layers target)
  target_link_libraries(${target} PRIVATE zehal_layers_static)
  target_link_options(${target} PRIVATE -Wl,--exclude-libs,ALL)
endfunction()

# Installed, `target` finds the libraries it needs in its own folder (or `subdir` below it).
function(zehal_runpath_origin target)
  set(path "$ORIGIN")
  if(ARGN)
    set(path "$ORIGIN/${ARGN}")
  endif()
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "${path}")
endfunction()

# One precompiled header of the standard library for the layers and the libraries built from
# them (parsing it is about half of a typical source file's compile time): made by the first
# target that asks, reused by the others, whose compile options are the same. A target with
# options of its own (the compiler layer: no RTTI, LLVM's definitions) goes without.
function(zehal_use_std_pch target)
  get_property(owner GLOBAL PROPERTY ZEHAL_STD_PCH)
  if(owner)
    target_precompile_headers(${target} REUSE_FROM ${owner})
  else()
    target_precompile_headers(${target} PRIVATE <algorithm> <array> <atomic> <chrono> <condition_variable>
      <cstdint> <cstring> <deque> <functional> <map> <memory> <mutex> <optional> <shared_mutex> <span> <string>
      <string_view> <thread> <unordered_map> <utility> <vector>)
    set_property(GLOBAL PROPERTY ZEHAL_STD_PCH ${target})
  endif()
endfunction()
