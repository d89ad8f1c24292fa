#!/usr/bin/env bash
# t/010_crash.sh -- committed writes survive kill -9 at any moment; nothing else appears.
#
# Each round, while three sessions write (one-cell autocommit INSERTs, 20-cell transactions over
# two rows, and transactions that ROLLBACK), a fourth flushes and compacts in a loop and a fifth
# holds an open transaction with a write in it, the server crashes, in a cycle of six rounds:
#   1. kill -9 of the postmaster and every backend at once, at a random moment, then a restart;
#   2. kill -9 of one backend, the one writing 20-cell transactions, in the middle of its
#      writes (the postmaster then resets every session and recovers by itself);
#   3. the whole cluster killed while widecol_flush runs;
#   4. the flushing session's backend killed while widecol_compact runs;
#   5. the whole cluster killed while widecol_compact runs;
#   6. the flushing session's backend killed while widecol_flush runs.
# ("while X runs": pg_stat_activity showed the session active in X just before the kill; when
# it is not seen within 10 s the kill happens anyway, and the round says so.)
# In half of the rounds (rounds 2, 4, 6, 7 of the first eight, each kind of kill in turn) the
# 20-cell transactions are bulk writes (widecol_fdw.bulk_write_size = 0: committed as sorted
# files that a log record names, engine/ingest.h), so kills hit them while their files are
# being written, flushed into the manifest and compacted.
# Then: every write a client was told committed is there, at most the one in flight besides,
# with no gap; every 20-cell transaction is whole or absent; nothing rolled back or left open
# appears; every earlier round still reads the same; and the table takes writes again.
# 8 rounds; 100 with WIDECOL_LONG=1.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
wc_psql -c "CREATE FOREIGN TABLE kv (rowkey text, family text, qualifier text, ts bigint, value text)
            SERVER wide OPTIONS (families 'a,b')" || t_bail "CREATE FOREIGN TABLE kv"

rounds=8
t_long && rounds=100
work=$(mktemp -d /tmp/widecol-crash.XXXXXX)
wc_on_exit "rm -rf '$work'"
client_pids=()
wc_on_exit 'kill ${client_pids[*]:-}'

# A client session reading SQL from stdin; its output (the \echo acks) goes to $work/NAME.out.
client() {
    local name=$1 stop=$2
    PGAPPNAME=$name "$WC_PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP="$stop" -f - \
        >"$work/$name.out" 2>"$work/$name.err"
}

# The highest N of the "acked N" lines in a client's output, or 0.
acked() { { grep -E '^acked [0-9]+$' "$work/$1.out" || echo "acked 0"; } | tail -n 1 | cut -d' ' -f2; }

wait_until() {    # wait_until SECONDS CMD...: polls CMD every 0.1 s
    local i
    for ((i = 0; i < $1 * 10; i++)); do "${@:2}" && return 0; sleep 0.1; done
    return 1
}
server_up() { wc_psql -c "SELECT 1" >/dev/null 2>&1; }
pending_open() {
    [ "$(wc_psql -c "SELECT count(*) FROM pg_stat_activity
                     WHERE application_name = 'pending' AND query LIKE 'SELECT pg_sleep%'" 2>/dev/null)" = 1 ]
}
# in_maint FUNCTION: the pid of the flushing session's backend while it runs FUNCTION, or fails
in_maint() {
    local p
    p=$(wc_psql -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'maint'
                      AND state = 'active' AND query LIKE 'SELECT $1(%'" 2>/dev/null)
    [ -n "$p" ] && echo "$p"
}
caught=0; aimed=0
backend_of() {
    wc_psql -c "SELECT pid FROM pg_stat_activity WHERE application_name = '$1' LIMIT 1" 2>/dev/null
}

# On a failure: which of the acknowledged keys PREFIX1..PREFIXn are missing, now and 3 s later.
show_missing() {
    local prefix=$1 n=$2 q
    q="SELECT count(*) || ' missing: ' || coalesce(string_agg(i::text, ',' ORDER BY i) FILTER (WHERE k <= 30), '')
         FROM (SELECT i, row_number() OVER (ORDER BY i) AS k FROM generate_series(1, $n) i
               WHERE NOT EXISTS (SELECT 1 FROM kv WHERE rowkey = '$prefix' || lpad(i::text, 8, '0'))) s"
    t_diag "of $prefix 1..$n, $(wc_psql -c "$q")"
    sleep 3
    t_diag "3 s later, $(wc_psql -c "$q")"
}

# Per-round cell counts of the rounds done so far, "r01s 123 r01m 40 ...", as the table must show.
expected=

for ((r = 1; r <= rounds; r++)); do
    R=$(printf 'r%03d' "$r")
    rm -f "$work"/*.out "$work"/*.err
    client_pids=()

    awk -v R="$R" 'BEGIN { for (i = 1; i <= 200000; i++) {
        printf "INSERT INTO kv VALUES (%c%ss%08d%c, %ca%c, %cq%c, 1, %cv%d%c);\n\\echo acked %d\n",
               39, R, i, 39, 39, 39, 39, 39, 39, i, 39, i
        if (i % 10 == 0)
            printf "BEGIN;\nINSERT INTO kv VALUES (%c%sx%08d%c, %ca%c, %cq%c, 1, %cno%c);\nROLLBACK;\n",
                   39, R, i, 39, 39, 39, 39, 39, 39, 39 } }' | client single 1 &
    client_pids+=($!)

    # bulk writes in rounds 2, 4, 6, then 7, 9, 11, ...: every kind of kill meets both
    bulk=$(( (r + (r - 1) / 6) % 2 == 0 ))
    awk -v R="$R" -v bulk="$bulk" 'BEGIN { if (bulk) print "SET widecol_fdw.bulk_write_size = 0;"
      for (i = 1; i <= 50000; i++) {
        printf "BEGIN;\n"
        printf "INSERT INTO kv SELECT %c%sm%08d%c, f, %cq%c || j, 1, %cm%c FROM unnest(%c{a,b}%c::text[]) f, generate_series(1, 5) j;\n",
               39, R, i, 39, 39, 39, 39, 39, 39, 39
        printf "INSERT INTO kv SELECT %c%sn%08d%c, f, %cq%c || j, 2, %cn%c FROM unnest(%c{a,b}%c::text[]) f, generate_series(1, 5) j;\n",
               39, R, i, 39, 39, 39, 39, 39, 39, 39
        printf "COMMIT;\n\\echo acked %d\n", i } }' | client multi 1 &
    client_pids+=($!)

    printf "BEGIN;\nINSERT INTO kv VALUES ('%sp', 'a', 'q', 1, 'open');\nSELECT pg_sleep(600);\n" "$R" |
        client pending 1 &
    client_pids+=($!)

    for ((i = 0; i < 400; i++)); do
        echo "SELECT widecol_flush('kv'); SELECT widecol_compact('kv'); SELECT pg_sleep(0.2);"
    done | client maint 0 &
    client_pids+=($!)

    wait_until 30 pending_open || t_diag "round $r: the open transaction was not seen in time"
    sleep "$(awk -v s="$RANDOM" 'BEGIN { printf "%.2f", 0.5 + (s % 250) / 100 }')"

    case $(( (r - 1) % 6 )) in
        0) whole=1; during= ;;
        1) whole=0; during= ;;
        2) whole=1; during=widecol_flush ;;
        3) whole=0; during=widecol_compact ;;
        4) whole=1; during=widecol_compact ;;
        5) whole=0; during=widecol_flush ;;
    esac
    mpid=
    if [ -n "$during" ]; then
        aimed=$((aimed + 1))
        for ((i = 0; i < 1000; i++)); do mpid=$(in_maint "$during") && break; done
        if [ -n "$mpid" ]; then caught=$((caught + 1)); else t_diag "round $r: $during was not seen running; killing anyway"; fi
    fi
    if ((whole)); then
        how="kill -9 of the whole cluster${during:+ while $during runs}"
        wc_cluster_kill9
        wait "${client_pids[@]}" 2>/dev/null
        wc_cluster_restart || t_bail "round $r: the server restarts after $how"
    else
        if [ -n "$during" ]; then victim=maint; else victim=multi; fi
        how="kill -9 of the backend of '$victim'${during:+ while $during runs}"
        pid=${mpid:-$(backend_of "$victim")}
        [ -n "$pid" ] || { t_diag "round $r: no backend for $victim; killing 'single'"; pid=$(backend_of single); }
        if [ -n "$pid" ]; then
            kill -9 "$pid"
            wait "${client_pids[@]}" 2>/dev/null
            wait_until 120 server_up || t_bail "round $r: the server recovers after $how"
        else
            # the writers stopped on an error (their .err files are shown below); the checks fail
            for f in "$work"/*.err; do [ -s "$f" ] && t_diag "$(basename "$f"): $(tail -n 2 "$f")"; done
            how="kill -9 of the whole cluster (no writer left)"
            wc_cluster_kill9
            wait "${client_pids[@]}" 2>/dev/null
            wc_cluster_restart || t_bail "round $r: the server restarts after $how"
        fi
    fi

    a_single=$(acked single); a_multi=$(acked multi)
    t_diag "round $r: $how after $a_single one-cell and $a_multi 20-cell commits$( ((bulk)) && echo ' (bulk writes)')"

    read -r n_single max_single <<<"$(wc_psql -F ' ' -c "SELECT count(*), coalesce(max(substr(rowkey, 6)::int), 0)
                                                       FROM kv WHERE rowkey LIKE '${R}s%'")"
    t_ok "round $r: every acknowledged one-cell commit is there, with no gap ($n_single rows, $a_single acked)" \
        test "$n_single" = "$max_single" -a "$n_single" -ge "$a_single" -a "$n_single" -le $((a_single + 1)) ||
        show_missing "${R}s" "$a_single"

    read -r n_ids n_bad <<<"$(wc_psql -F ' ' -c "SELECT count(*), count(*) FILTER (WHERE c <> 20)
        FROM (SELECT substr(rowkey, 6) AS id, count(*) AS c FROM kv
              WHERE rowkey LIKE '${R}m%' OR rowkey LIKE '${R}n%' GROUP BY 1) s")"
    t_ok "round $r: 20-cell transactions are whole ($n_ids there, $a_multi acked, $n_bad partial)" \
        test "$n_bad" = 0 -a "$n_ids" -ge "$a_multi" -a "$n_ids" -le $((a_multi + 1)) ||
        show_missing "${R}m" "$a_multi"

    t_is "$(wc_psql -c "SELECT count(*) FROM kv WHERE rowkey LIKE '${R}x%' OR rowkey = '${R}p'")" 0 \
        "round $r: nothing rolled back or left open appears"

    expected="$expected${R}m $((n_ids * 10)) ${R}n $((n_ids * 10)) ${R}s $n_single "
    t_is "$(wc_psql -F ' ' -c "SELECT substr(rowkey, 1, 5), count(*) FROM kv GROUP BY 1 ORDER BY 1" | tr '\n' ' ')" \
        "$expected" "round $r: every round so far reads as it did"
done

t_diag "$rounds rounds; $caught of the $aimed kills aimed at a flush or compaction hit it running"
t_ok "after the crashes, the table takes writes, flushes and compacts" \
    wc_psql -c "INSERT INTO kv VALUES ('zz', 'b', 'q', 7, 'after')" \
            -c "SELECT widecol_flush('kv')" -c "SELECT widecol_compact('kv')"
expected="${expected}zz 1 "
t_is "$(wc_psql -F ' ' -c "SELECT substr(rowkey, 1, 5), count(*) FROM kv GROUP BY 1 ORDER BY 1" | tr '\n' ' ')" \
    "$expected" "after a flush and a major compaction, every round still reads the same"

wc_as_cluster_user "$WC_PGBIN/pg_ctl" -D "$WC_PGDATA" -m fast -w stop >/dev/null 2>&1
wc_cluster_restart || t_bail "a clean restart"
t_is "$(wc_psql -F ' ' -c "SELECT substr(rowkey, 1, 5), count(*) FROM kv GROUP BY 1 ORDER BY 1" | tr '\n' ' ')" \
    "$expected" "after a clean restart, every round still reads the same"
t_ok "widecol_stats lists the store's files" \
    test "$(wc_psql -c "SELECT count(*) > 0 FROM widecol_stats('kv')")" = t

t_done
