#!/usr/bin/env bash
# scripts/test.sh -- runs every test of widecol_fdw and ends with one line
#   total: N passed, M failed
# and a non-zero exit status when anything failed.  .ci/run runs exactly this.
#
#   1. installs what it needs (apt-get) if it is missing
#   2. the engine's unit tests:            make -C engine check, and check-shared (again with
#                                          shared memtables: two region sizes)
#   3. the same under ASan + UBSan:        make -C engine check-asan,
#      and the fuzz corpus replayed:        make -C engine fuzz-replay
#   4. builds and installs the extension:  make && make install
#   5. the pg_regress suite:               make installcheck ISOLATION=, against a throw-away cluster
#   6. the isolation specs:                scripts/isolation.sh: each spec against its ordinary-
#                                          table twin (must give expected/), then against widecol
#   7. the cluster-level tests:            t/run.sh (crash, concurrency)
#
# Options:
#   --long      longer soak modes for the t/ tests (WIDECOL_LONG=1)
#   --no-asan   skip step 3 (ASan tests and fuzz replay)
# Logs of every step stay in a directory under /tmp, named at the end.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }

long=
asan=1
while [ $# -gt 0 ]; do
    case "$1" in
        --long) long=1 ;;
        --no-asan) asan= ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
    shift
done

cd "$WC_ROOT" || exit 1
LOGS=$(mktemp -d /tmp/widecol-test-logs.XXXXXX) || exit 1
chmod 755 "$LOGS"
TOTAL_PASSED=0
TOTAL_FAILED=0
TOTAL_SKIPPED=0
SUMMARY=()
T0=$(date +%s)

# record NAME PASSED FAILED [SKIPPED] [NOTE]
record() {
    local name=$1 p=$2 f=$3 s=${4:-0} note=${5:-}
    TOTAL_PASSED=$((TOTAL_PASSED + p))
    TOTAL_FAILED=$((TOTAL_FAILED + f))
    TOTAL_SKIPPED=$((TOTAL_SKIPPED + s))
    local line
    line=$(printf '  %-16s %5d passed, %3d failed' "$name" "$p" "$f")
    [ "$s" -gt 0 ] && line+=", $s skipped"
    [ -n "$note" ] && line+="  ($note)"
    SUMMARY+=("$line")
}

step() { printf '\n==== %s\n' "$*"; STEP_T0=$(date +%s); }
elapsed() { echo "$(( $(date +%s) - STEP_T0 )) s"; }

# Reads "<word>: N passed, M failed" (the last one) from a log: sets P and F, or returns 1.
parse_counts() {
    local word=$1 log=$2 line
    line=$(grep -E "^$word: [0-9]+ passed, [0-9]+ failed" "$log" | tail -n 1)
    [ -n "$line" ] || return 1
    P=$(sed -E 's/^[^:]*: ([0-9]+) passed.*/\1/' <<<"$line")
    F=$(sed -E 's/^[^:]*: [0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")
    S=$(sed -nE 's/.* ([0-9]+) skipped.*/\1/p' <<<"$line")
    S=${S:-0}
}

# engine_step NAME TARGET: make -C engine TARGET, counted from run-tests.sh's closing line.
engine_step() {
    local name=$1 target=$2 log="$LOGS/$1.log" rc
    step "$name: make -C engine $target"
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
        timeout -k 10 1500 make -s --no-print-directory -C engine -j2 "$target" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    if parse_counts engine "$log"; then
        # a non-zero exit with no failed check (a crash, a leak report) is one failure
        [ "$rc" -ne 0 ] && [ "$F" -eq 0 ] && F=1
        record "$name" "$P" "$F" 0 "$(elapsed)"
    else
        [ "$rc" -eq 124 ] && echo "$name: timed out"
        record "$name" 0 1 0 "did not run: exit status $rc, see $log"
    fi
}

# make installcheck against the running cluster, counted from pg_regress's closing line (the
# isolation specs, which make installcheck runs after REGRESS, are a step of their own).
run_installcheck() {
    local rc line P F
    rm -f regression.diffs regression.out
    timeout -k 10 1200 make --no-print-directory installcheck PG_CONFIG="$PG_CONFIG" ISOLATION= 2>&1 |
        tee "$LOGS/installcheck.log"
    rc=${PIPESTATUS[0]}
    # pg_regress prints "All N tests passed." or "M of N tests failed." at the end; when it
    # stops before that (a missing file, a crash), count its "test NAME ... ok|FAILED" lines.
    P=0; F=0
    line=$(grep -E 'All [0-9]+ tests passed' "$LOGS/installcheck.log" | tail -n 1)
    if [ -n "$line" ]; then
        P=$(sed -E 's/.*All ([0-9]+) tests passed.*/\1/' <<<"$line")
    else
        line=$(grep -E '[0-9]+ of [0-9]+ tests failed' "$LOGS/installcheck.log" | tail -n 1)
        if [ -n "$line" ]; then
            F=$(sed -E 's/^[^0-9]*([0-9]+) of [0-9]+ tests failed.*/\1/' <<<"$line")
            P=$(( $(sed -E 's/^[^0-9]*[0-9]+ of ([0-9]+) tests failed.*/\1/' <<<"$line") - F ))
        else
            P=$(grep -cE '^(test| ) +[^ ]+ +\.\.\. ok ' "$LOGS/installcheck.log")
            F=$(grep -cE '^(test| ) +[^ ]+ +\.\.\. FAILED ' "$LOGS/installcheck.log")
            [ "$rc" -ne 0 ] && F=$((F + 1)) && echo "pg_regress stopped before its summary (exit status $rc)"
        fi
    fi
    # make or pg_regress broke without a failed test (no cluster, no pg_regress, a timeout)
    [ "$rc" -ne 0 ] && [ "$F" -eq 0 ] && F=1
    if [ -s regression.diffs ]; then
        cp regression.diffs "$LOGS/"
        echo "---- regression.diffs (first 200 lines; all of it in $LOGS/regression.diffs)"
        head -n 200 regression.diffs
    fi
    if [ "$F" -gt 0 ]; then
        cp "$WC_CLUSTER_DIR/server.log" "$LOGS/installcheck-server.log" 2>/dev/null
        echo "---- server log (last 30 lines; all of it in $LOGS/installcheck-server.log)"
        tail -n 30 "$LOGS/installcheck-server.log" 2>/dev/null
    fi
    if [ $((P + F)) -eq 0 ]; then
        echo "pg_regress ran no test (is REGRESS empty?)"
    else
        record pg_regress "$P" "$F" 0 "$(elapsed)"
    fi
}

# --- 1. packages
step "packages"
pkgs=("${WC_BUILD_PACKAGES[@]}")
[ -n "$asan" ] && pkgs=("${WC_TEST_PACKAGES[@]}")
if ! (wc_need_packages "${pkgs[@]}"); then
    record packages 0 1 0 "could not install ${pkgs[*]}"
fi
echo "have: ${pkgs[*]}"

# --- 2, 3. the engine
engine_step engine check
engine_step engine-shared check-shared
if [ -n "$asan" ]; then
    engine_step engine-asan check-asan
fi

# --- 3b. the fuzz corpus, replayed once (every input that ever found new coverage)
if [ -n "$asan" ]; then
    step "fuzz-replay: make -C engine fuzz-replay"
    timeout -k 10 900 make -s --no-print-directory -C engine fuzz-replay 2>&1 | tee "$LOGS/fuzz.log"
    rc=${PIPESTATUS[0]}
    P=0; F=0
    while read -r line; do
        P=$((P + $(sed -E 's/^[^:]*: ([0-9]+) passed.*/\1/' <<<"$line")))
        F=$((F + $(sed -E 's/^[^:]*: [0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")))
    done < <(grep -E '^fuzz_[a-z]+: [0-9]+ passed, [0-9]+ failed' "$LOGS/fuzz.log")
    [ "$rc" -ne 0 ] && [ "$F" -eq 0 ] && F=1
    if [ $((P + F)) -gt 0 ]; then
        record fuzz-replay "$P" "$F" 0 "$(elapsed)"
    else
        record fuzz-replay 0 1 0 "replayed nothing: exit status $rc"
    fi
fi

# --- 4. the extension
step "build: make && make install"
built=
if wc_build "$LOGS/build.log"; then
    built=1
    nwarn=$(grep -c 'warning:' "$LOGS/build.log")
    echo "built and installed ($nwarn compiler warnings, $(elapsed))"
    [ "$nwarn" -eq 0 ] || grep 'warning:' "$LOGS/build.log" | head -n 20
else
    record build 0 1 0 "the extension does not build: see $LOGS/build.log"
fi

# --- 5. pg_regress
step "pg_regress: make installcheck"
if [ -z "$built" ]; then
    echo "not run: the extension did not build"
else
    if wc_cluster_start; then
        echo "cluster: $PGHOST port $PGPORT, user $PGUSER"
        run_installcheck
        wc_cluster_stop
    else
        record pg_regress 0 1 0 "the throw-away cluster did not start"
    fi
fi

# --- 6. isolation specs: heap twins (they prove expected/), then widecol
step "isolation: scripts/isolation.sh"
if [ -z "$built" ]; then
    echo "not run: the extension did not build"
else
    timeout -k 10 900 bash scripts/isolation.sh 2>&1 | tee "$LOGS/isolation.log"
    rc=${PIPESTATUS[0]}
    cp output_iso/heap/regression.diffs "$LOGS/isolation-heap.diffs" 2>/dev/null
    cp output_iso/widecol/regression.diffs "$LOGS/isolation.diffs" 2>/dev/null
    for word in isolation-heap isolation; do
        if parse_counts "$word" "$LOGS/isolation.log"; then
            record "$word" "$P" "$F" 0 "$(elapsed)"
        else
            record "$word" 0 1 0 "scripts/isolation.sh broke: exit status $rc, see $LOGS/isolation.log"
        fi
    done
fi

# --- 7. cluster-level tests
step "t/: cluster-level tests"
if [ -z "$built" ]; then
    echo "not run: the extension did not build"
else
    WIDECOL_LONG=$long WC_LOGDIR="$LOGS" timeout -k 10 "$([ -n "$long" ] && echo 7200 || echo 1800)" \
        bash t/run.sh 2>&1 | tee "$LOGS/t.log"
    rc=${PIPESTATUS[0]}
    if parse_counts t "$LOGS/t.log"; then
        [ "$rc" -ne 0 ] && [ "$F" -eq 0 ] && F=1
        [ $((P + F + S)) -gt 0 ] && record t "$P" "$F" "$S" "$(elapsed)"
    else
        record t 0 1 0 "t/run.sh broke: exit status $rc"
    fi
fi

# --- summary
printf '\n==== summary (%d s in all; logs in %s)\n' "$(( $(date +%s) - T0 ))" "$LOGS"
printf '%s\n' "${SUMMARY[@]}"
if [ "$TOTAL_SKIPPED" -gt 0 ]; then
    echo "total: $TOTAL_PASSED passed, $TOTAL_FAILED failed, $TOTAL_SKIPPED skipped"
else
    echo "total: $TOTAL_PASSED passed, $TOTAL_FAILED failed"
fi
[ "$TOTAL_FAILED" -eq 0 ] && [ "$TOTAL_PASSED" -gt 0 ]
