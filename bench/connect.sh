#!/usr/bin/env bash
# bench/connect.sh -- what a new connection costs: connections a second of `pgbench -C` (a new
# session for every transaction), each running one point read of a wide table and of an ordinary
# table with the same records, with the wide table's writes flushed and with megabytes of them
# still in its log (unflushed), on one throw-away cluster, side by side in one run.
#
#   bash bench/connect.sh [--records N] [--log-mb LIST] [--seconds S] [--reps R]
#
#   --records N    records of 10 fields of 100 bytes in each table [20000]
#   --log-mb LIST  comma-separated sizes of unflushed log to measure with, 0 = flushed [0,4]
#   --seconds S    length of each pgbench run [4]
#   --reps R       runs of every measurement, alternating the tables; the median is kept [3]
#
# A session that opens a widecol table learns what its live logs hold (what each record
# commits, the truncate point, what is in progress): since session 33 from their shared index
# where other sessions indexed them, reading only the rest (engine/DESIGN.md, "Shared
# memtables"); before, by reading every record.  An ordinary table's new session reads nothing
# of the table's past.  The log is filled by one-field
# UPDATE transactions of random records (8 pgbench clients), as an application's writes leave
# it, until it holds the size asked.  Builds and installs the extension (WC_DESTDIR=DIR for a
# private installation, see scripts/lib.sh).  Prints connections a second per table and log
# size, and the ratio to the ordinary table.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

RECORDS=20000
LOG_MB=0,4
SECONDS_RUN=4
REPS=3
while [ $# -gt 0 ]; do
    case "$1" in
        --records) RECORDS=$2; shift 2 ;;
        --log-mb) LOG_MB=$2; shift 2 ;;
        --seconds) SECONDS_RUN=$2; shift 2 ;;
        --reps) REPS=$2; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) wc_die "unknown option $1 (try --help)" ;;
    esac
done
[[ "$RECORDS" =~ ^[0-9]+$ ]] && [ "$RECORDS" -ge 100 ] || wc_die "--records must be at least 100"
[[ "$LOG_MB" =~ ^[0-9]+(,[0-9]+)*$ ]] || wc_die "--log-mb must be a comma-separated list of integers"
[[ "$SECONDS_RUN" =~ ^[0-9]+$ ]] && [ "$SECONDS_RUN" -ge 1 ] || wc_die "--seconds must be a positive integer"
[[ "$REPS" =~ ^[0-9]+$ ]] && [ "$REPS" -ge 1 ] || wc_die "--reps must be a positive integer"

# few checkpoints while the log fills (with the default max_wal_size the log was flushed in
# pieces of about 1 MB and never reached 4 MB)
WC_EXTRA_CONF="max_wal_size = '8GB'
checkpoint_timeout = '30min'
${WC_EXTRA_CONF:-}"
wc_need_packages "${WC_BUILD_PACKAGES[@]}" postgresql-client-$WC_PGVERSION
wc_build "$(mktemp /tmp/widecol-connect-build.XXXXXX)" || wc_die "the build failed"
wc_cluster_start || wc_die "could not start a cluster"
PGBENCH=$WC_PGBIN/pgbench
WORK=$(mktemp -d /tmp/widecol-connect.XXXXXX)
chmod 755 "$WORK"
wc_on_exit "rm -rf '$WORK'"

fields() { local i s=; for i in 0 1 2 3 4 5 6 7 8 9; do s+="${s:+, }field$i $1"; done; echo "$s"; }
wide_fields() { local i s=; for i in 0 1 2 3 4 5 6 7 8 9; do s+=", field$i text OPTIONS (cell 'f:field$i')"; done; echo "$s"; }
wc_psql <<SQL >/dev/null || wc_die "could not make the tables"
CREATE EXTENSION widecol_fdw;
CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw;
CREATE TABLE usertable (ycsb_key varchar PRIMARY KEY, $(fields text));
CREATE FOREIGN TABLE usertable_wc (rowkey varchar$(wide_fields))
    SERVER wide OPTIONS (families 'f', max_versions '1');
INSERT INTO usertable SELECT 'user' || lpad(i::text, 10, '0'),
    $(for i in 0 1 2 3 4 5 6 7 8 9; do printf "md5(i::text || '$i') || repeat('x', 68)%s" "$([ $i -lt 9 ] && echo ', ')"; done)
    FROM generate_series(1, $RECORDS) i;
INSERT INTO usertable_wc SELECT * FROM usertable;
SELECT widecol_compact('usertable_wc');
VACUUM ANALYZE usertable;
SQL
STOREDIR=$(wc_psql -c "SELECT format('%s/base/%s/widecol_%s', current_setting('data_directory'),
                          (SELECT oid FROM pg_database WHERE datname = current_database()),
                          'usertable_wc'::regclass::oid)")
log_bytes() { cat "$STOREDIR"/*.log 2>/dev/null | wc -c; }

printf '\\set k random(1, %d)\nSELECT * FROM usertable WHERE ycsb_key = %s;\n' "$RECORDS" \
    "'user' || lpad(:k::text, 10, '0')" >"$WORK/heap.sql"
printf '\\set k random(1, %d)\nSELECT * FROM usertable_wc WHERE rowkey = %s;\n' "$RECORDS" \
    "'user' || lpad(:k::text, 10, '0')" >"$WORK/wc.sql"
printf '\\set k random(1, %d)\nUPDATE usertable_wc SET field3 = md5(random()::text) || repeat(%s, 68) WHERE rowkey = %s;\n' \
    "$RECORDS" "'y'" "'user' || lpad(:k::text, 10, '0')" >"$WORK/update.sql"

# conn TABLE: connections a second of one pgbench -C run
conn() {
    "$PGBENCH" -n -C -c 1 -j 1 -T "$SECONDS_RUN" -f "$WORK/$1.sql" 2>/dev/null |
        sed -nE 's/^tps = ([0-9.]+) .*/\1/p'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '\nnew connections a second, each running one point read (pgbench -C, 1 client; median of %d runs of %d s)\n' \
    "$REPS" "$SECONDS_RUN"
printf '%-28s %12s %12s %10s   %s\n' "widecol log (unflushed)" ordinary widecol ratio "runs (ordinary; widecol)"
IFS=, read -ra sizes <<<"$LOG_MB"
for mb in "${sizes[@]}"; do
    wc_psql -c "SELECT widecol_compact('usertable_wc')" >/dev/null || wc_die "widecol_compact failed"
    want=$((mb * 1024 * 1024))
    for ((i = 0; i < 200 && $(log_bytes) < want; i++)); do
        "$PGBENCH" -n -c 8 -j 8 -t 250 -f "$WORK/update.sql" >/dev/null 2>&1 || wc_die "the updates failed"
    done
    got=$(log_bytes)
    : >"$WORK/heap.tps"; : >"$WORK/wc.tps"
    for ((r = 1; r <= REPS; r++)); do
        order=(heap wc)
        [ $((r % 2)) -eq 0 ] && order=(wc heap)
        for t in "${order[@]}"; do echo "$(conn "$t")" >>"$WORK/$t.tps"; done
    done
    h=$(median <"$WORK/heap.tps"); w=$(median <"$WORK/wc.tps")
    printf '%-28s %12.0f %12.0f %9.2fx   %s; %s\n' "$(awk -v b="$got" 'BEGIN { printf "%.1f MB", b / 1048576 }')" \
        "$h" "$w" "$(awk -v a="$w" -v b="$h" 'BEGIN { print (b > 0) ? a / b : 0 }')" \
        "$(awk '{ printf "%s%.0f", (NR > 1 ? " " : ""), $1 }' "$WORK/heap.tps")" \
        "$(awk '{ printf "%s%.0f", (NR > 1 ? " " : ""), $1 }' "$WORK/wc.tps")"
done
