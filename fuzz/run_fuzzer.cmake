# Runs one fuzz target (cmake -P). MODE=replay: every seed and regression file once. MODE=fuzz:
# libFuzzer for SECONDS on CORPUS (seeded from the seeds and regressions; FRESH=ON empties it
# first); a crash is written to CORPUS/../<target>-crash-* and fails the run.
# Inputs: FUZZER, LIBFUZZER, SEEDS, REGRESSIONS, MODE, and for fuzz SECONDS, CORPUS, FRESH.
file(GLOB seeds LIST_DIRECTORIES false ${SEEDS}/*)
file(GLOB regressions LIST_DIRECTORIES false ${REGRESSIONS}/*)
# Dot files (.gitkeep holds an empty regressions folder in git) are not inputs.
list(FILTER seeds EXCLUDE REGEX "/\\.[^/]*$")
list(FILTER regressions EXCLUDE REGEX "/\\.[^/]*$")
get_filename_component(target ${FUZZER} NAME)

if(MODE STREQUAL "replay")
  set(inputs ${seeds} ${regressions})
  list(LENGTH inputs n)
  if(n EQUAL 0)
    message(FATAL_ERROR "${target}: no seeds in ${SEEDS}")
  endif()
  if(LIBFUZZER)
    # libFuzzer runs each file named on its command line once and exits.
    execute_process(COMMAND ${FUZZER} -runs=1 ${inputs} RESULT_VARIABLE rc)
  else()
    execute_process(COMMAND ${FUZZER} ${inputs} RESULT_VARIABLE rc)
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${target}: replaying ${n} input(s) failed (${rc})")
  endif()
  message(STATUS "${target}: replayed ${n} input(s)")
  return()
endif()

if(FRESH)
  file(REMOVE_RECURSE ${CORPUS})
endif()
file(MAKE_DIRECTORY ${CORPUS})
if(seeds OR regressions)
  file(COPY ${seeds} ${regressions} DESTINATION ${CORPUS})
endif()
get_filename_component(parent ${CORPUS} DIRECTORY)
get_filename_component(name ${CORPUS} NAME)
# -timeout: one input may not run longer (a hang is a finding); -rss_limit_mb: nor use more memory.
execute_process(COMMAND ${FUZZER} -max_total_time=${SECONDS} -timeout=30 -rss_limit_mb=4096 -print_final_stats=1
                        -artifact_prefix=${parent}/${name}- ${CORPUS} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${target}: finding (${rc}); the reproducer is ${parent}/${name}-crash-*: copy it into "
                      "${REGRESSIONS}/ with a name that says what it caught")
endif()
