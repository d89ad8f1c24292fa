#!/usr/bin/env bash
# t/105_log_sync.sh -- a logged table's commit waits for the WAL only; its store's log is made
# durable by the syncer before each checkpoint completes (src/sync.c).
#
# The WAL is read with pg_walinspect (contrib): our resource manager's records are named
# widecol_fdw/WRITE, widecol_fdw/SYNC, ...
#   1. The syncer runs (pg_stat_activity: backend_type 'widecol_fdw syncer').
#   2. 20 one-row commits into a logged table: 20 WRITE records of its log and not one SYNC
#      (before the syncer, each commit fsynced the log: a SYNC record each).
#   3. CHECKPOINT completes, and the SYNC of the table's log lies between the checkpoint's redo
#      point and its checkpoint record: made durable while the checkpoint waited, before it
#      completed.  A second checkpoint with no write since syncs nothing.
#   4. widecol_fdw.log_sync = commit: every commit fsyncs again (a SYNC record each).
#   5. The syncer terminated (pg_terminate_backend): it is started again; until then a commit
#      fsyncs its log itself (a SYNC record); checkpoints complete meanwhile; after its return
#      commits write no SYNC again.
#   6. A load on twin tables (3 writers, flush and compaction) with a CHECKPOINT every 0.3 s:
#      every checkpoint completes, writers never fail, then kill -9 of the whole cluster: after
#      crash recovery the widecol table holds exactly the ordinary table's rows.
#   7. Orphans: commits with synchronous_commit off while the WAL writer is stopped (and a
#      checkpoint among them), then kill -9: the last commits' log records are in the store but
#      not in the WAL.  Crash recovery cuts them (its server log says how many bytes); the table
#      reads as the ordinary twin, also once 40 new transactions have taken the lost xids; the
#      store's logs are byte for byte the standby's, and the standby reads every write made
#      after the restart.
# 400 transactions per writer in the load (1200 with WIDECOL_LONG=1).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
ntx=400
t_long && ntx=1200
wc_psql -c "CREATE EXTENSION pg_walinspect" >/dev/null || t_bail "CREATE EXTENSION pg_walinspect"
wc_psql -c "CREATE FOREIGN TABLE t (rowkey text, family text, qualifier text, ts bigint, value text)
            SERVER wide OPTIONS (families 'f')" >/dev/null || t_bail "a logged widecol table"
wc_psql -c "INSERT INTO t VALUES ('first', 'f', 'q', 1, 'v')" >/dev/null || t_bail "a first write"

lsn() { wc_psql -c "SELECT pg_current_wal_insert_lsn()"; }
# records FROM TO TYPE: how many widecol_fdw records of TYPE lie in [FROM, TO)
records() {
    wc_psql -c "SELECT count(*) FROM pg_get_wal_records_info('$1', '$2')
                WHERE resource_manager = 'widecol_fdw' AND record_type = '$3'"
}
# commits PREFIX N [LOG_SYNC]: N one-row transactions into t, each in a session of its own
commits() {
    local i set=()
    [ -n "${3:-}" ] && set=(-c "SET widecol_fdw.log_sync = $3")
    for ((i = 1; i <= $2; i++)); do
        wc_psql "${set[@]}" -c "INSERT INTO t VALUES ('$1-$i', 'f', 'q', $i, 'v')" >/dev/null || return 1
    done
}
syncer_pid() { wc_psql -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'widecol_fdw syncer'"; }

# --- 1. the syncer
t_ok "the syncer runs (pg_stat_activity)" test -n "$(syncer_pid)"

# --- 2. commits write no SYNC
wc_psql -c "CHECKPOINT" >/dev/null
a=$(lsn)
commits c 20 || t_bail "20 one-row commits"
b=$(lsn)
t_is "$(records "$a" "$b" WRITE) $(records "$a" "$b" SYNC)" "20 0" \
    "20 one-row commits: 20 WRITE records of the log, no SYNC (no fsync at commit)"

# --- 3. the checkpoint syncs the log before it completes
t_ok "CHECKPOINT completes (within 60 s)" timeout 60 "$WC_PGBIN/psql" -X -qAt -c "CHECKPOINT"
read -r redo ckpt <<<"$(wc_psql -F ' ' -c "SELECT redo_lsn, checkpoint_lsn FROM pg_control_checkpoint()")"
t_ok "the checkpoint's redo point follows the commits" \
    test "$(wc_psql -c "SELECT '$redo'::pg_lsn >= '$b'::pg_lsn")" = t
n=$(records "$redo" "$ckpt" SYNC)
t_ok "the table's log is fsynced while the checkpoint waits: a SYNC between its redo point and its record ($n)" \
    test "$n" -ge 1
c=$(lsn)
t_ok "a second CHECKPOINT with no write since completes" timeout 60 "$WC_PGBIN/psql" -X -qAt -c "CHECKPOINT"
t_is "$(records "$c" "$(lsn)" SYNC)" 0 "... and syncs nothing"

# --- 4. log_sync = commit
a=$(lsn)
commits s 5 commit || t_bail "5 commits with log_sync = commit"
b=$(lsn)
t_is "$(records "$a" "$b" SYNC)" 5 "widecol_fdw.log_sync = commit: a SYNC (an fsync) with each of 5 commits"

# --- 5. without the syncer, commits fsync themselves
old=$(syncer_pid)
wc_psql -c "SELECT pg_terminate_backend($old)" >/dev/null
for i in $(seq 1 50); do [ -z "$(syncer_pid)" ] && break; sleep 0.02; done
if [ -z "$(syncer_pid)" ]; then
    a=$(lsn)
    commits g 1 || t_bail "a commit without the syncer"
    t_is "$(records "$a" "$(lsn)" SYNC)" 1 "with the syncer gone, a commit fsyncs its log itself (a SYNC)"
else
    t_diag "the syncer came back before the commit could be made without it"
    t_ok "with the syncer gone, a commit fsyncs its log itself # SKIP it came back too soon" true
fi
t_ok "a CHECKPOINT completes while the syncer is away or restarting" \
    timeout 60 "$WC_PGBIN/psql" -X -qAt -c "CHECKPOINT"
for i in $(seq 1 100); do new=$(syncer_pid); [ -n "$new" ] && [ "$new" != "$old" ] && break; sleep 0.1; done
t_ok "the syncer is started again (pid $old, then ${new:-none})" test -n "$new" -a "$new" != "$old"
sleep 0.2
a=$(lsn)
commits h 3 || t_bail "commits after the syncer's return"
t_is "$(records "$a" "$(lsn)" SYNC)" 0 "after its return, commits write no SYNC again"

# --- 6. a load with checkpoints, then a crash
t_twin_create main w h || t_bail "the tables w and h"
t_twin_load_start main w h ld "$ntx"
ck=0; ckfail=0
while t_twin_writers_running; do
    if timeout 60 "$WC_PGBIN/psql" -X -qAt -c "CHECKPOINT" >/dev/null 2>&1; then
        ck=$((ck + 1))
    else
        ckfail=$((ckfail + 1))
    fi
    sleep 0.3
done
t_twin_load_wait "the load"
t_ok "$ck checkpoints beside the load, each completed in time ($ckfail failed)" test "$ckfail" = 0 -a "$ck" -gt 0
t_twin_compare main w h "before the crash"
wc_cluster_kill9
wc_cluster_restart || t_bail "the cluster restarts after kill -9"
t_twin_compare main w h "after kill -9 and crash recovery"
t_ok "the syncer runs again after the crash" test -n "$(syncer_pid)"
t_ok "writes and a checkpoint work after the crash" \
    wc_psql -c "INSERT INTO t VALUES ('after', 'f', 'q', 1, 'v')" -c "CHECKPOINT"

# --- 7. a crash that loses the last commits' WAL
# A commit's record reaches the store's log before its WAL is flushed (src/wal.c,
# wcfdw_wal_change).  With synchronous_commit off and the WAL writer stopped, the last commits'
# WAL records stay in WAL buffers, and kill -9 loses them but not the log's bytes (orphan
# records).  Recovery must cut them: the widecol table must read as the ordinary twin (whose
# commits were lost the same way), even once new transactions have taken the lost xids; the
# store's logs must equal the standby's, which never had the orphans; and the standby must read
# every later write (appended where the orphans were).
wc_standby_create sb || t_bail "a streaming standby"
t_twin_create main w2 h2 || t_bail "the tables w2 and h2"
wc_psql -c "CREATE TABLE burn (i int)" >/dev/null || t_bail "a table to burn xids with"
t_twin_sql w2 h2 o0 1 20 | wc_psql -f - >/dev/null || t_bail "writes to w2 and h2"
t_ok "the standby replays them" wc_wait_replay sb
# redo must start after the log was created (replaying its creation would remove the orphans)
wc_psql -c "CHECKPOINT" >/dev/null || t_bail "CHECKPOINT"
ww=$(wc_psql -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'")
kill -STOP "$ww" || t_bail "stop the WAL writer"
# a checkpoint in the middle: the orphans after it must be found from its redo point
{ echo "SET synchronous_commit = off;"; t_twin_sql w2 h2 o1 1 5; echo "CHECKPOINT;";
  t_twin_sql w2 h2 o1 2 5; } | wc_psql -f - >/dev/null ||
    t_bail "asynchronous commits to w2 and h2"
before=$(wc_psql -c "SELECT count(*) FROM h2")
dir_w2=$(wc_psql -c "SELECT setting FROM pg_settings WHERE name = 'data_directory'")/base/$(wc_psql -c "SELECT oid FROM pg_database WHERE datname = current_database()")/widecol_$(wc_psql -c "SELECT 'w2'::regclass::oid")
last_log() { ls "$dir_w2" | grep '\.log$' | sort | tail -n 1; }
size_before=$(stat -c %s "$dir_w2/$(last_log)")
wc_cluster_kill9
slog=$(wc_node_log main)
skip=$(wc_as_cluster_user cat "$slog" | wc -l)
wc_cluster_restart || t_bail "the cluster restarts after kill -9"
lost=$((before - $(wc_psql -c "SELECT count(*) FROM h2")))
t_diag "the crash took $lost rows of asynchronous commits from the ordinary table"
cut=$(wc_as_cluster_user cat "$slog" | tail -n +$((skip + 1)) |
      sed -n "s/.*widecol_fdw: removed \([0-9]*\) bytes of log records whose WAL was lost from store \".*widecol_$(wc_psql -c "SELECT 'w2'::regclass::oid")\".*/\1/p" | head -n 1)
t_ok "recovery cut the orphan records of w2 (${cut:-no} bytes of a log of $size_before)" \
    test "$lost" -gt 0 -a -n "$cut" -a "${cut:-0}" -gt 0 -a "${cut:-0}" -lt "$size_before"
# before anything reads w2, new transactions take the lost commits' xids (none of them reached
# the WAL, so recovery hands them out again): an orphan left behind would now read as committed
for i in $(seq 1 40); do echo "INSERT INTO burn VALUES ($i);"; done | wc_psql -f - >/dev/null ||
    t_bail "40 transactions after the restart"
t_twin_compare main w2 h2 "after the crash that lost the last commits' WAL, and 40 transactions"
sbdir=$(wc_node_pgdata sb)/${dir_w2#$(wc_psql -c "SELECT setting FROM pg_settings WHERE name = 'data_directory'")/}
same_logs() {
    local f differ=0
    for f in $(ls "$dir_w2" | grep '\.log$'); do
        cmp -s "$dir_w2/$f" "$sbdir/$f" || { differ=$((differ + 1)); t_diag "log $f differs from the standby's"; }
    done
    t_ok "$1: the store's logs are byte for byte the standby's ($differ differ)" test "$differ" = 0
}
# three small commits (no log switch, no flush): appended where the orphans were
t_twin_sql w2 h2 o2 1 3 | wc_psql -f - >/dev/null || t_bail "writes after the restart"
t_ok "the standby replays them" wc_wait_replay sb
t_twin_compare sb w2 h2 "the first writes after the restart, on the standby"
same_logs "the first writes after the restart"
t_twin_sql w2 h2 o3 1 30 | wc_psql -f - >/dev/null || t_bail "more writes after the restart"
t_twin_compare main w2 h2 "writes after the restart, on the primary"
t_ok "the standby replays them" wc_wait_replay sb
t_twin_compare sb w2 h2 "writes after the restart, on the standby"
same_logs "writes after the restart"

t_done
