// The host cost of one call of a small program (a + b on f32[4]) on the xla backend, from C++: evoxc's
// Executable::execute against the same PJRT calls made directly (input buffers, execute, the output copied into the
// caller's memory), so the difference is what evoxc adds. Also the interpreter's and the mlir backend's execute.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/xla/pjrt.h"
#include "evoxc/backends/xla.h"
#include "evoxc/evoxc.h"

using namespace evoxc;
using Clock = std::chrono::steady_clock;

// Median over `rounds` of the mean time of `n` calls, in microseconds.
template <typename F>
double time_us(F&& f, int n = 20000, int rounds = 7) {
  std::vector<double> r;
  for (int k = 0; k < rounds; ++k) {
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) f();
    r.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n);
  }
  std::sort(r.begin(), r.end());
  return r[r.size() / 2];
}

int main(int argc, char** argv) {
  if (argc > 1) xla::add_search_directories({argv[1]});
  std::string why;
  if (!xla::available(&why)) {
    std::printf("no PJRT plugin: %s\n", why.c_str());
    return 1;
  }
  Graph g = trace([](const SymbolicTensor& a, const SymbolicTensor& b) { return a + b; }, TensorSpec({4}, f32),
                  TensorSpec({4}, f32));
  CompiledArtifact art = compile(lower(g, "xla"));
  Executable exe = load(art);
  std::vector<Tensor> in{Tensor::full({4}, 1.0, f32), Tensor::full({4}, 2.0, f32)};
  std::vector<Tensor> out{Tensor::zeros({4}, f32)};
  double evoxc_us = 0;

  // The same calls straight on the plugin, with the executable evoxc compiled.
  const xla_backend::Plugin& p = xla_backend::Plugin::get();
  const PJRT_Api* api = p.api();
  std::string text = lower(g, "xla").text();
  auto prog = xla_backend::args<PJRT_Program>(PJRT_Program_STRUCT_SIZE);
  prog.code = text.data();
  prog.code_size = text.size();
  prog.format = "mlir";
  prog.format_size = 4;
  // The compile options evoxc gives (src/backends/xla/backend.cpp): one replica and partition,
  // xla_allow_excess_precision off.
  static const std::string opts = std::string("\x1a\x04\x20\x01\x28\x01\x3a\x20\x0a\x1a", 10) +
                                  "xla_allow_excess_precision" + std::string("\x12\x02\x10\x00", 4);
  auto c = xla_backend::args<PJRT_Client_Compile_Args>(PJRT_Client_Compile_Args_STRUCT_SIZE);
  c.client = p.client();
  c.program = &prog;
  c.compile_options = opts.data();
  c.compile_options_size = opts.size();
  p.check(api->PJRT_Client_Compile(&c), "compile");
  int64_t dims[1] = {4};
  PJRT_Device* dev = p.device(0);
  auto raw_call = [&] {
    PJRT_Buffer* bufs[2];
    for (int i = 0; i < 2; ++i) {
      auto b =
          xla_backend::args<PJRT_Client_BufferFromHostBuffer_Args>(PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE);
      b.client = p.client();
      b.data = in[static_cast<size_t>(i)].raw_data();
      b.type = PJRT_Buffer_Type_F32;
      b.dims = dims;
      b.num_dims = 1;
      b.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableZeroCopy;
      b.device = dev;
      p.check(api->PJRT_Client_BufferFromHostBuffer(&b), "buffer");
      bufs[i] = b.buffer;
      p.destroy(b.done_with_host_buffer);
    }
    auto eo = xla_backend::args<PJRT_ExecuteOptions>(PJRT_ExecuteOptions_STRUCT_SIZE);
    PJRT_Buffer* const* arg_list = bufs;
    PJRT_Buffer* outb[1];
    PJRT_Buffer** out_list = outb;
    auto ex = xla_backend::args<PJRT_LoadedExecutable_Execute_Args>(PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE);
    ex.executable = c.executable;
    ex.options = &eo;
    ex.argument_lists = &arg_list;
    ex.num_devices = 1;
    ex.num_args = 2;
    ex.output_lists = &out_list;
    p.check(api->PJRT_LoadedExecutable_Execute(&ex), "execute");
    auto th = xla_backend::args<PJRT_Buffer_ToHostBuffer_Args>(PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE);
    th.src = outb[0];
    th.dst = out[0].raw_data();
    th.dst_size = 16;
    p.check(api->PJRT_Buffer_ToHostBuffer(&th), "to host");
    p.await(th.event, "to host");
    p.destroy(outb[0]);
    p.destroy(bufs[0]);
    p.destroy(bufs[1]);
  };
  // Interleaved rounds (the machine's noise is larger than the difference): the medians, and the median of each
  // round's difference.
  std::vector<double> raws, evoxcs, diffs;
  for (int round = 0; round < 21; ++round) {
    double r = time_us(raw_call, 3000, 1), e = time_us([&] { exe.execute(in, out); }, 3000, 1);
    raws.push_back(r);
    evoxcs.push_back(e);
    diffs.push_back(e - r);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double raw_us = median(raws);
  evoxc_us = median(evoxcs);
  double interp_us = time_us([&] { build_graph(g).execute(in, out); }, 200, 3);
  Executable ie = build_graph(g);
  interp_us = time_us([&] { ie.execute(in, out); });
  std::printf("one call of a + b on f32[4], us per call (medians of 21 interleaved rounds of 3000 calls):\n");
  std::printf("  PJRT calls straight on the plugin   %7.3f\n", raw_us);
  std::printf(
      "  evoxc Executable::execute (xla)     %7.3f   (evoxc adds %.3f us, median of the rounds' differences; "
      "target <= 1)\n",
      evoxc_us, median(diffs));
  std::printf("  evoxc Executable::execute (interp)  %7.3f\n", interp_us);
  if (find_backend("mlir")) {
    Executable me = load(compile(lower(g, "mlir")));
    std::printf("  evoxc Executable::execute (mlir)    %7.3f\n", time_us([&] { me.execute(in, out); }));
  }
  return 0;
}
