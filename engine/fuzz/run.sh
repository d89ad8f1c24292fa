#!/usr/bin/env bash
# engine/fuzz/run.sh NAME SECONDS [libFuzzer options...]
#
# Fuzzes harness NAME (sst, log, manifest, batch, options) for SECONDS seconds, starting
# from corpus/NAME/, then minimises corpus/NAME/ (-merge=1 of the old corpus and what the
# run found into a fresh directory holding the seeds, which replaces it).  A crash is saved as
# crashes/NAME-crash-<sha1> (libFuzzer's artifact); the corpus is still minimised.
# The run's log and its final statistics stay in a directory under /tmp, named at
# the end.  Build first: make -C .. fuzz
set -uo pipefail
cd "$(dirname "$0")" || exit 2
# A damaged (checksum-valid) block may claim up to 1 GiB uncompressed; under ASan each
# such allocation costs seconds.  Over 64 MiB malloc returns NULL instead, which the
# engine reports as WC_NOMEM (README.md, "Findings").
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:max_allocation_size_mb=64"
[ $# -ge 2 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
name=$1 secs=$2
shift 2
bin=build/fuzz_$name
[ -x "$bin" ] || { echo "run.sh: $bin is missing; run make -C .. fuzz" >&2; exit 2; }
mkdir -p "corpus/$name" crashes
work=$(mktemp -d "/tmp/wc-fuzz-$name.XXXXXX") || exit 2
mkdir "$work/new" "$work/min"

# Inputs up to 8 KiB (the seeds are smaller); a 10 s input is a hang.
"$bin" -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="crashes/$name-" "$@" \
    "$work/new" "corpus/$name" >"$work/fuzz.log" 2>&1
rc=$?
grep -E '^#[0-9]+.*(DONE|INITED)' "$work/fuzz.log" | tail -2
grep -E '^stat::' "$work/fuzz.log"

# Minimise: keep the seeds (make_seeds), then add what adds edges.  Merging on edges
# only (no hit-count buckets, no comparison features) keeps the corpus small.
cp corpus/"$name"/seed-* "$work/min/" 2>/dev/null
"$bin" -merge=1 -use_counters=0 -use_cmp=0 -max_len=8192 -timeout=10 \
    -artifact_prefix="crashes/$name-merge-" "$work/min" "corpus/$name" "$work/new" \
    >"$work/merge.log" 2>&1 || { echo "run.sh: merge failed, corpus unchanged (see $work/merge.log)" >&2; exit 1; }
rm -rf "corpus/$name.old"
mv "corpus/$name" "corpus/$name.old" && mv "$work/min" "corpus/$name" && rm -rf "corpus/$name.old"
echo "corpus/$name: $(find "corpus/$name" -type f | wc -l) files, $(du -sk "corpus/$name" | cut -f1) KiB"
echo "log: $work/fuzz.log (exit status $rc)"
[ "$rc" -eq 0 ] || { grep -E 'ERROR|SUMMARY|assertion|artifact' "$work/fuzz.log" | head; exit 1; }
