# The transforms checked against JAX: jax_fixtures writes evoxc's results, jax_check.py recomputes them with JAX.
# Included from the root CMakeLists.txt (release builds only). Needs jax in ${PROJECT_SOURCE_DIR}/.venv; without
# it the test reports SKIPPED (exit code 77) with the command that installs it, and never passes.
add_executable(jax_fixtures ${CMAKE_CURRENT_LIST_DIR}/jax_fixtures.cpp)
target_link_libraries(jax_fixtures PRIVATE evoxc)
set_target_properties(jax_fixtures PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)

if(EVOXC_BUILD_TESTS)
  # sh -c script, then $0 = a name, $1 = the fixture program, $2 = the folder, $3 = python, $4 = jax_check.py.
  # The jax probe runs first, so a machine without jax skips before writing any fixture.
  set(_jax_script [=[
if [ ! -x "$3" ]; then
  echo "SKIPPED: $3 does not exist; run 'make venv' (or python3 -m venv .venv), then '$3 -m pip install -r requirements.txt'"
  exit 77
fi
"$3" "$4" --probe || exit $?
"$1" "$2" > "$2.log" 2>&1 || { cat "$2.log"; exit 1; }
exec "$3" "$4" "$2"
]=])
  add_test(NAME transforms.jax_crosscheck
           COMMAND sh -c "${_jax_script}" jax_check $<TARGET_FILE:jax_fixtures> ${CMAKE_BINARY_DIR}/tests/jax_crosscheck
                   ${PROJECT_SOURCE_DIR}/.venv/bin/python ${CMAKE_CURRENT_LIST_DIR}/jax_check.py)
  set_tests_properties(transforms.jax_crosscheck PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS jax)
endif()
