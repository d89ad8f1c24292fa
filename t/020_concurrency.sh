#!/usr/bin/env bash
# t/020_concurrency.sh -- many sessions read and write one table at once.
#
# Four writers each commit transactions of 10 cells into their own rows, two sessions overwrite
# the same cell, a fifth flushes and compacts in a loop, and two readers count all the while.
# Checked: every read sees whole transactions only (a count that is a multiple of 10) and never
# fewer rows than the read before; in the end every cell is there exactly once and the hot cell
# holds one of the written values; an open transaction's writes are invisible to others until
# COMMIT and never visible after ROLLBACK.
# 4 x 150 transactions; 4 x 600 with WIDECOL_LONG=1.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
wc_psql -c "CREATE FOREIGN TABLE kv (rowkey text, family text, qualifier text, ts bigint, value text)
            SERVER wide OPTIONS (families 'f')" || t_bail "CREATE FOREIGN TABLE kv"

ntx=150
t_long && ntx=600
work=$(mktemp -d /tmp/widecol-conc.XXXXXX)
wc_on_exit "rm -rf '$work'"
pids=()
wc_on_exit 'kill ${pids[*]:-}'

client() {    # client NAME: a session reading SQL from stdin, output in $work/NAME.{out,err}
    PGAPPNAME=$1 "$WC_PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -f - >"$work/$1.out" 2>"$work/$1.err"
}

# --- visibility across sessions, before the load
printf "BEGIN;\nINSERT INTO kv VALUES ('vis-commit', 'f', 'q', 1, 'v');\nSELECT pg_sleep(2);\nCOMMIT;\n" | client vis1 &
v1=$!
printf "BEGIN;\nINSERT INTO kv VALUES ('vis-rollback', 'f', 'q', 1, 'v');\nSELECT pg_sleep(2);\nROLLBACK;\n" | client vis2 &
v2=$!
pids+=($v1 $v2)
for ((i = 0; i < 100; i++)); do
    [ "$(wc_psql -c "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'vis_' AND query LIKE 'SELECT pg_sleep%'")" = 2 ] && break
    sleep 0.1
done
t_is "$(wc_psql -c "SELECT count(*) FROM kv WHERE rowkey LIKE 'vis-%'")" 0 \
    "writes of open transactions are invisible to other sessions"
wait $v1 $v2
t_is "$(wc_psql -c "SELECT string_agg(rowkey, ',') FROM kv WHERE rowkey LIKE 'vis-%'")" vis-commit \
    "after COMMIT the write is visible, after ROLLBACK it never is"
t_is "$(wc_psql -c "BEGIN" -c "INSERT INTO kv VALUES ('own', 'f', 'q', 1, 'v')" \
                -c "SELECT count(*) FROM kv WHERE rowkey = 'own'" -c "ROLLBACK")" 1 \
    "a transaction sees its own writes before it commits"

# --- the load
for w in 1 2 3 4; do
    awk -v w="$w" -v n="$ntx" 'BEGIN { for (i = 1; i <= n; i++)
        printf "INSERT INTO kv SELECT %cw%d-%06d%c, %cf%c, %cq%c || j, 1, %cv%c FROM generate_series(1, 10) j;\n",
               39, w, i, 39, 39, 39, 39, 39, 39, 39 }' | client "writer$w" &
    pids+=($!)
done
writers=("${pids[@]:2}")
for s in A B; do
    awk -v s="$s" -v n="$((ntx * 3))" 'BEGIN { for (i = 1; i <= n; i++)
        printf "INSERT INTO kv VALUES (%chot%c, %cf%c, %cc%c, 1, %c%s-%d%c);\n", 39, 39, 39, 39, 39, 39, 39, s, i, 39 }' |
        client "hot$s" &
    pids+=($!)
    writers+=($!)
done
(for ((i = 0; i < 1000; i++)); do
    echo "SELECT widecol_flush('kv'); SELECT widecol_compact('kv'); SELECT pg_sleep(0.3);"
 done) | PGAPPNAME=maint "$WC_PGBIN/psql" -X -q -At -f - >/dev/null 2>"$work/maint.err" &
maint=$!
pids+=($maint)

# Readers: count the w% rows over and over while the writers run.
reader() {
    local last=0 n bad=0 reads=0
    while kill -0 "${writers[@]}" 2>/dev/null; do
        n=$(wc_psql -c "SELECT count(*) FROM kv WHERE rowkey LIKE 'w%'") || { echo "error"; return; }
        reads=$((reads + 1))
        if ((n % 10 != 0 || n < last)); then bad=$((bad + 1)); echo "bad read: $n after $last" >&2; fi
        last=$n
    done
    echo "$reads $bad"
}
reader >"$work/reader1.out" 2>"$work/reader1.err" &
r1=$!
reader >"$work/reader2.out" 2>"$work/reader2.err" &
r2=$!
pids+=($r1 $r2)

wfail=0
for p in "${writers[@]}"; do wait "$p" || wfail=$((wfail + 1)); done
wait $r1 $r2
kill "$maint" 2>/dev/null; wait "$maint" 2>/dev/null
t_is "$wfail" 0 "all writer sessions finish without error"
[ "$wfail" = 0 ] || cat "$work"/writer*.err "$work"/hot*.err | head -n 10 | sed 's/^/#   /'

for rd in 1 2; do
    read -r reads bad <"$work/reader$rd.out"
    t_ok "reader $rd saw whole transactions only, never going back ($reads reads, ${bad:-?} bad)" \
        test "${bad:-x}" = 0 -a "${reads:-0}" -gt 0
    [ "${bad:-x}" = 0 ] || head -n 5 "$work/reader$rd.err" | sed 's/^/#   /'
done

t_is "$(wc_psql -F ' ' -c "SELECT count(*), count(DISTINCT (rowkey, qualifier)) FROM kv WHERE rowkey LIKE 'w%'")" \
    "$((ntx * 40)) $((ntx * 40))" "every cell is there exactly once"
t_is "$(wc_psql -F ' ' -c "SELECT count(*), bool_and(value ~ '^[AB]-[0-9]+$') FROM kv WHERE rowkey = 'hot'")" \
    "1 t" "the cell written by two sessions holds one version with one of their values"
t_ok "flush and compaction ran beside the load without error" test ! -s "$work/maint.err"
[ -s "$work/maint.err" ] && head -n 5 "$work/maint.err" | sed 's/^/#   /'

wc_psql -c "SELECT widecol_compact('kv')" >/dev/null
t_is "$(wc_psql -c "SELECT count(*) FROM kv WHERE rowkey LIKE 'w%'")" "$((ntx * 40))" \
    "after a major compaction every cell is still there"

t_done
