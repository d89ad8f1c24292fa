#!/usr/bin/env bash
# scripts/isolation.sh -- the isolation specs (specs/NAME.spec, run by pg_isolation_regress)
# against an ordinary table first, then against widecol_fdw, both compared with expected/NAME.out:
#
#   1. heap twins: every spec rewritten so that its widecol table is an ordinary (heap) table
#      (the rule below), run, and required to give exactly expected/NAME.out; this proves that
#      expected/ is what PostgreSQL gives for an ordinary table with the same rows;
#   2. the specs as they are (widecol tables), required to give the same expected/NAME.out.
#
# Ends with the two lines
#   isolation-heap: N passed, M failed
#   isolation: N passed, M failed
# (counted per spec) and exits non-zero if anything failed.
#
# Usage: bash scripts/isolation.sh [--running] [--generate] [--heap-only|--widecol-only] [NAME...]
#   NAME...          the specs to run (default: the Makefile's ISOLATION list, which must name
#                    every specs/*.spec)
#   --running        use the server that PGHOST, PGPORT and PGUSER point at, with widecol_fdw
#                    installed and preloaded (default: a throw-away cluster of scripts/lib.sh,
#                    running the installation of WC_DESTDIR if set)
#   --generate       write expected/NAME.out from the heap twins' output (never edit those files
#                    by hand), then run both stages
#   --heap-only, --widecol-only   run one stage only
# Outputs: output_iso/heap/ (the twins' specs, results/, regression.diffs) and
# output_iso/widecol/ (results/, regression.diffs).  PGISOLATIONTIMEOUT (isolationtester's
# limit for one step, default here 30 s) is passed on.
#
# The heap twin rule: in a line that contains "CREATE FOREIGN TABLE", the clause
# "SERVER <name>" and the "OPTIONS (...)" after it (no parentheses inside) are removed; then
# every "FOREIGN TABLE" becomes "TABLE", and a column's OPTIONS (cell '...') (a wide table)
# is removed.  So a spec writes each CREATE FOREIGN TABLE on one line, and drops its tables
# with DROP FOREIGN TABLE; everything else (CREATE EXTENSION, CREATE SERVER, functions that
# call widecol_flush only for a foreign table) stays as it is.
#
# A spec with the line "# Heap twin: none." has no twin (it tests what an ordinary table has no
# counterpart for, and says why): stage 1 leaves it out, and its expected/NAME.out is its own
# output with widecol_fdw, reviewed (--generate does not write it: copy
# output_iso/widecol/results/NAME.out after reading it).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { sed -n '2,38p' "$0" | sed 's/^# \{0,1\}//'; }

running=
generate=
do_heap=1
do_widecol=1
names=()
while [ $# -gt 0 ]; do
    case "$1" in
        --running) running=1 ;;
        --generate) generate=1 ;;
        --heap-only) do_widecol= ;;
        --widecol-only) do_heap= ;;
        -h|--help) usage; exit 0 ;;
        -*) usage >&2; exit 2 ;;
        *) names+=("$1") ;;
    esac
    shift
done
[ -n "$do_heap$do_widecol" ] || { usage >&2; exit 2; }
[ -n "$generate" ] && [ -z "$do_heap" ] && wc_die "--generate needs the heap twins (not --widecol-only)"

cd "$WC_ROOT" || exit 1
ISO_BIN=$(dirname "$("$PG_CONFIG" --pgxs)")/../test/isolation
ISO_REGRESS=$ISO_BIN/pg_isolation_regress
[ -x "$ISO_REGRESS" ] || wc_die "$ISO_REGRESS not found (postgresql-server-dev-$WC_PGVERSION)"
export PGISOLATIONTIMEOUT=${PGISOLATIONTIMEOUT:-30}

# --- which specs
listed=$(sed -n 's/^ISOLATION[[:space:]]*=[[:space:]]*//p' Makefile)
setup_fail=0
if [ ${#names[@]} -eq 0 ]; then
    read -r -a names <<<"$listed"
    for f in specs/*.spec; do
        [ -e "$f" ] || continue
        n=$(basename "$f" .spec)
        if [[ " $listed " != *" $n "* ]]; then
            wc_warn "specs/$n.spec is not in the Makefile's ISOLATION list (one line: ISOLATION = ...)"
            setup_fail=1
        fi
    done
fi
[ ${#names[@]} -gt 0 ] || wc_die "no specs to run (the Makefile's ISOLATION list is empty?)"
for n in "${names[@]}"; do
    [ -f "specs/$n.spec" ] || wc_die "specs/$n.spec does not exist"
done

OUT=$WC_ROOT/output_iso
rm -rf "$OUT/heap" "$OUT/widecol"
mkdir -p "$OUT/heap/specs" "$OUT/widecol" || exit 1
chmod 755 "$OUT" "$OUT/heap" "$OUT/widecol" 2>/dev/null

# twin_spec IN OUT: the heap twin of spec IN, written to OUT; fails if the rule does not apply.
twin_spec() {
    local in=$1 out=$2 creates converted
    creates=$(grep -v '^[[:space:]]*#' "$in" | grep -c 'CREATE FOREIGN TABLE')
    converted=$(grep -v '^[[:space:]]*#' "$in" | grep -cE 'CREATE FOREIGN TABLE .* SERVER [A-Za-z_][A-Za-z0-9_]*')
    if [ "$creates" -eq 0 ]; then
        wc_warn "$in: no CREATE FOREIGN TABLE (nothing to make an ordinary table of)"; return 1
    fi
    if [ "$creates" -ne "$converted" ]; then
        wc_warn "$in: a CREATE FOREIGN TABLE without its SERVER clause on the same line"; return 1
    fi
    sed -E -e '/CREATE FOREIGN TABLE/ s/ SERVER [A-Za-z_][A-Za-z0-9_]*( OPTIONS \([^()]*\))?//' \
           -e "/CREATE FOREIGN TABLE/ s/ OPTIONS \(cell '[^']*'\)//g" \
           -e 's/FOREIGN TABLE/TABLE/g' "$in" >"$out" || return 1
    if grep -qE 'FOREIGN TABLE|^[^#]*CREATE TABLE .* SERVER ' "$out"; then
        wc_warn "$in: the twin still names a foreign table or a server: $(grep -nE 'FOREIGN TABLE| SERVER ' "$out" | head -n 2)"
        return 1
    fi
}

# run_iso LABEL INPUTDIR OUTPUTDIR DBNAME: pg_isolation_regress on the names; sets P and F.
run_iso() {
    local label=$1 indir=$2 outdir=$3 db=$4 rc log=$3/pg_isolation_regress.log
    echo "---- $label: pg_isolation_regress ${names[*]}"
    "$ISO_REGRESS" --inputdir="$indir" --outputdir="$outdir" --bindir="$WC_PGBIN" \
        --dbname="$db" "${names[@]}" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    P=$(grep -cE '^(test| ) +[^ ]+ +\.\.\. ok' "$log")
    F=$(grep -cE '^(test| ) +[^ ]+ +\.\.\. FAILED' "$log")
    # a spec that ran no test line (pg_isolation_regress broke) counts as failed
    local missing=$(( ${#names[@]} - P - F ))
    [ "$missing" -gt 0 ] && F=$((F + missing))
    [ "$rc" -ne 0 ] && [ "$F" -eq 0 ] && F=1
    if [ -s "$outdir/regression.diffs" ]; then
        echo "---- $label: $outdir/regression.diffs (first 150 lines)"
        head -n 150 "$outdir/regression.diffs"
    fi
    return 0
}

# --- the server
if [ -z "$running" ]; then
    wc_cluster_start || wc_die "the throw-away cluster did not start"
    echo "cluster: $PGHOST port $PGPORT, user $PGUSER"
fi

HP=0; HF=$setup_fail; WP=0; WF=0

# --- 1. the heap twins
all_names=("${names[@]}")
twins=()
for n in "${all_names[@]}"; do
    grep -q '^# Heap twin: none\.' "specs/$n.spec" || twins+=("$n")
done
if [ -n "$do_heap" ] && [ ${#twins[@]} -gt 0 ]; then
    names=("${twins[@]}")
    ln -sfn "$WC_ROOT/expected" "$OUT/heap/expected"
    for n in "${names[@]}"; do
        twin_spec "specs/$n.spec" "$OUT/heap/specs/$n.spec" || HF=$((HF + 1))
    done
    if [ "$HF" -eq 0 ]; then
        if [ -n "$generate" ]; then
            rm -f "$OUT/heap/expected"
            mkdir -p "$OUT/heap/expected"
            # empty expected files: pg_isolation_regress stops at the first one that is missing
            for n in "${names[@]}"; do : >"$OUT/heap/expected/$n.out"; done
            run_iso "heap twins (to generate expected/)" "$OUT/heap" "$OUT/heap" isolation_regression_heap
            for n in "${names[@]}"; do
                if [ -s "$OUT/heap/results/$n.out" ]; then
                    cp "$OUT/heap/results/$n.out" "expected/$n.out"
                    echo "wrote expected/$n.out"
                else
                    wc_warn "no output from the heap twin of $n"; HF=$((HF + 1))
                fi
            done
            rm -rf "$OUT/heap/expected" "$OUT/heap/results" "$OUT/heap/regression."*
            ln -sfn "$WC_ROOT/expected" "$OUT/heap/expected"
        fi
        run_iso "heap twins" "$OUT/heap" "$OUT/heap" isolation_regression_heap
        HP=$P; HF=$((HF + F))
    fi
fi

# --- 2. widecol
names=("${all_names[@]}")
if [ -n "$do_widecol" ]; then
    run_iso "widecol" "$WC_ROOT" "$OUT/widecol" isolation_regression
    WP=$P; WF=$F
fi

[ -n "$running" ] || wc_cluster_stop

[ -n "$do_heap" ] && echo "isolation-heap: $HP passed, $HF failed"
[ -n "$do_widecol" ] && echo "isolation: $WP passed, $WF failed"
[ "$HF" -eq 0 ] && [ "$WF" -eq 0 ]
