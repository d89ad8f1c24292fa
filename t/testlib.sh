# t/testlib.sh -- what the t/ tests share: TAP output and a cluster with widecol_fdw.
#
#   t_ok DESC CMD...        ok if CMD succeeds
#   t_is GOT WANT DESC      ok if the two strings are equal (shows both if not)
#   t_skip_all WHY          the whole test cannot run here: "1..0 # SKIP WHY", exit 0
#   t_done                  "1..N", exits 1 if any check failed
#   t_cluster_with_fdw      a throw-away cluster (scripts/lib.sh) with CREATE EXTENSION and
#                           CREATE SERVER wide done; bails out (a failure) if that fails
#   t_long                  true in the longer soak mode (WIDECOL_LONG=1, scripts/test.sh --long)
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

T_N=0
T_FAILED=0

t_ok() {
    local desc=$1; shift
    T_N=$((T_N + 1))
    if "$@"; then
        echo "ok $T_N - $desc"
    else
        echo "not ok $T_N - $desc"
        T_FAILED=$((T_FAILED + 1))
        return 1
    fi
}

t_is() {
    local got=$1 want=$2 desc=$3
    T_N=$((T_N + 1))
    if [ "$got" = "$want" ]; then
        echo "ok $T_N - $desc"
    else
        echo "not ok $T_N - $desc"
        printf '#   got:  %s\n' "$got" | head -n 20
        printf '#   want: %s\n' "$want" | head -n 20
        T_FAILED=$((T_FAILED + 1))
        return 1
    fi
}

t_diag() { printf '# %s\n' "$*"; }

t_skip_all() {
    echo "1..0 # SKIP $*"
    exit 0
}

# Ends the test at once with a failure: for a set-up that did not work.
t_bail() {
    T_N=$((T_N + 1))
    echo "not ok $T_N - $*"
    [ -n "$WC_CLUSTER_DIR" ] && [ -f "$WC_CLUSTER_DIR/server.log" ] &&
        { t_diag "the end of the server log:"; tail -n 10 "$WC_CLUSTER_DIR/server.log" | sed 's/^/#   /'; }
    echo "1..$T_N"
    exit 1
}

t_done() {
    echo "1..$T_N"
    [ "$T_FAILED" -eq 0 ]
    exit
}

t_long() { [ -n "${WIDECOL_LONG:-}" ] && [ "${WIDECOL_LONG}" != 0 ]; }

t_cluster_with_fdw() {
    wc_cluster_start "$@" || t_bail "a throw-away cluster starts"
    local err
    if ! err=$(wc_psql -c "CREATE EXTENSION widecol_fdw" \
                       -c "CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw" 2>&1); then
        printf '%s\n' "$err" | sed 's/^/# /'
        t_bail "CREATE EXTENSION widecol_fdw; CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw"
    fi
}
