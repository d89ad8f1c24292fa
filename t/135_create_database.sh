#!/usr/bin/env bash
# t/135_create_database.sh -- CREATE DATABASE ... TEMPLATE copies widecol tables with their
# data, as it copies ordinary tables, on the primary and through the WAL; ALTER DATABASE ... SET
# TABLESPACE of a database with widecol stores is refused instead of removing them.
#
# A database src holds a wide table w (flushed cells, cells only in its log, an UPDATE of a
# flushed row, a deleted row, a rolled-back insert), a tall table t showing w's store, an
# unlogged tall table u, and an ordinary table h with w's rows; a streaming standby runs.
#   1. CREATE DATABASE c1 TEMPLATE src (PostgreSQL's default WAL_LOG strategy) and c2 ... STRATEGY
#      FILE_COPY: in both, w, t and u read exactly as in src (w as h); a write to c1's w stays in
#      c1, and later writes to src's w do not reach c1.
#   2. The standby, once it replayed the primary's WAL, reads the same in c1 and c2 (hot standby
#      queries), and not c1's later write before it is replayed either.
#   3. kill -9 of the primary right after CREATE DATABASE c3 TEMPLATE src (the checkpoint's redo
#      point before the copy: crash recovery replays it): c3 reads as src did.
#   4. ALTER DATABASE c1 SET TABLESPACE fails with SQLSTATE 0A000 (feature_not_supported) and
#      c1's tables still read the same; to the tablespace it is in, it does nothing as before; a
#      database without widecol stores still moves.
#   5. DROP DATABASE c2 removes its copy and leaves src's store alone.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
wc_psql -c "CREATE DATABASE src" >/dev/null || t_bail "CREATE DATABASE src"
src() { wc_psql -d src "$@"; }
src -c "CREATE EXTENSION widecol_fdw" -c "CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw" \
    -c "CREATE FOREIGN TABLE w (rowkey text COLLATE \"C\", a int OPTIONS (cell 'f:a'),
                                b text OPTIONS (cell 'g:b')) SERVER wide OPTIONS (families 'f,g')" \
    -c "CREATE FOREIGN TABLE t (rowkey text COLLATE \"C\", family text COLLATE \"C\",
                                qualifier text COLLATE \"C\", ts bigint, value bytea)
        SERVER wide OPTIONS (store 'w')" \
    -c "CREATE FOREIGN TABLE u (rowkey text COLLATE \"C\", family text COLLATE \"C\",
                                qualifier text COLLATE \"C\", ts bigint, value text)
        SERVER wide OPTIONS (families 'f', logged 'false')" \
    -c "CREATE TABLE h (rowkey text COLLATE \"C\" PRIMARY KEY, a int, b text)" \
    -c "INSERT INTO h SELECT 'k' || lpad(i::text, 4, '0'), i, CASE WHEN i % 3 = 0 THEN 'b' || i END
          FROM generate_series(1, 2000) i" \
    -c "INSERT INTO w SELECT * FROM h WHERE a <= 1500" -c "SELECT widecol_flush('w')" \
    -c "INSERT INTO w SELECT * FROM h WHERE a > 1500" \
    -c "UPDATE w SET a = a + 10000 WHERE rowkey = 'k0007'" -c "UPDATE h SET a = a + 10000 WHERE rowkey = 'k0007'" \
    -c "DELETE FROM w WHERE rowkey = 'k0009'" -c "DELETE FROM h WHERE rowkey = 'k0009'" \
    -c "BEGIN" -c "INSERT INTO w VALUES ('gone', 1, 'x')" -c "ROLLBACK" \
    -c "INSERT INTO u SELECT 'r' || i, 'f', 'q', i, 'v' || i FROM generate_series(1, 300) i" >/dev/null ||
    t_bail "the tables of src"
wc_standby_create sb || t_bail "a streaming standby"

# state DB [NODE]: what DB's tables hold, on NODE (main): w against h, t's versions, u (not on a
# standby: an unlogged table cannot be read there)
state() {
    local db=$1 node=${2:-main} u="(SELECT count(*) FROM u)"
    [ "$node" = main ] || u="'-'"
    wc_node_psql "$node" -d "$db" -c "
        SELECT (SELECT count(*) FROM w) || ' ' ||
               (SELECT count(*) FROM h FULL JOIN w USING (rowkey)
                 WHERE h.a IS DISTINCT FROM w.a OR h.b IS DISTINCT FROM w.b) || ' ' ||
               (SELECT count(*) || ':' || sum(length(value)) FROM t) || ' ' || $u"
}
want=$(state src)
t_is "$want" "1999 0 2665:10959 300" "src: w holds h's 1,999 rows, t its cells (and an older version), u 300 cells"

# --- 1. the copies
t_ok "1. CREATE DATABASE c1 TEMPLATE src" wc_psql -c "CREATE DATABASE c1 TEMPLATE src"
t_ok "1. CREATE DATABASE c2 TEMPLATE src STRATEGY FILE_COPY" wc_psql -c "CREATE DATABASE c2 TEMPLATE src STRATEGY FILE_COPY"
t_is "$(state c1)" "$want" "1. c1 (WAL_LOG) holds what src holds: w, t (w's store) and u"
t_is "$(state c2)" "$want" "1. c2 (FILE_COPY) too"
wc_psql -d c1 -c "INSERT INTO w VALUES ('c1-only', 1, 'c1')" -c "INSERT INTO h VALUES ('c1-only', 1, 'c1')" >/dev/null
src -c "INSERT INTO w VALUES ('src-later', 2, 'src')" -c "INSERT INTO h VALUES ('src-later', 2, 'src')" >/dev/null
t_is "$(wc_psql -d c1 -c "SELECT string_agg(rowkey, ',' ORDER BY rowkey) FROM w WHERE rowkey IN ('c1-only', 'src-later')")" \
    "c1-only" "1. a write to c1's w stays in c1; src's later write does not reach it"
t_is "$(src -c "SELECT string_agg(rowkey, ',' ORDER BY rowkey) FROM w WHERE rowkey IN ('c1-only', 'src-later')")" \
    "src-later" "1. and src has its own, not c1's"
t_is "$(state c1 | cut -d' ' -f1-2)" "2000 0" "1. c1's w still equals its h"

# --- 2. the standby
t_ok "2. the standby replays the primary's WAL" wc_wait_replay sb
t_is "$(state c1 sb)" "$(state c1 | sed 's/ [0-9]*$/ -/')" "2. the standby reads c1 as the primary does (its later write too)"
t_is "$(state c2 sb)" "${want% *} -" "2. and c2"
t_is "$(state src sb)" "$(state src | sed 's/ [0-9]*$/ -/')" "2. and src"

# --- 3. crash recovery replays a copy
wc_psql -c "CHECKPOINT" -c "CREATE DATABASE c3 TEMPLATE src" >/dev/null || t_bail "CREATE DATABASE c3"
wc_cluster_kill9 || t_bail "kill -9 of the primary"
wc_cluster_restart || t_bail "the primary starts after kill -9"
t_is "$(state c3)" "$(state src)" "3. c3, made just before a kill -9, reads as src after the crash recovery"

# --- 4. SET TABLESPACE
mkdir -p "$WC_CLUSTER_DIR/ts" && { ! wc_is_root || chown postgres: "$WC_CLUSTER_DIR/ts"; }
wc_psql -c "CREATE TABLESPACE ts LOCATION '$WC_CLUSTER_DIR/ts'" >/dev/null || t_bail "a tablespace"
out=$(wc_psql -v VERBOSITY=verbose -c "ALTER DATABASE c1 SET TABLESPACE ts" 2>&1) && out="(it succeeded) $out"
t_ok "4. ALTER DATABASE c1 SET TABLESPACE fails with SQLSTATE 0A000, naming the widecol stores" \
    grep -qE '^ERROR:  0A000: cannot move database "c1" to another tablespace: it holds 2 widecol_fdw stores' <<<"$out" ||
    printf '%s\n' "$out" | head -n 3 | sed 's/^/#   /'
t_is "$(state c1 | cut -d' ' -f1-2)|$(wc_psql -c "SELECT spcname FROM pg_database d JOIN pg_tablespace s ON s.oid = dattablespace WHERE datname = 'c1'")" \
    "2000 0|pg_default" "4. c1 stays where it was, its tables whole"
t_ok "4. ALTER DATABASE c1 SET TABLESPACE pg_default (where it is: nothing to move) still works" \
    wc_psql -c "ALTER DATABASE c1 SET TABLESPACE pg_default"
wc_psql -c "CREATE DATABASE plain" -c "ALTER DATABASE plain SET TABLESPACE ts" >/dev/null
t_is "$(wc_psql -c "SELECT spcname FROM pg_database d JOIN pg_tablespace s ON s.oid = dattablespace WHERE datname = 'plain'")" \
    "ts" "4. a database without widecol stores still moves"

# --- 5. DROP DATABASE
t_ok "5. DROP DATABASE c2" wc_psql -c "DROP DATABASE c2"
t_is "$(state src | cut -d' ' -f1-2)" "2000 0" "5. src's tables are whole after the drop of its copy"
t_done
