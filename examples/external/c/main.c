/* c_consumer ARTIFACT [CALLS]: a C program that loads a saved evoxc executable through the C ABI (evoxc/c_api.h),
 * prints its inputs' and outputs' specs, and calls it CALLS times in a native loop on buffers it refills in
 * place, checking every result. Built with `cc main.c $(pkg-config --cflags --libs evoxc)`; tests/install/ runs it
 * on the artifact of f(x, y) = x * y + x on float32[4] that the C++ consumer saves. */
#include <evoxc/c_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void print_spec(const char* what, size_t i, const evoxc_tensor_spec* s) {
  printf("%s %zu %s: %s[", what, i, s->name, evoxc_dtype_name(s->dtype));
  for (int32_t k = 0; k < s->rank; ++k) printf(k ? ", %lld" : "%lld", (long long)s->dims[k]);
  printf("] %zu bytes\n", s->nbytes);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s ARTIFACT [CALLS]\n", argv[0]);
    return 2;
  }
  long calls = argc > 2 ? atol(argv[2]) : 10000;
  if (evoxc_check_abi(EVOXC_ABI_VERSION) != EVOXC_OK) {
    fprintf(stderr, "%s\n", evoxc_last_error());
    return 1;
  }
  evoxc_executable* exe = NULL;
  if (evoxc_executable_load(argv[1], NULL, &exe) != EVOXC_OK) {
    fprintf(stderr, "load: %s\n", evoxc_last_error());
    return 1;
  }
  printf("evoxc %s (ABI %d): %s on %s\n", evoxc_version(), evoxc_abi_version(), evoxc_executable_backend(exe),
         evoxc_executable_device(exe));
  evoxc_tensor_spec spec;
  for (size_t i = 0; i < evoxc_executable_num_inputs(exe); ++i) {
    evoxc_executable_input_spec(exe, i, &spec);
    print_spec("input", i, &spec);
  }
  for (size_t i = 0; i < evoxc_executable_num_outputs(exe); ++i) {
    evoxc_executable_output_spec(exe, i, &spec);
    print_spec("output", i, &spec);
  }
  float* x = evoxc_aligned_alloc(4 * sizeof(float));
  float* y = evoxc_aligned_alloc(4 * sizeof(float));
  float* z = evoxc_aligned_alloc(4 * sizeof(float));
  evoxc_buffer in[2] = {{x, 16, EVOXC_FLOAT32, 1, NULL}, {y, 16, EVOXC_FLOAT32, 1, NULL}};
  evoxc_buffer out[1] = {{z, 16, EVOXC_FLOAT32, 1, NULL}};
  long wrong = 0;
  struct timespec t0, t1;
  timespec_get(&t0, TIME_UTC);
  for (long c = 0; c < calls; ++c) {
    for (int i = 0; i < 4; ++i) {
      x[i] = (float)(c % 100 + i);
      y[i] = (float)(i - 1);
    }
    if (evoxc_executable_execute(exe, in, 2, out, 1) != EVOXC_OK) {
      fprintf(stderr, "execute: %s\n", evoxc_last_error());
      return 1;
    }
    for (int i = 0; i < 4; ++i) wrong += z[i] != x[i] * y[i] + x[i];
  }
  timespec_get(&t1, TIME_UTC);
  double us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / (double)(calls ? calls : 1);
  printf("%ld calls, %.2f us per call, %ld wrong values\n", calls, us, wrong);
  /* A call that does not fit the program fails with a status and a message, never a crash. */
  evoxc_buffer bad = {x, 12, EVOXC_FLOAT32, 1, NULL};
  evoxc_buffer bad_in[2] = {bad, in[1]};
  evoxc_status st = evoxc_executable_execute(exe, bad_in, 2, out, 1);
  printf("a 12-byte input: status %d: %s\n", (int)st, evoxc_last_error());
  evoxc_aligned_free(x);
  evoxc_aligned_free(y);
  evoxc_aligned_free(z);
  evoxc_executable_release(exe);
  return wrong == 0 && st == EVOXC_ERROR_VALIDATION ? 0 : 1;
}
