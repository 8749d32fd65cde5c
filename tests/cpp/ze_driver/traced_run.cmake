# Runs PROGRAM as `zehal trace` runs a command (ZEHAL_TRACE_OUTPUT=OUTPUT) and checks its rank
# file: the driver's trace recorded its calls and its device's commands, and was finished at
# exit. Each of EXPECT (a ;-list) must appear in the file.
#   cmake -DPROGRAM=... -DOUTPUT=.../run.pftrace -DEXPECT="a;b" -P traced_run.cmake
file(REMOVE_RECURSE "${OUTPUT}.ranks")
get_filename_component(folder "${OUTPUT}" DIRECTORY)
file(MAKE_DIRECTORY "${folder}")
# The sim device whole (its compute engines too), whose tracks EXPECT names.
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=_ZEHAL_TRACE_ACTIVE_PID --unset=ZEHAL_SIM_COMPUTE_ENGINES
  ZEHAL_TRACE_OUTPUT=${OUTPUT} ${PROGRAM}
  RESULT_VARIABLE status TIMEOUT 120)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} failed under the trace: ${status}")
endif()
set(rank_file "${OUTPUT}.ranks/rank-00000.pftrace")
if(NOT EXISTS "${rank_file}")
  message(FATAL_ERROR "no rank file ${rank_file}")
endif()
file(READ "${rank_file}" data HEX)
foreach(text IN LISTS EXPECT ITEMS zehal.end)
  string(HEX "${text}" hex)
  string(FIND "${data}" "${hex}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${rank_file} lacks \"${text}\"")
  endif()
endforeach()
