# Installs this build tree into a fresh prefix and builds the programs of examples/external/ against it, as a user
# outside the project would: the C++ one through find_package(evoxc), the C one through pkg-config. Runs both.
# cmake -DBUILD=<build dir> -DSRC=<repo> -DWORK=<scratch dir> -DGENERATOR=<generator> -DHAS_MLIR=ON|OFF -DHAS_XLA=ON|OFF
#       -P out_of_tree.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "$ ${ARGN}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

step(${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
foreach(f include/evoxc/c_api.h include/evoxc/evoxc.h lib/cmake/evoxc/evoxcConfig.cmake lib/pkgconfig/evoxc.pc)
  if(NOT EXISTS ${WORK}/prefix/${f})
    message(FATAL_ERROR "the install has no ${f}")
  endif()
endforeach()

# C++: find_package(evoxc) from the installed prefix only.
step(${CMAKE_COMMAND} -S ${SRC}/examples/external/cpp -B ${WORK}/cpp -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
     -DCMAKE_PREFIX_PATH=${WORK}/prefix)
step(${CMAKE_COMMAND} --build ${WORK}/cpp)
# Plugin discovery searches $VIRTUAL_ENV: the project's .venv, where `make` installs the CPU PJRT plugin.
set(ENV{VIRTUAL_ENV} ${SRC}/.venv)
step(${WORK}/cpp/consumer ${WORK}/affine.evoxcartifact)
set(wants "interp: [1.5 0. 9. 4.] ok" "saved ${WORK}/affine.evoxcartifact")
if(HAS_MLIR)
  list(APPEND wants "mlir: [1.5 0. 9. 4.] ok")
endif()
file(GLOB cpu_plugin ${SRC}/.venv/lib/python*/site-packages/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so)
if(HAS_XLA AND cpu_plugin)
  list(APPEND wants "xla: [1.5 0. 9. 4.] ok")
endif()
foreach(want IN LISTS wants)
  string(FIND "${last_output}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the C++ consumer did not print '${want}'")
  endif()
endforeach()

# C: pkg-config --cflags --libs evoxc, then the native loop over the saved artifact.
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${WORK}/prefix/lib/pkgconfig)
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs evoxc OUTPUT_VARIABLE flags RESULT_VARIABLE rc
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config does not find evoxc in ${WORK}/prefix/lib/pkgconfig")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
step(cc -std=c11 -Wall -Wextra -Werror -o ${WORK}/c_consumer ${SRC}/examples/external/c/main.c ${flags})
step(${WORK}/c_consumer ${WORK}/affine.evoxcartifact 20000)
foreach(want "interp on cpu:0" "input 1 [1]: float32[4] 16 bytes" "20000 calls" " 0 wrong values" "status 2: ")
  string(FIND "${last_output}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the C consumer did not print '${want}'")
  endif()
endforeach()
