#!/usr/bin/env bash
# Instructions per op of each staging stage (trace, clone, verify, vectorize, vjp, merge) of the
# 500-program GP population, counted by callgrind: `bench_staging --per-op` dumps one profile per
# stage; this prints each dump's total over the op count. Needs valgrind (apt-get install valgrind).
set -euo pipefail
bin=${1:-build/bin/bench_staging}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" "$bin" --per-op 2 >"$dir/stdout" 2>"$dir/stderr" || {
  cat "$dir/stderr" >&2
  exit 1
}
ops=$(awk '/programs,/ {print $3}' "$dir/stdout")
echo "callgrind, $(head -1 "$dir/stdout" | cut -d'(' -f1)"
for f in $(ls -v "$dir"/cg.out.*); do
  [ -f "$f" ] || continue
  name=$(sed -n 's/^desc: Trigger: Client Request: //p' "$f")
  total=$(sed -n 's/^totals: //p' "$f" | awk '{print $1}')
  awk -v n="$name" -v t="$total" -v o="$ops" 'BEGIN { printf "  %-10s %12d instructions  %8.0f per op\n", n, t, t / o }'
done
