#!/usr/bin/env bash
# Runs the engine test programs given as arguments and adds up their
# "<name>: N passed, M failed" lines.  Exits non-zero if any check or program failed.
set -u
passed=0; failed=0; broken=0
for t in "$@"; do
  out=$("$t" 2>&1); rc=$?
  line=$(printf '%s\n' "$out" | grep -E ': [0-9]+ passed, [0-9]+ failed$' | tail -1)
  if [ -z "$line" ] || [ $rc -ne 0 ]; then
    printf '%s\n' "$out" | tail -30
  fi
  if [ -n "$line" ]; then
    echo "  $line"
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
