#!/usr/bin/env bash
# bench/memory.sh -- the memory sessions add for the tables they read: CONNS sessions, each
# reading every one of TABLES tables whose cells are all unflushed (still in their logs, whose
# index is in shared memory, or, with widecol_fdw.shared_memtable_size = 0, in the memory of
# every session that reads the table), then idle.  The private (anonymous) resident memory of
# those backends, summed, against the same with ordinary tables holding the same rows: with
# shared memtables, then without them with widecol_fdw.session_memory unlimited (-1), at its
# default and at a small value.  One throw-away cluster, one run (restarted once).
#
#   bash bench/memory.sh [--conns N] [--tables T] [--cells C]
#
#   --conns N    sessions [50]
#   --tables T   tables, each read by every session [20]
#   --cells C    cells per table (value 200 bytes), all unflushed [8000]
#
# Prints, per configuration: total RssAnon of the sessions' backends (MB: their private
# memory), per session, and their total Pss (private memory plus each one's share of the
# shared pages it touched: shared buffers, the pages of mapped files such as the logs whose
# values readers leave in place), the memory they cost together.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CONNS=50
TABLES=20
CELLS=8000
while [ $# -gt 0 ]; do
    case "$1" in
        --conns) CONNS=$2; shift 2 ;;
        --tables) TABLES=$2; shift 2 ;;
        --cells) CELLS=$2; shift 2 ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) wc_die "unknown option $1 (try --help)" ;;
    esac
done

wc_need_packages "${WC_BUILD_PACKAGES[@]}"
bench_build memory
WC_EXTRA_CONF="max_connections = $((CONNS + 10))" wc_cluster_start || wc_die "could not start a cluster"
WORK=$(mktemp -d /tmp/widecol-memory.XXXXXX)
wc_on_exit "rm -rf '$WORK'"

wc_psql -c "CREATE EXTENSION widecol_fdw" -c "CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw" >/dev/null
for ((i = 1; i <= TABLES; i++)); do
    wc_psql >/dev/null <<SQL
CREATE FOREIGN TABLE w$i (rowkey text, family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families 'f');
CREATE TABLE h$i (rowkey text, family text, qualifier text, ts bigint, value text,
                  PRIMARY KEY (rowkey, family, qualifier, ts));
SET widecol_fdw.bulk_write_size = -1;
INSERT INTO w$i SELECT 'row' || lpad(g::text, 8, '0'), 'f', 'q', 1, repeat('v', 200)
    FROM generate_series(1, $CELLS) g;
INSERT INTO h$i SELECT * FROM w$i;
SQL
done
check_so
wc_say "$TABLES tables of $CELLS unflushed cells each; the flushed cells of widecol tables: $(wc_psql -c \
    "SELECT coalesce(sum(cells), 0) FROM pg_class c, widecol_stats(c.oid) WHERE c.relname ~ '^w[0-9]+$'")"

# measure KIND PREFIX SETTING: CONNS sessions read every table PREFIXn, then sleep; the sum of
# their backends' RssAnon while they sleep
measure() {
    local kind=$1 prefix=$2 setting=$3 i pids=() total n
    for ((c = 1; c <= CONNS; c++)); do
        {
            echo "SET widecol_fdw.session_memory = '$setting';"
            for ((i = 1; i <= TABLES; i++)); do echo "SELECT count(value) FROM $prefix$i;"; done
            echo "SELECT pg_sleep(600);"
        } | PGAPPNAME=mem-$kind "$WC_PGBIN/psql" -X -q -At -f - >/dev/null 2>&1 &
        pids+=($!)
    done
    for ((i = 0; i < 600; i++)); do
        n=$(wc_psql -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mem-$kind'
                        AND query LIKE 'SELECT pg_sleep%'")
        [ "$n" -ge "$CONNS" ] && break
        sleep 0.5
    done
    total=0 pss=0
    for p in $(wc_psql -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'mem-$kind'"); do
        total=$((total + $(awk '/^RssAnon:/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0)))
        pss=$((pss + $(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)))
    done
    wc_psql -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'mem-$kind'" >/dev/null
    wait "${pids[@]}" 2>/dev/null
    printf '%-42s %10.1f MB %10.2f MB %10.1f MB\n' "$kind" "$(awk -v k="$total" 'BEGIN { print k / 1024 }')" \
        "$(awk -v k="$total" -v c="$CONNS" 'BEGIN { print k / 1024 / c }')" \
        "$(awk -v k="$pss" 'BEGIN { print k / 1024 }')"
}

printf '\n%d sessions each reading %d tables of %d unflushed cells (%s)\n' "$CONNS" "$TABLES" "$CELLS" "$BENCH_COMMIT"
printf '%-42s %13s %13s %13s\n' configuration "RssAnon, all" "per session" "Pss, all"
measure "ordinary tables" h 64MB
measure "widecol, shared memtables" w 64MB
# the index in each session's memory, as without the preload: the shared memtables turned off
wc_psql -c "ALTER SYSTEM SET widecol_fdw.shared_memtable_size = 0" >/dev/null
wc_as_cluster_user "$WC_PGBIN/pg_ctl" -D "$WC_PGDATA" -w -m fast stop >/dev/null
wc_cluster_restart >/dev/null || wc_die "could not restart the cluster"
[ "$(wc_psql -c "SHOW widecol_fdw.shared_memtable_size")" = 0 ] || wc_die "the setting did not take"
measure "widecol, own index, session_memory = -1" w -1
measure "widecol, own index, session_memory = 64MB" w 64MB
measure "widecol, own index, session_memory = 8MB" w 8MB
