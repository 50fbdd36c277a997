"""Writes one evoxc.random stream as raw little-endian uint32 to stdout, for statistical batteries that read a
generator from a pipe (dieharder -g 200). Chunk c of 2^22 words is random_bits(fold_in(key, c), (2^22,), uint32), run
on the interpreter; the stream ends when the reader closes the pipe.

Usage: .venv/bin/python bench/random_stream.py ALGORITHM SEED | dieharder -g 200 -a
       (ALGORITHM: splitmix64, threefry2x32 or philox4x32_10)"""

import sys

import evoxc


def main():
    algorithm, seed = sys.argv[1], int(sys.argv[2])
    n = 1 << 22
    spec = {"splitmix64": evoxc.TensorSpec((), evoxc.int64)}.get(
        algorithm, evoxc.TensorSpec((2 if algorithm == "threefry2x32" else 4,), evoxc.uint32))
    exe = evoxc.build(lambda k, c: evoxc.random.bits(evoxc.random.fold_in(k, c), (n,), evoxc.uint32), spec,
                      evoxc.TensorSpec((), evoxc.int64))
    key = evoxc.random.key(seed, algorithm)
    out = sys.stdout.buffer
    c = 0
    try:
        while True:
            out.write(exe(key, evoxc.tensor(c, evoxc.int64)).numpy().tobytes())
            c += 1
    except (BrokenPipeError, OSError):
        pass


if __name__ == "__main__":
    main()
