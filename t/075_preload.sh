#!/usr/bin/env bash
# t/075_preload.sh -- a logged widecol table needs shared_preload_libraries = 'widecol_fdw' to be
# written, and says so; everything else works without it.
#
# 1. A cluster without the preload (WC_EXTRA_CONF: shared_preload_libraries = ''): CREATE
#    EXTENSION, CREATE SERVER and CREATE FOREIGN TABLE work, SELECT works; an INSERT (also
#    INSERT ... SELECT and COPY FROM) into a table of the default kind (logged) is an ERROR
#    with SQLSTATE 55000 (object_not_in_prerequisite_state) and a HINT naming
#    shared_preload_libraries, and leaves the table empty.  A table with OPTIONS (logged
#    'false') takes INSERT, UPDATE and DELETE.
# 2. Restarted with the preload: SHOW shared_preload_libraries says widecol_fdw; the logged
#    table takes INSERT, UPDATE, DELETE, flushes and compactions; nothing of the refused writes
#    appears.
# 3. Restarted without it again: the logged table reads as it was; INSERT, UPDATE, DELETE and
#    TRUNCATE of it are each refused the same way and change nothing.
# 4. With the preload and widecol_fdw.shared_memtable_size = 0 (each session indexes the
#    unflushed cells itself), then = 1MB (too small for the log written: every session goes
#    on with its own copy): unflushed writes of one session, committed and rolled back, read
#    the same in others, and the same as with the default size; sessions that exit give their
#    references to the shared index back, and sessions that open the table one after another
#    find its log indexed (widecol_shared_memory).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

WC_EXTRA_CONF="${WC_EXTRA_CONF:-}
shared_preload_libraries = ''" wc_cluster_start || t_bail "a throw-away cluster without shared_preload_libraries"
cols='rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text'

# --- 1. without the preload
t_is "$(wc_psql -c "SHOW shared_preload_libraries")" "" "the cluster runs without shared_preload_libraries"
t_ok "CREATE EXTENSION and CREATE SERVER work without the preload" \
    wc_psql -c "CREATE EXTENSION widecol_fdw" -c "CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw"
t_ok "CREATE FOREIGN TABLE works without the preload" \
    wc_psql -c "CREATE FOREIGN TABLE t ($cols) SERVER wide OPTIONS (families 'a,b')"
t_is "$(wc_psql -c "SELECT count(*) FROM t")" 0 "SELECT works without the preload"

# refused WHAT SQL [STDIN]: SQL (run alone) fails with 55000 and a HINT naming shared_preload_libraries
refused() {
    local what=$1 sql=$2 out
    out=$(printf '%s' "${3:-}" | wc_psql -v VERBOSITY=verbose -c "$sql" 2>&1) && out="(it succeeded) $out"
    t_ok "$what: an ERROR with SQLSTATE 55000 (object_not_in_prerequisite_state)" \
        grep -qE '^ERROR:  55000:' <<<"$out" || printf '%s\n' "$out" | head -n 4 | sed 's/^/#   /'
    t_ok "$what: its HINT names shared_preload_libraries" \
        grep -qE '^HINT: .*shared_preload_libraries' <<<"$out"
}
refused "INSERT into a logged table without the preload" "INSERT INTO t VALUES ('r1', 'a', 'q', 1, 'v')"
refused "INSERT ... SELECT into it" "INSERT INTO t SELECT 'm' || i, 'b', 'q', i, 'v' FROM generate_series(1, 5000) i"
refused "COPY FROM into it" "COPY t FROM STDIN" $'c1\ta\tq\t1\tv\nc2\tb\tq\t2\tv\n'
t_is "$(wc_psql -c "SELECT count(*) FROM t")" 0 "nothing of the refused writes is in the table"

t_ok "CREATE FOREIGN TABLE ... OPTIONS (logged 'false') works" \
    wc_psql -c "CREATE FOREIGN TABLE u ($cols) SERVER wide OPTIONS (families 'a,b', logged 'false')"
unlogged_writes() {
    wc_psql -c "INSERT INTO u SELECT 'u' || i, 'a', 'q', i, 'v' || i FROM generate_series(1, 100) i" \
            -c "UPDATE u SET value = 'updated' WHERE rowkey IN ('u1', 'u2')" \
            -c "DELETE FROM u WHERE rowkey = 'u3'" -c "SELECT widecol_flush('u')" >/dev/null
}
t_ok "the unlogged table takes INSERT, UPDATE, DELETE and a flush without the preload" unlogged_writes
t_is "$(wc_psql -F ' ' -c "SELECT count(*), count(*) FILTER (WHERE value = 'updated'), count(*) FILTER (WHERE rowkey = 'u3') FROM u")" \
    "99 2 0" "... and reads them back"

# --- 2. with the preload
wc_node_conf main "shared_preload_libraries = 'widecol_fdw'"
wc_node_restart main || t_bail "a restart with shared_preload_libraries = 'widecol_fdw'"
t_is "$(wc_psql -c "SHOW shared_preload_libraries")" widecol_fdw "after a restart: SHOW shared_preload_libraries"
t_is "$(wc_psql -c "SELECT count(*) FROM t")" 0 "the refused writes did not come back with the preload"
logged_writes() {
    wc_psql -c "INSERT INTO t SELECT 'k' || lpad(i::text, 4, '0'), CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END, 'q', i, 'v' || i
                  FROM generate_series(1, 1000) i" \
            -c "SELECT widecol_flush('t')" \
            -c "UPDATE t SET value = 'updated' WHERE rowkey IN ('k0001', 'k0002')" \
            -c "DELETE FROM t WHERE rowkey = 'k0003'" -c "SELECT widecol_compact('t')" >/dev/null
}
t_ok "with the preload, the logged table takes INSERT, UPDATE, DELETE, a flush and a compaction" logged_writes
t_is "$(wc_psql -F ' ' -c "SELECT count(*), count(*) FILTER (WHERE value = 'updated'), count(*) FILTER (WHERE rowkey = 'k0003')
                           FROM t WHERE rowkey LIKE 'k%'")" \
    "999 2 0" "... and reads them back"
digest() {
    wc_psql -c "SELECT count(*) || ' rows, md5 ' || coalesce(md5(string_agg(format('%s|%s|%s|%s|%s', rowkey, family, qualifier, ts, value),
                                                             E'\n' ORDER BY rowkey, family, qualifier, ts)), '-') FROM t"
}
before=$(digest)

# --- 3. without it again
wc_node_conf main "shared_preload_libraries = ''"
wc_node_restart main || t_bail "a restart without the preload"
t_is "$(wc_psql -c "SHOW shared_preload_libraries")" "" "restarted without the preload"
t_is "$(digest)" "$before" "without the preload, the logged table reads as it was"
refused "INSERT into a logged table with rows, without the preload" "INSERT INTO t VALUES ('k9999', 'a', 'q', 1, 'v')"
refused "UPDATE of its rows" "UPDATE t SET value = 'no' WHERE rowkey = 'k0010'"
refused "DELETE of its rows" "DELETE FROM t WHERE rowkey = 'k0011'"
refused "TRUNCATE of it" "TRUNCATE t"
t_is "$(digest)" "$before" "the refused writes changed nothing"
before=$(digest)
for fn in widecol_flush widecol_compact; do
    if out=$(wc_psql -v VERBOSITY=verbose -c "SELECT $fn('t')" 2>&1); then
        t_diag "$fn('t') without the preload: succeeded"
    else
        t_diag "$fn('t') without the preload: $(head -n 1 <<<"$out")"
    fi
done
t_is "$(digest)" "$before" "it reads the same after widecol_flush and widecol_compact were called without the preload"

# --- 4. the index of unflushed cells in each session, and a shared one too small
unflushed() {   # 20,000 unflushed cells in two transactions, one more rolled back
    wc_psql -c "INSERT INTO t SELECT 's' || lpad(i::text, 6, '0'), 'a', 'q', 1, repeat('x', 30) || i
                  FROM generate_series(1, 10000) i" \
            -c "BEGIN" -c "INSERT INTO t SELECT 's' || lpad(i::text, 6, '0'), 'b', 'q', 2, 'v' || i
                  FROM generate_series(1, 10000) i" -c "COMMIT" \
            -c "BEGIN" -c "INSERT INTO t SELECT 'z' || i, 'a', 'q', 1, 'gone' FROM generate_series(1, 500) i" \
            -c "ROLLBACK" >/dev/null
}
sessions_read() {   # what three other sessions read, each on its own line
    for i in 1 2 3; do digest; done | sort -u
}
wc_node_conf main "shared_preload_libraries = 'widecol_fdw'"
wc_psql -c "TRUNCATE t" >/dev/null 2>&1
for size in 0 1MB 128MB; do
    wc_node_conf main "widecol_fdw.shared_memtable_size = '$size'"
    wc_node_restart main || t_bail "a restart with widecol_fdw.shared_memtable_size = $size"
    wc_psql -c "TRUNCATE t" -c "SELECT widecol_flush('t')" >/dev/null
    t_is "$(wc_psql -c "SHOW widecol_fdw.shared_memtable_size")" "$([ $size = 0 ] && echo 0 || echo $size)" \
        "restarted with widecol_fdw.shared_memtable_size = $size"
    t_ok "shared_memtable_size = $size: 20,000 unflushed cells written" unflushed
    got=$(sessions_read)
    t_is "$(wc_psql -F ' ' -c "SELECT count(*), count(*) FILTER (WHERE rowkey LIKE 'z%') FROM t")" "20000 0" \
        "shared_memtable_size = $size: another session reads the committed cells, not the rolled-back ones"
    t_is "$(wc -l <<<"$got")" 1 "shared_memtable_size = $size: three more sessions read the same"
    if [ $size = 0 ]; then want=$got; else t_is "$got" "$want" "shared_memtable_size = $size reads as with 0"; fi
    if [ $size = 128MB ]; then
        # every session above has exited: none still references the table's shared index
        t_is "$(wc_psql -F ' ' -c "SELECT logs >= 1, logs_unused = logs, logs_failed FROM widecol_shared_memory()
                                    WHERE area = 'shared memtables'")" "t t 0" \
            "the sessions that read the table gave their references to its shared index back as they exited"
        # each of them had the table to itself: the store keeps its identity between them, so
        # its live log is indexed once, not once more by every session that opens it
        slots() { wc_psql -c "SELECT logs FROM widecol_shared_memory() WHERE area = 'shared memtables'"; }
        nslots=$(slots)
        for i in 1 2 3; do digest >/dev/null; done
        t_is "$(slots)" "$nslots" \
            "three more sessions that open the table one after another add no index of its log ($nslots)"
    fi
done

t_done
