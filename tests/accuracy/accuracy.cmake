# Registers the accuracy sweep's sample run (tests/accuracy/sweep.py) with ctest; included from the root CMakeLists.txt.
# The test runs a subset of the full sweep's points through `evoxc run` and fails when an op's
# measured error exceeds the bound docs/semantics.md's accuracy table states for it. It needs
# the project's virtual environment (numpy, mpmath: requirements.txt), which `make` sets up.
if(EVOXC_BUILD_TESTS AND TARGET evoxc_cli)
  add_test(NAME accuracy.sweep_sample
           COMMAND ${PROJECT_SOURCE_DIR}/.venv/bin/python ${PROJECT_SOURCE_DIR}/tests/accuracy/sweep.py
                   --evoxc $<TARGET_FILE:evoxc_cli> --jobs 2)
  set_tests_properties(accuracy.sweep_sample PROPERTIES TIMEOUT 180 LABELS accuracy)
endif()
