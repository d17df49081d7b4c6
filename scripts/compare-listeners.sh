#!/bin/bash
# Compares two standby-listener binaries on the listener benchmark, in pairs
# of short runs, alternating which goes first, and prints for each event kind
# and end point the median added latency of each and the median of the
# per-pair differences, with how many pairs the new one was lower in.
#
# Why pairs of short runs: on a shared host the load drifts over minutes, so
# two long runs of the same binary disagree by more than most changes are
# worth (one 300-sample run said a change saved 80 us, twelve
# pairs said it cost 9). A pair runs back to back; its difference cancels
# most of the drift.
#
# Usage: scripts/compare-listeners.sh OLD NEW [PAIRS [SAMPLES]]
# (as root, after make; defaults 12 pairs of 120 samples, ~6 minutes).
set -eu
cd "$(dirname "$0")/.."

old=${1:?usage: $0 OLD NEW [PAIRS [SAMPLES]]}
new=${2:?usage: $0 OLD NEW [PAIRS [SAMPLES]]}
pairs=${3:-12}
samples=${4:-120}
for b in "$old" "$new"; do
        [ -x "$b" ] || { echo "$0: $b is not an executable" >&2; exit 2; }
done
[ -x build/standby-bench ] || { echo "$0: build/standby-bench is missing: run make first" >&2; exit 2; }

out=$(mktemp -d /tmp/standby-compare.XXXXXX)
trap 'rm -rf "$out"' EXIT

# One run: prints "endpoint kind added_p50" for the frozen rows and
# "endpoint-same kind beyond_same_p50" (what the listener adds beyond a
# bare thawer on the same service, in the same run).
run() {
        build/standby-bench --listener="$1" --samples "$samples" --idle-seconds 1 --output "$out/res" > "$out/log" 2>&1 ||
                { echo "$0: the bench failed with $1:" >&2; tail -n 5 "$out/log" >&2; exit 1; }
        awk '/^Until the service replied/ { ep = "reply" } /^Until the client/ { ep = "read" }
             /^(socket|push|dbus-call) / { kind = $1; mode = $2 }
             /^ +added/ && mode == "frozen" { print ep, kind, $2 }
             /^ +beyond same/ { print ep "-same", kind, $3 }' "$out/log"
}

# Not in a pipeline: a failed run must end the comparison.
one() {
        run "$2" > "$out/one"
        sed "s/^/$1 $3 /" "$out/one" >> "$out/all"
}

for i in $(seq 1 "$pairs"); do
        if [ $((i % 2)) -eq 1 ]; then
                one old "$old" "$i"
                one new "$new" "$i"
        else
                one new "$new" "$i"
                one old "$old" "$i"
        fi
        echo "[compare] pair $i/$pairs done" >&2
done

echo "Added latency p50 (us), $pairs pairs of $samples samples; old: $old, new: $new"
echo "(reply-same, read-same: beyond a bare thawer on the same service, p50)"
printf '%-10s %-10s %10s %10s %16s %12s\n' "end" "event" "old" "new" "new-old (pairs)" "new lower"
awk '
function median(a, n,   i, j, t) {
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ v[$1, $2, $3, $4] = $5; keys[$3 " " $4] = 1; if ($2 > n) n = $2 }
END {
        split("reply read reply-same read-same", eps, " "); split("socket push dbus-call", kinds, " ")
        for (e = 1; e <= 4; e++) for (k = 1; k <= 3; k++) {
                key = eps[e] " " kinds[k]
                if (!(key in keys)) continue
                no = nn = nd = lower = 0
                for (i = 1; i <= n; i++) {
                        if (("old", i, eps[e], kinds[k]) in v) o[++no] = v["old", i, eps[e], kinds[k]]
                        if (("new", i, eps[e], kinds[k]) in v) w[++nn] = v["new", i, eps[e], kinds[k]]
                        if ((("old", i, eps[e], kinds[k]) in v) && (("new", i, eps[e], kinds[k]) in v)) {
                                d[++nd] = v["new", i, eps[e], kinds[k]] - v["old", i, eps[e], kinds[k]]
                                if (d[nd] < 0) lower++
                        }
                }
                printf "%-10s %-10s %10.1f %10.1f %+16.1f %9d/%d\n", eps[e], kinds[k], median(o, no), median(w, nn),
                       median(d, nd), lower, nd
        }
}' "$out/all"
