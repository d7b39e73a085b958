# Runs one mlaspec command line and checks its exit code and output (ctest cannot check an exit
# code other than zero by itself).
#   cmake -DEXE=mlaspec -DARGS="a;b" -DCODE=2 -DEXPECT=regex -P run_cli.cmake
execute_process(COMMAND ${EXE} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL CODE)
  message(FATAL_ERROR "exit code ${rc}, expected ${CODE}\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "output does not match '${EXPECT}'\nstdout: ${out}\nstderr: ${err}")
endif()
