#!/usr/bin/env bash
# t/040_corruption.sh -- damaged store files are reported, never read as different rows.
#
# A table's store is given flushed and compacted sorted files (.sst), a bulk write (its sorted
# files named only by an ingest record in a log that is not flushed yet, engine/ingest.h), a
# log (.log) holding several committed transactions, the last one the 'last-*' rows, and a
# MANIFEST.  The cluster
# is stopped and the store copied.  Then, for each case, the pristine copy is put back, the
# damage done (a byte flipped at a random offset of a file of one kind, a file truncated at a
# random length, a file deleted), the cluster started and six queries run (a full scan, point
# lookups in a sorted file, in the log and in the last record, a range scan, one family).
# Each query must either return exactly the pristine answer or fail with SQLSTATE XX001
# (data_corrupted) and an error that names the damaged file (the manifest's errors say
# "manifest ...", matched case-insensitively); the server log must show no
# backend killed by a signal.  One exception, as the format says (engine/FORMAT.md, "Reading:
# the end for now versus corruption"): damage in the LAST record of the active log reads as a
# torn tail, the record of a writer that died mid-append, and is dropped whole; there the
# answer may be "pristine minus the last transaction".  Likewise the log is only truncated
# inside its last record (a cut anywhere is a torn tail by the format's rules).
# Counts: flips tried, detected (XX001), harmless (right rows), wrong (must be 0).
# 10 flips per kind of file (and 5 in the bulk write's files); 60 (30) with WIDECOL_LONG=1.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
nflips=10
t_long && nflips=60

wc_psql -c "CREATE FOREIGN TABLE c (rowkey text COLLATE \"C\", family text, qualifier text COLLATE \"C\",
                                   ts bigint, value text)
            SERVER wide OPTIONS (families 'a,b')" \
        -c "INSERT INTO c SELECT 'k' || lpad(i::text, 6, '0'), f, 'q' || j, i, md5(i::text || f || j)
              FROM generate_series(1, 400) i, unnest('{a,b}'::text[]) f, generate_series(1, 2) j" \
        -c "SELECT widecol_flush('c')" \
        -c "INSERT INTO c SELECT 'k' || lpad(i::text, 6, '0'), f, 'r' || j, i, md5(i::text || f || j || 'r')
              FROM generate_series(200, 600) i, unnest('{a,b}'::text[]) f, generate_series(1, 2) j" \
        -c "SELECT widecol_flush('c')" -c "SELECT widecol_compact('c')" \
        -c "INSERT INTO c SELECT 'k' || lpad(i::text, 6, '0'), 'a', 's', i, 'flushed after compaction'
              FROM generate_series(1, 600, 7) i" \
        -c "SELECT widecol_flush('c')" >/dev/null || t_bail "create, fill, flush and compact a table"
store=$(wc_psql -c "SELECT format('%s/base/%s/widecol_%s', current_setting('data_directory'),
                                  (SELECT oid FROM pg_database WHERE datname = current_database()),
                                  'c'::regclass::oid)")
t_diag "store: $store"
before_bulk=" $(cd "$store" && echo *.sst) "
# a bulk write: its files are named by its ingest record only (the log it is in is not flushed:
# no session flushes or runs maintenance after it)
wc_psql -c "SET widecol_fdw.bulk_write_size = 0" \
        -c "INSERT INTO c SELECT 'bulk-' || lpad(i::text, 3, '0'), f, 'q', 7, md5(i::text || f || 'bulk')
              FROM generate_series(1, 80) i, unnest('{a,b}'::text[]) f" || t_bail "a bulk write"
ingested=()
for f in $(cd "$store" && echo *.sst); do
    [[ "$before_bulk" == *" $f "* ]] || ingested+=("$f")
done
for g in 1 2 3 4 5; do
    wc_psql -c "INSERT INTO c SELECT 'g$g-' || lpad(i::text, 3, '0'), f, 'q', $g, 'log batch $g'
                  FROM generate_series(1, 10) i, unnest('{a,b}'::text[]) f" || t_bail "log batch $g"
done
wc_psql -c "INSERT INTO c SELECT 'last-' || lpad(i::text, 3, '0'), 'b', 'q', 9, 'the last batch'
              FROM generate_series(1, 5) i" || t_bail "the last batch"


# The queries, as WHERE conditions; each answers one md5 line.
conds=("true" "rowkey = 'k000123'" "rowkey = 'g3-005'" "rowkey = 'last-003'"
       "rowkey >= 'k000290' AND rowkey < 'k000420'" "family = 'b'" "rowkey = 'bulk-042'")
query() {
    echo "SELECT md5(coalesce(string_agg(format('%s|%s|%s|%s|%s', rowkey, family, qualifier, ts, value),
                                         E'\n' ORDER BY rowkey, family, qualifier, ts), '-'))
            FROM c WHERE ($1)${2:+ AND rowkey NOT LIKE 'last%'}"
}
pristine=(); minus_last=()
for q in "${conds[@]}"; do
    pristine+=("$(wc_psql -c "$(query "$q")")") || t_bail "a pristine query"
    minus_last+=("$(wc_psql -c "$(query "$q" 1)")")
done
t_ok "the pristine answers differ from those without the last batch" \
    test "${pristine[0]}" != "${minus_last[0]}" -a "${pristine[3]}" != "${minus_last[3]}"

stop_cluster() {
    wc_as_cluster_user "$WC_PGBIN/pg_ctl" -D "$WC_PGDATA" -m fast -w -t 60 stop >/dev/null 2>&1
}
stop_cluster || t_bail "the cluster stops"
pristine_dir=$WC_CLUSTER_DIR/pristine-store
cp -a "$store" "$pristine_dir" || t_bail "copy the store"

ssts=(); logs=()
for f in "$pristine_dir"/*.sst; do [ -e "$f" ] && ssts+=("$(basename "$f")"); done
for f in "$pristine_dir"/*.log; do [ -e "$f" ] && logs+=("$(basename "$f")"); done
t_diag "files: ${ssts[*]} ${logs[*]} MANIFEST"
t_diag "the bulk write's files: ${ingested[*]}"
t_ok "the store has at least two sorted files, a log and a MANIFEST" \
    test "${#ssts[@]}" -ge 2 -a "${#logs[@]}" -ge 1 -a -f "$pristine_dir/MANIFEST"
t_ok "the bulk write made two files, named by a record of a live log (not by MANIFEST)" \
    test "${#ingested[@]}" = 2 -a "${#logs[@]}" -ge 2
active_log=${logs[${#logs[@]}-1]}

size_of() { stat -c %s "$1"; }
u32_at() {    # u32_at FILE OFFSET: the little-endian fixed32 there
    local b
    b=($(od -An -tu1 -j "$2" -N4 "$1"))
    echo $((b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24))
}
# The offset of the last record of a log (its records start at 32, each 9 + len bytes).
last_record_of() {
    local f=$1 o=32 last=32 size
    size=$(size_of "$f")
    while ((o + 9 <= size)); do last=$o; o=$((o + 9 + $(u32_at "$f" $((o + 4))))); done
    echo "$last"
}
last_rec=$(last_record_of "$pristine_dir/$active_log")
t_diag "the last record of $active_log starts at $last_rec of $(size_of "$pristine_dir/$active_log") bytes"

rnd() { echo $(( (RANDOM * 32768 + RANDOM) % $1 )); }    # 0 .. $1-1
flip_byte() {    # flip_byte FILE OFFSET: xor the byte with a random non-zero value
    local b x
    b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    x=$(( (RANDOM % 255) + 1 ))
    printf "\\$(printf %03o $(( b ^ x )))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

tried=0; detected=0; harmless=0; torn=0; wrong=0
declare -A kind_tried kind_detected kind_harmless kind_wrong
signals_before=0

# check_case KIND FILE WHAT TORN_OK: start, run the queries, classify, stop.
check_case() {
    local kind=$1 file=$2 what=$3 torn_ok=$4 i out rc errs=0 bad= got_minus=0 sig
    wc_cluster_restart || t_bail "the server starts after $what"
    for i in "${!conds[@]}"; do
        out=$(wc_psql -v VERBOSITY=verbose -c "$(query "${conds[$i]}")" 2>&1); rc=$?
        if [ $rc -eq 0 ]; then
            if [ "$out" = "${pristine[$i]}" ]; then :
            elif [ "$torn_ok" = 1 ] && [ "$out" = "${minus_last[$i]}" ]; then got_minus=1
            else bad="query $i ($([ "$torn_ok" = 1 ] && echo "torn tail allowed")) answered $out, not ${pristine[$i]}"; fi
        else
            errs=$((errs + 1))
            if ! grep -q 'ERROR:  XX001' <<<"$out"; then bad="query $i: not XX001: $(head -n 3 <<<"$out" | tr '\n' ' ')"
            elif ! grep -qiF "$file" <<<"$out"; then bad="query $i: the error does not name $file: $(tr '\n' ' ' <<<"$out")"; fi
        fi
    done
    sig=$(grep -c 'terminated by signal' "$WC_CLUSTER_DIR/server.log")
    if [ "$sig" -gt "$signals_before" ]; then bad="a backend was terminated by a signal: $(grep 'terminated by signal' "$WC_CLUSTER_DIR/server.log" | tail -n 1)"; signals_before=$sig; fi
    tried=$((tried + 1)); kind_tried[$kind]=$(( ${kind_tried[$kind]:-0} + 1 ))
    if [ -n "$bad" ]; then
        wrong=$((wrong + 1)); kind_wrong[$kind]=$(( ${kind_wrong[$kind]:-0} + 1 ))
        t_diag "WRONG after $what: $bad"
    elif [ $errs -gt 0 ]; then
        detected=$((detected + 1)); kind_detected[$kind]=$(( ${kind_detected[$kind]:-0} + 1 ))
    else
        harmless=$((harmless + 1)); kind_harmless[$kind]=$(( ${kind_harmless[$kind]:-0} + 1 ))
        [ $got_minus = 1 ] && torn=$((torn + 1))
    fi
    stop_cluster || t_bail "the server stops after $what"
}

restore() { rm -rf "$store" && cp -a "$pristine_dir" "$store"; }

# --- byte flips
for kind in sst log MANIFEST; do
    for ((n = 0; n < nflips; n++)); do
        case $kind in
            sst) f=${ssts[$(rnd ${#ssts[@]})]} ;;
            log) f=${logs[$(rnd ${#logs[@]})]} ;;
            MANIFEST) f=MANIFEST ;;
        esac
        restore
        off=$(rnd "$(size_of "$store/$f")")
        flip_byte "$store/$f" "$off"
        torn_ok=0
        [ "$f" = "$active_log" ] && [ "$off" -ge "$last_rec" ] && torn_ok=1
        check_case "flip-$kind" "$f" "a flip in $f at $off" "$torn_ok"
    done
done

# --- flips in the bulk write's files
for ((n = 0; n < nflips / 2; n++)); do
    restore; f=${ingested[$(rnd ${#ingested[@]})]}; off=$(rnd "$(size_of "$store/$f")")
    flip_byte "$store/$f" "$off"
    check_case flip-bulk-sst "$f" "a flip in the bulk write's $f at $off" 0
done

# --- truncations: a sorted file and the manifest anywhere, the log inside its last record
for ((n = 0; n < 3; n++)); do
    restore; f=${ssts[$(rnd ${#ssts[@]})]}; len=$(rnd "$(size_of "$store/$f")")
    truncate -s "$len" "$store/$f"; check_case truncate-sst "$f" "$f cut to $len bytes" 0
    restore; len=$(rnd "$(size_of "$store/MANIFEST")")
    truncate -s "$len" "$store/MANIFEST"; check_case truncate-MANIFEST MANIFEST "MANIFEST cut to $len bytes" 0
    restore; size=$(size_of "$store/$active_log"); len=$((last_rec + $(rnd $((size - last_rec)))))
    truncate -s "$len" "$store/$active_log"; check_case truncate-log "$active_log" "$active_log cut to $len bytes" 1
done

# --- deletions
restore; f=${ssts[$(rnd ${#ssts[@]})]}; rm -f "$store/$f"; check_case delete-sst "$f" "$f deleted" 0
restore; f=${ingested[$(rnd ${#ingested[@]})]}; rm -f "$store/$f"
check_case delete-bulk-sst "$f" "the bulk write's $f deleted" 0
restore; rm -f "$store/$active_log"; check_case delete-log "$active_log" "$active_log deleted" 0
restore; rm -f "$store/MANIFEST"; check_case delete-MANIFEST MANIFEST "MANIFEST deleted" 0

restore
wc_cluster_restart || t_bail "the server starts with the pristine store"
t_is "$(wc_psql -c "$(query true)")" "${pristine[0]}" "the pristine store put back reads as before"

for k in flip-sst flip-log flip-MANIFEST flip-bulk-sst truncate-sst truncate-MANIFEST truncate-log \
         delete-sst delete-bulk-sst delete-log delete-MANIFEST; do
    t_diag "$k: ${kind_tried[$k]:-0} tried, ${kind_detected[$k]:-0} detected (XX001), ${kind_harmless[$k]:-0} harmless, ${kind_wrong[$k]:-0} wrong"
done
t_ok "damage: $tried cases, $detected detected (XX001 naming the file), $harmless harmless ($torn of them a dropped torn tail), $wrong wrong" \
    test "$wrong" = 0 -a "$tried" -gt 0
t_ok "no backend was terminated by a signal" \
    test "$(grep -c 'terminated by signal' "$WC_CLUSTER_DIR/server.log")" = 0

t_done
