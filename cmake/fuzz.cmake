# Fuzz targets for every parser of outside input (safetensors, config.json, tokenizer.json, HTTP
# bodies). A target is one source file defining LLVMFuzzerTestOneInput plus a seed corpus folder.
#
# mlaspec_add_fuzzer(NAME <name> SOURCE <file> CORPUS <dir> LIBS <targets...>)
#   Every build: <name>_replay, the target linked with fuzz/replay_main.cc, runs every seed and a
#   fixed number of deterministic mutations of each (ctest fuzz_replay.<name>, label cpu; under the
#   ASan build too). No clang needed.
#   With -DMLASPEC_FUZZ=ON (clang; configure a separate build dir, see scripts/fuzz.sh): the real
#   libFuzzer binary <name>_fuzzer with ASan + UBSan, and ctest fuzz.<name> (label fuzz) running
#   it for MLASPEC_FUZZ_SECONDS on a scratch copy of the corpus.
option(MLASPEC_FUZZ "Build the libFuzzer targets (needs clang)" OFF)
set(MLASPEC_FUZZ_SECONDS 20 CACHE STRING "Seconds each ctest fuzz.<name> run lasts")

if(MLASPEC_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "MLASPEC_FUZZ=ON needs clang (configure with -DCMAKE_CXX_COMPILER=clang++)")
  endif()
  # Coverage instrumentation for everything the fuzzers link; the fuzzer main only in the targets.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
add_custom_target(mlaspec_fuzzers)

function(mlaspec_add_fuzzer)
  cmake_parse_arguments(F "" "NAME;SOURCE;CORPUS" "LIBS" ${ARGN})
  add_executable(${F_NAME}_replay ${F_SOURCE} ${PROJECT_SOURCE_DIR}/fuzz/replay_main.cc)
  target_link_libraries(${F_NAME}_replay PRIVATE ${F_LIBS})
  add_test(NAME fuzz_replay.${F_NAME} COMMAND ${F_NAME}_replay ${F_CORPUS})
  set_tests_properties(fuzz_replay.${F_NAME} PROPERTIES LABELS cpu)
  if(MLASPEC_FUZZ)
    add_executable(${F_NAME}_fuzzer ${F_SOURCE})
    target_link_libraries(${F_NAME}_fuzzer PRIVATE ${F_LIBS})
    target_link_options(${F_NAME}_fuzzer PRIVATE -fsanitize=fuzzer)
    add_dependencies(mlaspec_fuzzers ${F_NAME}_fuzzer)
    # libFuzzer adds what it finds to the first corpus dir: work on a scratch copy so the run
    # never edits the committed seeds.
    set(scratch ${CMAKE_CURRENT_BINARY_DIR}/${F_NAME}_corpus)
    add_test(NAME fuzz.${F_NAME}
             COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1
                     sh -c "rm -rf '${scratch}' && mkdir -p '${scratch}' && \
cp -r '${F_CORPUS}/.' '${scratch}/' && \
exec '$<TARGET_FILE:${F_NAME}_fuzzer>' -max_total_time=${MLASPEC_FUZZ_SECONDS} \
-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 '${scratch}'")
    set_tests_properties(fuzz.${F_NAME} PROPERTIES LABELS fuzz)
  endif()
endfunction()
