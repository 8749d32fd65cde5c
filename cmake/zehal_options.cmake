# Compiler options shared by every target of the project.
find_package(Threads REQUIRED)

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
