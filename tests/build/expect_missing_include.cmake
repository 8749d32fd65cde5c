# cmake -DBUILD_DIR=... -DTARGET=... -DHEADER=... -P expect_missing_include.cmake: builds a
# target that includes HEADER from a layer that must not see it; passes only when the
# build fails because HEADER is not found.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled: its layer reaches ${HEADER}")
endif()
string(FIND "${out}${err}" "${HEADER}: No such file" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${TARGET} failed for another reason than ${HEADER} being out of reach:\n${out}${err}")
endif()
