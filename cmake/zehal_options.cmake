# Compiler options shared by every target of the project.
find_package(Threads REQUIRED)

# Hidden visibility everywhere: only what carries ZEHAL_API (the C API) leaves a shared
# library of ours.
set(CMAKE_C_VISIBILITY_PRESET hidden)
set(CMAKE_CXX_VISIBILITY_PRESET hidden)
set(CMAKE_VISIBILITY_INLINES_HIDDEN ON)

if(ZEHAL_SANITIZE)
  add_compile_options(-fsanitize=${ZEHAL_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${ZEHAL_SANITIZE})
endif()

# Warnings (and -Werror under ZEHAL_WERROR) for a target of ours.
function(zehal_target_options target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(ZEHAL_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# A shared library of ours that embeds the layers (the Python module, the Level Zero
# driver): the layers' symbols stay inside it, so two such libraries in one process never
# bind to each other's copy.
function(zehal_embed_layers target)
  target_link_libraries(${target} PRIVATE zehal::internal)
  target_link_options(${target} PRIVATE -Wl,--exclude-libs,ALL)
endfunction()
