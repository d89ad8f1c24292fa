#!/usr/bin/env bash
# engine/fuzz/replay.sh [NAME...] -- runs each harness once over every file of its
# corpus (corpus/NAME/) and prints "fuzz_NAME: N passed, M failed" per harness.
# Exits non-zero if any input crashes, leaks or trips a sanitizer.
cd "$(dirname "$0")" || exit 2
# A damaged (checksum-valid) block may claim up to 1 GiB uncompressed; under ASan each
# such allocation costs seconds.  Over 64 MiB malloc returns NULL instead, which the
# engine reports as WC_NOMEM (README.md, "Findings").
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:max_allocation_size_mb=64"
[ $# -gt 0 ] || set -- sst log manifest batch options
status=0
for name in "$@"; do
    bin=build/fuzz_$name
    dir=corpus/$name
    if [ ! -x "$bin" ] || [ ! -d "$dir" ]; then
        echo "fuzz_$name: 0 passed, 1 failed (missing $bin or $dir)"
        status=1
        continue
    fi
    n=$(find "$dir" -maxdepth 1 -type f | wc -l)
    log=$(mktemp /tmp/wc-fuzz-replay-$name.XXXXXX)
    if "$bin" -runs=0 "$dir/" >"$log" 2>&1; then
        echo "fuzz_$name: $n passed, 0 failed"
    else
        # find which inputs fail, one process each
        failed=0
        for f in "$dir"/*; do
            if ! "$bin" "$f" >"$log.one" 2>&1; then
                failed=$((failed + 1))
                echo "  FAILED: $f" >&2
                grep -E 'ERROR|SUMMARY|assertion|runtime error' "$log.one" | head -5 >&2
            fi
        done
        [ "$failed" -gt 0 ] || { failed=1; tail -20 "$log" >&2; }
        echo "fuzz_$name: $((n - failed)) passed, $failed failed"
        rm -f "$log.one"
        status=1
    fi
    rm -f "$log"
done
exit $status
