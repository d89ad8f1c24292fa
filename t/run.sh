#!/usr/bin/env bash
# t/run.sh -- runs the cluster-level tests t/NNN_name.sh (all of them, or those named) and ends
# with one line "t: N passed, M failed[, K skipped]"; exits non-zero if any failed.
#
# Each test is a bash script that sources t/testlib.sh, starts its own throw-away cluster
# (scripts/lib.sh) and prints TAP lines: "ok N - what", "not ok N - what", "ok N # SKIP why",
# or "1..0 # SKIP why" when it cannot run at all.  A script that exits non-zero without a
# "not ok" line counts as one failure; one that prints no result at all counts as a failure
# too, so a placeholder never passes.  The extension must be installed (scripts/test.sh does).
#
# Environment: WIDECOL_LONG=1 longer soak modes; WC_T_TIMEOUT seconds per script (default
# 600, 4x with WIDECOL_LONG); WC_LOGDIR where each script's output is kept.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")" || exit 1

if [ $# -gt 0 ]; then
    tests=("$@")
else
    tests=()
    for f in [0-9][0-9][0-9]_*.sh; do [ -e "$f" ] && tests+=("$f"); done
fi
limit=600
[ -n "${WIDECOL_LONG:-}" ] && [ "$WIDECOL_LONG" != 0 ] && limit=2400
limit=${WC_T_TIMEOUT:-$limit}
logdir=${WC_LOGDIR:-$(mktemp -d /tmp/widecol-t.XXXXXX)}

passed=0; failed=0; skipped=0
for t in "${tests[@]}"; do
    name=$(basename "$t" .sh)
    log="$logdir/t-$name.log"
    echo "--- t/$name"
    t0=$(date +%s)
    timeout -k 10 "$limit" bash "$t" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    ok=$(grep -cE '^ok [0-9]+( |$)' "$log" | head -n 1)
    skip=$(grep -cE '^ok [0-9]+.*# ?SKIP' "$log" | head -n 1)
    notok=$(grep -cE '^not ok [0-9]+( |$)' "$log" | head -n 1)
    ok=$((ok - skip))
    if [ "$rc" -eq 0 ] && grep -qE '^1\.\.0 # ?SKIP' "$log"; then
        skipped=$((skipped + 1))
        echo "    t/$name: skipped"
        continue
    fi
    if [ "$rc" -ne 0 ] && [ "$notok" -eq 0 ]; then
        if [ "$rc" -eq 124 ]; then echo "    t/$name: timed out after $limit s"
        else echo "    t/$name: exited with status $rc"; fi
        notok=1
    elif [ $((ok + notok + skip)) -eq 0 ]; then
        echo "    t/$name: printed no result"
        notok=1
    fi
    passed=$((passed + ok)); failed=$((failed + notok)); skipped=$((skipped + skip))
    echo "    t/$name: $ok passed, $notok failed ($(( $(date +%s) - t0 )) s)"
done

if [ "$skipped" -gt 0 ]; then
    echo "t: $passed passed, $failed failed, $skipped skipped"
else
    echo "t: $passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
