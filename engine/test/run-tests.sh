#!/usr/bin/env bash
# Runs the engine test programs given as arguments and adds up their
# "<name>: N passed, M failed" lines.  Exits non-zero if any check or program failed.
# With WC_SHARED_SIZES="64 1", each program runs once per size with a region of shared
# memtables of that many MiB (WIDECOL_TEST_SHARED_MEMTABLE, test/testutil.h).
set -u
passed=0; failed=0; broken=0
runs=()
for t in "$@"; do
  for size in ${WC_SHARED_SIZES:-0}; do runs+=("$size:$t"); done
done
for run in "${runs[@]}"; do
  size=${run%%:*}; t=${run#*:}
  if [ "$size" != 0 ]; then
    out=$(WIDECOL_TEST_SHARED_MEMTABLE=$size "$t" 2>&1); rc=$?
  else
    out=$("$t" 2>&1); rc=$?
  fi
  line=$(printf '%s\n' "$out" | grep -E ': [0-9]+ passed, [0-9]+ failed$' | tail -1)
  if [ -z "$line" ] || [ $rc -ne 0 ]; then
    printf '%s\n' "$out" | tail -30
  fi
  if [ -n "$line" ]; then
    if [ "$size" != 0 ]; then echo "  $line (shared memtables, $size MiB)"; else echo "  $line"; fi
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed$/\1/')
    f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed$/\2/')
    passed=$((passed + p)); failed=$((failed + f))
  fi
  if [ $rc -ne 0 ] && { [ -z "$line" ] || [ "${f:-0}" = 0 ]; }; then
    echo "  $(basename "$t"): exited with status $rc"; broken=$((broken + 1)); failed=$((failed + 1))
  fi
done
echo "engine: $passed passed, $failed failed"
[ $failed -eq 0 ] && [ $broken -eq 0 ]
