# Runs a command and checks how it ended: cmake -DEXPECT=fail|ok -DPATTERN=<regex>
# [-DREJECT=<regex>] -P cli_expect.cmake -- <command> [args...]. EXPECT=fail needs a non-zero exit
# (a refusal must not exit 0), EXPECT=ok a zero exit; PATTERN must match stdout and stderr
# together, REJECT must not. ctest's
# PASS_REGULAR_EXPRESSION alone ignores the exit code, which is how refusals that exited 0 went
# unnoticed.
set(cmd)
set(take OFF)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE 0 ${last})
  if(take)
    list(APPEND cmd "${CMAKE_ARGV${i}}")
  elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
    set(take ON)
  endif()
endforeach()
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(EXPECT STREQUAL "fail" AND rc EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit, got 0")
elseif(EXPECT STREQUAL "ok" AND NOT rc EQUAL 0)
  message(FATAL_ERROR "expected exit 0, got ${rc}")
endif()
if(NOT out MATCHES "${PATTERN}")
  message(FATAL_ERROR "output does not match: ${PATTERN}")
endif()
if(DEFINED REJECT AND out MATCHES "${REJECT}")
  message(FATAL_ERROR "output matches what it must not: ${REJECT}")
endif()
