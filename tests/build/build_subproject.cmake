# Configures, builds and runs tests/build/subproject, which adds zehal with add_subdirectory.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${BINARY} -G ${GENERATOR}
  -DZEHAL_SOURCE=${ZEHAL_SOURCE} -DCMAKE_BUILD_TYPE=Release RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the subproject failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY} -j2 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the subproject failed")
endif()
execute_process(COMMAND ${BINARY}/uses_zehal RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the subproject's program failed: ${rc}")
endif()
