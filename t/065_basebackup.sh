#!/usr/bin/env bash
# t/065_basebackup.sh -- pg_basebackup taken under load restores widecol tables as it restores
# ordinary ones.
#
# A widecol table w and an ordinary table h are written in the same transactions (t_twin_sql in
# t/testlib.sh: INSERTs, UPDATEs, DELETEs, rollbacks, bulk writes, a TRUNCATE of both) by 3
# sessions while a 4th calls widecol_flush() and widecol_compact() on w, all through
# pg_basebackup -X stream (rate-limited so that it lasts ~12 s).  While it streams the data
# directory: a widecol table k (with an ordinary twin hk) is created and filled, a widecol table
# d2 is created, filled, flushed and dropped, and d1 (filled and flushed before the backup) is
# dropped.  The backup is restored into a new data directory and started (it recovers to the
# backup's end and opens).  Checked there: every row of w equals h, k equals hk; d1 and d2 are
# gone, and base/<database oid>/ holds a widecol_<oid> directory for exactly the widecol tables
# of pg_foreign_table that were used (w and k), no leftover; the restored cluster takes writes,
# flushes and compacts.
# The writers run until the backup has ended and h holds rows of some 900 of their transactions
# (9000 with WIDECOL_LONG=1, where the backup lasts ~30 s).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
minimum=300
t_long && minimum=3000
secs=12
t_long && secs=30

t_twin_create main w h || t_bail "the tables w and h"
{ t_twin_sql w h b0 1 20; echo "SELECT widecol_flush('w');"; t_twin_sql w h b0 2 10; } |
    wc_psql -f - >/dev/null || t_bail "the first writes to w and h"
wc_psql -c "CREATE FOREIGN TABLE d1 ($T_TWIN_COLS) SERVER wide OPTIONS (families 'a,b')" \
        -c "INSERT INTO d1 SELECT 'd1-' || i, 'a', 'q', i, 'to be dropped during the backup' FROM generate_series(1, 2000) i" \
        -c "SELECT widecol_flush('d1')" >/dev/null || t_bail "the table d1"

# --- the load, and the backup while it runs
t_twin_load_start main w h b1 1000000 $((minimum / 3))
progress() {    # progress N: the load committed at least N transactions (rowkeys of h, some)
    [ "$(wc_psql -c "SELECT count(DISTINCT rowkey) >= $1 FROM h WHERE rowkey LIKE 'b1-%'" 2>/dev/null)" = t ]
}
for ((i = 0; i < 600; i++)); do progress 150 && break; sleep 0.1; done
kb=$(du -sk "$WC_PGDATA" --exclude=pg_wal | cut -f1)
rate=$((kb / secs))
((rate < 32)) && rate=32
t_diag "data directory $kb kB (without pg_wal): pg_basebackup -r ${rate}k"
bb=$WC_CLUSTER_DIR/bb
wc_basebackup main "$bb" -r "${rate}k" &
bbpid=$!
wc_on_exit "kill $bbpid"
phase() { wc_psql -c "SELECT phase FROM pg_stat_progress_basebackup" 2>/dev/null; }
for ((i = 0; i < 600; i++)); do [ "$(phase)" = "streaming database files" ] && break; sleep 0.05; done
t_is "$(phase)" "streaming database files" "pg_basebackup streams the data directory while the writers run" ||
    t_bail "pg_basebackup did not start streaming"

t_twin_create main k hk && t_twin_sql k hk kept 1 40 | wc_psql -f - >/dev/null &&
wc_psql -c "SELECT widecol_flush('k')" \
        -c "CREATE FOREIGN TABLE d2 ($T_TWIN_COLS) SERVER wide OPTIONS (families 'a,b')" \
        -c "INSERT INTO d2 SELECT 'd2-' || i, 'b', 'q', i, 'created and dropped during the backup' FROM generate_series(1, 2000) i" \
        -c "SELECT widecol_flush('d2')" >/dev/null || t_bail "the tables k, hk and d2 during the backup"
d1oid=$(wc_psql -c "SELECT 'd1'::regclass::oid"); d2oid=$(wc_psql -c "SELECT 'd2'::regclass::oid")
dboid=$(wc_psql -c "SELECT oid FROM pg_database WHERE datname = current_database()")
# drop them once half of the files are sent: their store directories are most likely in the backup
for ((i = 0; i < 600; i++)); do
    [ "$(wc_psql -c "SELECT backup_streamed * 2 >= backup_total FROM pg_stat_progress_basebackup" 2>/dev/null)" = f ] || break
    sleep 0.05
done
wc_psql -c "DROP FOREIGN TABLE d1" -c "DROP FOREIGN TABLE d2" || t_bail "DROP FOREIGN TABLE d1, d2"
t_is "$(phase)" "streaming database files" "the DROPs of d1 and d2 committed while pg_basebackup still streamed files"
t_ok "their stores are gone from the primary" test ! -e "$WC_PGDATA/base/$dboid/widecol_$d1oid" -a ! -e "$WC_PGDATA/base/$dboid/widecol_$d2oid"

wait "$bbpid"
rc=$?
t_ok "pg_basebackup -X stream ended without error (during the load)" test "$rc" = 0 || t_bail "no backup"
t_ok "the writers still ran when it ended" t_twin_writers_running
for ((i = 0; i < 1200; i++)); do progress "$((minimum * 3 * 9 / 10))" && break; sleep 0.1; done
t_twin_load_stop
t_twin_load_wait "the load"
t_twin_compare main w h "the primary after the load"
t_diag "the backup: $(du -sh "$bb" | cut -f1); in it $(cd "$bb/base/$dboid" && ls -d widecol_* 2>/dev/null | tr '\n' ' ')"

# --- the restored backup
wc_node_from_backup rb "$bb" || t_bail "a copy of the backup"
t_ok "the restored backup starts (recovery to the end of the backup)" wc_node_start rb || t_bail "the restored cluster"
t_ok "... and leaves recovery" wc_node_wait_primary rb
t_twin_compare rb w h "the restored backup"
t_twin_compare rb k hk "the restored backup, a table created during the backup"
t_is "$(wc_node_psql rb -c "SELECT count(*) FROM pg_class WHERE relname IN ('d1', 'd2')")" 0 \
    "in the restored backup, d1 and d2 are dropped"
rdata=$(wc_node_pgdata rb)
dirs=$(cd "$rdata/base/$dboid" && ls -d widecol_* 2>/dev/null | sort | tr '\n' ' ')
want=$(wc_node_psql rb -c "SELECT 'widecol_' || ftrelid FROM pg_foreign_table" | sort | tr '\n' ' ')
t_is "$(wc_node_psql rb -c "SELECT string_agg(ftrelid::regclass::text, ',' ORDER BY ftrelid::regclass::text) FROM pg_foreign_table")" "k,w" \
    "in the restored backup, pg_foreign_table lists w and k"
t_is "$dirs" "$want" "the restored base/$dboid/ holds a store for each table of pg_foreign_table, nothing of d1 (widecol_$d1oid) or d2 (widecol_$d2oid)"

t_ok "the restored cluster takes writes, flushes and compacts" t_twin_writes rb w h after
t_twin_compare rb w h "the restored backup after its own writes"

t_done
