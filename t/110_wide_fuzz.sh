#!/usr/bin/env bash
# t/110_wide_fuzz.sh -- a wide table against an ordinary table, under random statements.
#
# Three sessions at once, each on its own key prefix of one wide table (through a view of that
# prefix) and on an ordinary table of its own, run random transactions of 1 to 13 steps:
# INSERTs (puts, all-NULL rows refused), UPDATEs of random columns (NULL deletes a cell, a
# jsonb family replaced or changed), DELETEs, rowkey moves, UPDATE ... FROM and DELETE ...
# USING joins, INSERT ... SELECT, parameters, SELECT ... FOR UPDATE, some of them in savepoints
# rolled back, some in subtransactions that commit, nested up to three deep (fz_step); every
# row that RETURNING gives is compared, and after each transaction (and at random points
# inside one and inside savepoints) 17 queries (whole rows, single families, rowkey =, IN,
# ranges, prefixes, column conditions, aggregates, joins, ORDER BY rowkey in both directions
# with LIMIT) must give the ordinary table's rows.  The wide table's statements and the
# queries run under random planner settings (join methods, materialization, sorts off), so
# that its answers must not depend on the plan: a nested loop that scans it again for each
# outer row, a merge join over its ordered scan.  Between transactions the sessions flush and
# compact the store.  Then a kill -9 of the cluster, and after the restart (WAL replay) every
# session's rows are compared once more.  The seeds are fixed (setseed per transaction); the
# interleaving of the sessions is not.  t/wide_fuzz.sql has the functions and the model of the
# wide table's rules that the ordinary table follows.
# Three more sessions do the same at once on a wide table whose rowkey is a bigint, each on its
# own range of keys: one across zero (-100 to 899), one across the largest integer (2^31 - 101
# upward), one at the bottom of bigint's range (-2^63 + 100 upward); LIKE and || of the text
# keys become ranges and sums there (fz_prefix_cond, fz_derive).
# 6 x 120 transactions; 6 x 600 with WIDECOL_LONG=1.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
wc_psql -c "CREATE FOREIGN TABLE fw (rowkey text COLLATE \"C\",
                a int OPTIONS (cell 'x:a'), b text OPTIONS (cell 'x:b'), c numeric OPTIONS (cell 'y:c'),
                d jsonb OPTIONS (cell 'z:*'), e bytea OPTIONS (cell 'y:e'), f timestamptz OPTIONS (cell 'x:f'))
            SERVER wide OPTIONS (families 'x,y,z')" \
        -c "CREATE FOREIGN TABLE fi (rowkey bigint,
                a int OPTIONS (cell 'x:a'), b text OPTIONS (cell 'x:b'), c numeric OPTIONS (cell 'y:c'),
                d jsonb OPTIONS (cell 'z:*'), e bytea OPTIONS (cell 'y:e'), f timestamptz OPTIONS (cell 'x:f'))
            SERVER wide OPTIONS (families 'x,y,z')" \
        -f "$(dirname "${BASH_SOURCE[0]}")/wide_fuzz.sql" >/dev/null || t_bail "the wide tables and t/wide_fuzz.sql"

ntx=120
t_long && ntx=600
work=$(mktemp -d /tmp/widecol-fuzz.XXXXXX)
wc_on_exit "rm -rf '$work'"
pids=()
wc_on_exit 'kill ${pids[*]:-} 2>/dev/null'

# the integer-keyed sessions' first keys
declare -A base=([i1]=-100 [i2]=2147483547 [i3]=-9223372036854775708)
sessions="p1 p2 p3 i1 i2 i3"

# the settings of session P (a text key prefix, or an integer-keyed session's name)
opts() {
    local int=
    [ -n "${base[$1]:-}" ] && int=" -c fz.kind=int -c fz.base=${base[$1]}"
    echo "-c fz.p=$1 -c fz.w=fw_$1 -c fz.h=fh_$1 -c fz.k=fk_$1$int"
}
# the wide table under session P's view
table() { if [ -n "${base[$1]:-}" ]; then echo fi; else echo fw; fi; }

for p in $sessions; do
    if [ -n "${base[$p]:-}" ]; then
        PGOPTIONS=$(opts $p) wc_psql -v p=$p -v base="${base[$p]}" >/dev/null <<'SQL' || t_bail "the objects of session $p"
CREATE TABLE fh_:p (rowkey bigint PRIMARY KEY, a int, b text, c numeric, d jsonb, e bytea, f timestamptz);
CREATE VIEW fw_:p AS SELECT * FROM fi WHERE rowkey BETWEEN :base AND :base::bigint + 999;
CREATE TABLE fk_:p (rowkey bigint);
INSERT INTO fk_:p SELECT fz_key(n)::bigint FROM generate_series(0, 199, 3) n;
ANALYZE fk_:p;
SQL
    else
        PGOPTIONS=$(opts $p) wc_psql -v p=$p >/dev/null <<'SQL' || t_bail "the objects of session $p"
CREATE TABLE fh_:p (rowkey text COLLATE "C" PRIMARY KEY, a int, b text, c numeric, d jsonb, e bytea,
                    f timestamptz);
CREATE VIEW fw_:p AS SELECT * FROM fw WHERE rowkey >= :'p' AND rowkey < :'p' || 'l';
CREATE TABLE fk_:p (rowkey text COLLATE "C");
INSERT INTO fk_:p SELECT fz_key(n) FROM generate_series(0, 199, 3) n;
ANALYZE fk_:p;
SQL
    fi
done

# worker P SEED: ntx transactions, each one psql session; stops at the first failure
worker() {
    local p=$1 seed=$2 r
    for ((r = 1; r <= ntx; r++)); do
        if ! PGOPTIONS=$(opts "$p") "$WC_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 >>"$work/$p.out" 2>&1 <<SQL
SELECT setseed($(awk -v s="$seed" -v r="$r" 'BEGIN { printf "%.6f", ((s * 7919 + r * 104729) % 1000000) / 1000000.0 - 0.5 }')) \gset
DO \$\$
DECLARE n bigint; log text := '';
BEGIN
  FOR i IN 1..(1 + (random() * 12)::int) LOOP
    log := log || fz_step(0);
    IF random() < 0.3 THEN
      n := fz_check();
      IF n <> 0 THEN RAISE EXCEPTION 'fz: % rows differ inside the transaction, after%', n, log; END IF;
    END IF;
  END LOOP;
  n := fz_check();
  IF n <> 0 THEN RAISE EXCEPTION 'fz: % rows differ at the end of the transaction, after%', n, log; END IF;
END \$\$;
SQL
        then
            echo "failed in transaction $r" >>"$work/$p.out"
            return 1
        fi
        case $((RANDOM % 25)) in
            0|1) wc_psql -c "SELECT widecol_flush('$(table "$p")')" >/dev/null ;;
            2) wc_psql -c "SELECT widecol_compact('$(table "$p")')" >/dev/null ;;
        esac
    done
    echo "done $ntx" >>"$work/$p.out"
}

seed=1
for p in $sessions; do
    worker $p $seed &
    pids+=($!)
    seed=$((seed + 1))
done
i=0
for p in $sessions; do
    wait "${pids[$i]}"
    i=$((i + 1))
    if [ -n "${base[$p]:-}" ]; then
        what="its range of the bigint-keyed wide table (from ${base[$p]})"
    else
        what="its prefix of the wide table"
    fi
    t_ok "session $p: $ntx random transactions on $what, each result as the ordinary table's" \
        grep -q "^done $ntx" "$work/$p.out" ||
        { grep -E -A 12 'ERROR|WARNING|failed' "$work/$p.out" | head -n 40 | cut -c1-600 | sed 's/^/#   /'; }
done
pids=()

for t in "fw p" "fi i"; do
    set -- $t
    t_is "$(wc_psql -c "SELECT sum(n) FROM (SELECT count(*) AS n FROM fh_${2}1 UNION ALL SELECT count(*) FROM fh_${2}2
                                         UNION ALL SELECT count(*) FROM fh_${2}3) s")" \
         "$(wc_psql -c "SELECT count(*) FROM $1")" "the wide table $1 has the rows of its three sessions' ordinary tables"
done

wc_cluster_kill9
wc_cluster_restart || t_bail "the server restarts after kill -9"
for p in $sessions; do
    t_is "$(PGOPTIONS=$(opts $p) wc_psql -c "SELECT setseed(0.25)" -c "SELECT fz_check()" 2>&1 | tail -n 1)" 0 \
        "after kill -9 and WAL replay, session $p's rows are the ordinary table's"
done

t_done
