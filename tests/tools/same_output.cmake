# Runs two mlaspec command lines and checks that both succeed with the same stdout, after
# dropping JSON fields that measure time (`--json` output of generate).
#   cmake -DEXE=mlaspec -DARGS_A="a;b" -DARGS_B="c;d" -P same_output.cmake
foreach(side A B)
  execute_process(COMMAND ${EXE} ${ARGS_${side}} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${ARGS_${side}}: exit code ${rc}\nstdout: ${out}\nstderr: ${err}")
  endif()
  string(REGEX REPLACE "\"[a-z_]*(seconds|per_second)\":[-+0-9.eE]+" "" out "${out}")
  set(out_${side} "${out}")
endforeach()
if(NOT out_A STREQUAL out_B)
  message(FATAL_ERROR "outputs differ\n${ARGS_A}:\n${out_A}\n${ARGS_B}:\n${out_B}")
endif()
message(STATUS "same output: ${out_A}")
