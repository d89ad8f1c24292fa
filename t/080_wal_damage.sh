#!/usr/bin/env bash
# t/080_wal_damage.sh -- what the WAL lets recovery repair, and what it reports.
#
#  1. A logged table's store log whose last record was damaged on disk after its commit was
#     acknowledged (a flipped byte): a crash (kill -9) and recovery restore it from the WAL,
#     every committed row back.  (The store's own torn-tail rule would drop that commit
#     silently; an unlogged table still does, and the test says so.)
#  2. Records of a table that was dropped later in the WAL: recovery replays them and the
#     drop's record removes the store again; nothing is left behind, nothing fails.
#  3. A damaged sorted file on a standby: a query there fails with XX001 naming the file, and
#     the primary is unaffected.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
db_oid=$(wc_psql -c "SELECT oid FROM pg_database WHERE datname = current_database()")
store_of() { echo "$WC_PGDATA/base/$db_oid/widecol_$(wc_psql -c "SELECT '$1'::regclass::oid")"; }

# flip_byte FILE OFFSET: inverts one byte of FILE in place
flip_byte() {
    python3 - "$1" "$2" <<'EOF'
import sys
path, off = sys.argv[1], int(sys.argv[2])
with open(path, 'r+b') as f:
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(bytes([b[0] ^ 0xff]))
EOF
}

last_log() { ls "$1"/*.log | sort | tail -n 1; }

# --- 1. a damaged last record, repaired by recovery
wc_psql -c "CREATE FOREIGN TABLE lg (rowkey text, family text, qualifier text, ts bigint, value text)
              SERVER wide OPTIONS (families 'f')" \
        -c "CREATE FOREIGN TABLE ul (rowkey text, family text, qualifier text, ts bigint, value text)
              SERVER wide OPTIONS (families 'f', logged 'false')" \
        -c "CHECKPOINT" >/dev/null || t_bail "the tables lg and ul"
for t in lg ul; do
    for ((i = 0; i < 20; i++)); do
        echo "INSERT INTO $t SELECT 'r$i-' || j, 'f', 'q', j, 'value $i ' || j FROM generate_series(1, 10) j;"
    done | wc_psql -f - >/dev/null || t_bail "the writes to $t"
done
want=$(wc_psql -c "SELECT count(*), md5(string_agg(rowkey || value, ',' ORDER BY rowkey)) FROM lg")
t_is "${want%%|*}" 200 "200 rows in lg before the damage"
t_is "$(wc_psql -c "SELECT count(*) FROM ul")" 200 "200 rows in the unlogged twin"
for t in lg ul; do
    log=$(last_log "$(store_of $t)")
    size=$(stat -c %s "$log")
    flip_byte "$log" $((size - 30))
done
wc_cluster_kill9 && wc_cluster_restart || t_bail "the crash and restart"
t_is "$(wc_psql -c "SELECT count(*), md5(string_agg(rowkey || value, ',' ORDER BY rowkey)) FROM lg")" \
    "$want" "a logged table's damaged last record is restored by recovery: every committed row is back"
t_diag "the unlogged twin after the same damage: $(wc_psql -c "SELECT count(*) FROM ul") of 200 rows (its torn-tail rule drops the last commit)"

# --- 2. records of a table dropped later are replayed harmlessly
wc_psql -c "CHECKPOINT" \
        -c "CREATE FOREIGN TABLE dd (rowkey text, value text) SERVER wide OPTIONS (families 'f')" \
        -c "INSERT INTO dd SELECT 'k' || i, repeat('x', 100) FROM generate_series(1, 3000) i" \
        -c "SELECT widecol_flush('dd')" >/dev/null || t_bail "the table dd"
dd_dir=$(store_of dd)
t_ok "dd has a store with files" test -f "$dd_dir/MANIFEST"
wc_psql -c "DROP FOREIGN TABLE dd" -c "INSERT INTO lg VALUES ('after-drop', 'f', 'q', 1, 'x')" >/dev/null ||
    t_bail "DROP FOREIGN TABLE dd"
t_ok "the drop removed dd's store" test ! -e "$dd_dir"
wc_cluster_kill9 && wc_cluster_restart || t_bail "the second crash and restart"
t_ok "recovery replayed dd's records and its drop: no store left behind" test ! -e "$dd_dir"
t_is "$(wc_psql -c "SELECT count(*) FROM lg")" 201 "the other table is whole after that recovery"
# ... and those of a table in a database dropped later (its directory recreated, then removed)
wc_psql -c "CHECKPOINT" -c "CREATE DATABASE gone" >/dev/null || t_bail "CREATE DATABASE gone"
PGDATABASE=gone wc_psql \
    -c "CREATE EXTENSION widecol_fdw" -c "CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw" \
    -c "CREATE FOREIGN TABLE g (rowkey text, value text) SERVER wide OPTIONS (families 'f')" \
    -c "INSERT INTO g SELECT 'k' || i, 'v' FROM generate_series(1, 1000) i" \
    -c "SELECT widecol_flush('g')" >/dev/null || t_bail "the table g in database gone"
gone_oid=$(wc_psql -c "SELECT oid FROM pg_database WHERE datname = 'gone'")
wc_psql -c "DROP DATABASE gone" >/dev/null || t_bail "DROP DATABASE gone"
wc_cluster_kill9 && wc_cluster_restart || t_bail "the crash after DROP DATABASE"
t_ok "recovery through a dropped database's widecol records starts the server" \
    test "$(wc_psql -c "SELECT count(*) FROM lg")" = 201
t_ok "... and leaves no directory of that database" test ! -e "$WC_PGDATA/base/$gone_oid"
t_ok "no error in the server log about the replay" \
    bash -c "! grep -E 'widecol.*(ERROR|FATAL|PANIC)|(ERROR|FATAL|PANIC).*widecol' '$WC_CLUSTER_DIR/server.log'"

# --- 3. a damaged sorted file on a standby
wc_psql -c "INSERT INTO lg SELECT 'flushed-' || j, 'f', 'q', j, repeat('y', 200) FROM generate_series(1, 2000) j" \
        -c "SELECT widecol_flush('lg')" >/dev/null || t_bail "more rows in lg"
wc_standby_create stby || t_bail "the standby"
wc_psql -c "INSERT INTO lg VALUES ('late', 'f', 'q', 1, 'x')" >/dev/null
wc_wait_replay stby || t_bail "the standby's replay"
t_is "$(wc_node_psql stby -c "SELECT count(*) FROM lg")" 2202 "the standby reads lg"
sdir="$(wc_node_pgdata stby)/base/$db_oid/widecol_$(wc_psql -c "SELECT 'lg'::regclass::oid")"
sst=$(ls "$sdir"/*.sst | head -n 1)
flip_byte "$sst" 100
out=$(wc_node_psql stby -v VERBOSITY=verbose -c "SELECT count(*) FROM lg" 2>&1)
t_ok "a query on the standby fails with XX001" grep -q "XX001" <<<"$out"
t_ok "... naming the damaged file $(basename "$sst")" grep -q "$(basename "$sst")" <<<"$out"
t_is "$(wc_psql -c "SELECT count(*) FROM lg")" 2202 "the primary is unaffected"

t_done
