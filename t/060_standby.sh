#!/usr/bin/env bash
# t/060_standby.sh -- a streaming hot standby carries widecol tables as it carries ordinary ones.
#
# A widecol table w and an ordinary table h (the same five columns) are written in the same
# transactions (t_twin_sql in t/testlib.sh: INSERTs, UPDATEs of values and of keys, DELETEs,
# rollbacks, savepoints rolled back, bulk writes, one TRUNCATE of both), so that w must always
# read exactly as h.  The primary has shared_preload_libraries = 'widecol_fdw' (scripts/lib.sh).
#   1. A standby is made with pg_basebackup -R (a replication slot) after some writes and a
#      flush; it reads them.  A second pair w2/h2 is created on the primary after that.
#   2. Load 1: 3 writer sessions, a 4th calling widecol_flush() and widecol_compact() on w in a
#      loop, while hot-standby queries run on the standby (none may fail).  Then, after the
#      standby replayed up to the primary's pg_current_wal_lsn(): every row of w equals h, on
#      the primary and on the standby; w2 equals h2 on the standby.  On the standby INSERT,
#      UPDATE, DELETE and TRUNCATE of w fail like those of h: read-only transaction (25006).
#   3. Load 2, during which the standby is killed (kill -9) and restarted: once it caught up,
#      w equals h on it again.
#   4. The standby is promoted; load 3 writes to it (and flushes and compacts w and w2); w
#      equals h and w2 equals h2 there; after a kill -9 of it and its crash recovery, again.
# 1000 transactions per writer in load 1 (600 in load 2, 333 in load 3); 3000 with
# WIDECOL_LONG=1.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
ntx=1000
t_long && ntx=3000

# --- 1. the standby
t_twin_create main w h || t_bail "the tables w and h"
{ t_twin_sql w h p0 1 20; echo "SELECT widecol_flush('w');"; t_twin_sql w h p0 2 10; } |
    wc_psql -f - >/dev/null || t_bail "the first writes to w and h"
wc_standby_create sb || t_bail "a streaming standby made with pg_basebackup -R"
t_diag "primary on port $(wc_node_port main), standby on port $(wc_node_port sb)"
t_is "$(wc_node_psql sb -c "SELECT pg_is_in_recovery()")" t "the standby is in recovery (a hot standby)"
t_twin_compare sb w h "the standby as pg_basebackup made it"

t_twin_create main w2 h2 || t_bail "the tables w2 and h2"
t_twin_sql w2 h2 late 1 30 | wc_psql -f - >/dev/null || t_bail "writes to w2 and h2"

# --- 2. load 1, with hot-standby queries
t_twin_load_start main w h p1 "$ntx" $((ntx / 3))
reads=0; rerr=0; first_err=
while t_twin_writers_running; do
    if out=$(wc_node_psql sb -c "SELECT count(*), count(DISTINCT rowkey) FROM w" -c "SELECT count(*) FROM h" \
                            -c "SELECT count(*) FROM w WHERE rowkey LIKE 'p1-2-%' AND family = 'a'" 2>&1); then
        reads=$((reads + 1))
    else
        rerr=$((rerr + 1))
        [ -n "$first_err" ] || first_err=$out
    fi
    sleep 0.2
done
t_twin_load_wait "load 1"
t_ok "hot-standby queries on the standby never failed during load 1 ($reads rounds, $rerr failed)" \
    test "$rerr" = 0 -a "$reads" -gt 0 || printf '%s\n' "$first_err" | head -n 3 | sed 's/^/#   /'
t_twin_compare main w h "the primary after load 1"
t_ok "the standby replays the primary's WAL up to its current position" wc_wait_replay sb
t_twin_compare sb w h "the standby after load 1"
t_twin_compare sb w2 h2 "the standby, tables created after it was made"

# writes on the standby fail as on an ordinary table
for stmt in "INSERT INTO @ VALUES ('ro', 'a', 'q', 1, 'v')" "UPDATE @ SET value = 'x' WHERE rowkey = 'p0-1-000001'" \
            "DELETE FROM @ WHERE rowkey = 'p0-1-000001'" "TRUNCATE @"; do
    ew=$(wc_node_psql sb -v VERBOSITY=verbose -c "${stmt//@/w}" 2>&1)
    eh=$(wc_node_psql sb -v VERBOSITY=verbose -c "${stmt//@/h}" 2>&1)
    sw=$(sed -nE 's/^ERROR:  ([0-9A-Z]{5}):.*/\1/p' <<<"$ew" | head -n 1)
    sh=$(sed -nE 's/^ERROR:  ([0-9A-Z]{5}):.*/\1/p' <<<"$eh" | head -n 1)
    t_is "${sw:-no error} ${sh:-no error}" "25006 25006" \
        "on the standby, '${stmt%% @*} w' fails like '${stmt%% @*} h': read-only transaction" ||
        t_diag "w: $(head -n 1 <<<"$ew")"
done
if out=$(wc_node_psql sb -c "SELECT widecol_flush('w')" 2>&1); then
    t_diag "widecol_flush('w') on the standby: succeeded"
else
    t_diag "widecol_flush('w') on the standby: $(head -n 1 <<<"$out")"
fi
t_twin_compare sb w h "the standby after those attempts"

# --- 3. kill -9 of the standby during load 2
t_twin_load_start main w h p2 $((ntx * 3 / 5))
# the kill comes once a quarter of load 2 is committed; the restart after another quarter
progress() { [ "$(wc_psql -c "SELECT count(DISTINCT rowkey) >= $1 FROM h WHERE rowkey LIKE 'p2-%'")" = t ]; }
for ((i = 0; i < 600; i++)); do progress $((ntx * 3 * 3 / 5 / 4)) && break; sleep 0.1; done
t_ok "load 2 still runs when the standby is killed" t_twin_writers_running
t_diag "the standby had replayed up to $(wc_node_psql sb -c "SELECT pg_last_wal_replay_lsn()" 2>&1)"
t_ok "kill -9 of the standby's postmaster and processes" wc_node_kill9 sb
for ((i = 0; i < 600; i++)); do progress $((ntx * 3 * 3 / 5 / 2)) && break; sleep 0.1; done
t_ok "the standby starts again after the kill -9, with more writes done meanwhile" wc_node_start sb
t_twin_load_wait "load 2"
t_twin_compare main w h "the primary after load 2"
t_ok "the restarted standby catches up with the primary" wc_wait_replay sb
t_twin_compare sb w h "the standby after its kill -9 and load 2"

# --- 4. promotion
t_ok "the standby is promoted" wc_node_promote sb
t_twin_compare sb w h "the promoted standby, before it writes"
writes_w2() { t_twin_sql w2 h2 after 1 20 | wc_node_psql sb -f - >/dev/null; }
t_ok "the promoted standby takes writes to w2 and h2" writes_w2
t_twin_load_start sb w h p3 $((ntx / 3)) 0 w2
t_twin_load_wait "load 3 (on the promoted standby)"
t_twin_compare sb w h "the promoted standby after its own writes"
t_twin_compare sb w2 h2 "the promoted standby after its own writes"
t_ok "kill -9 of the promoted standby" wc_node_kill9 sb
t_ok "it starts again (crash recovery)" wc_node_start sb
t_twin_compare sb w h "the promoted standby after its crash recovery"
t_twin_compare sb w2 h2 "the promoted standby after its crash recovery"

t_done
