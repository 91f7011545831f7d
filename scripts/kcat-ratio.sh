#!/usr/bin/env bash
# kcat-ratio.sh — the worker against a kcat consume→produce copy of the same records, with
# the broker in its own process (docs/performance.md, "End to end against kcat").
#
#   make build && scripts/kcat-ratio.sh [-r RUNS] [-v SPEC_VERSION] [-s SETS] [-p POINTS] [-P PORT] [-b BINARY] [-k] [-T]
#
# -k: against the real Kafka at $DISTFEAT_TEST_BROKERS instead of a `distfeat broker` (make
# bench-kcat runs it under internal/realkafka's kafkarun); the topics that -T prints (one
# partition each) must exist: the loaded one, and a copy, input, output and DLQ per run.
#
# Each run starts a `distfeat broker` (one partition per topic) and loads it with SETS JSON
# sets of POINTS two-dimensional points (one record per set, `end: true`), then times:
#   kcat    `kcat -C` of the loaded topic piped into `kcat -P` to a fresh topic (the ceiling:
#           the same records consumed and produced, no work in between), from exec to exit;
#   worker  `distfeat worker` on a fresh copy of the same topic, from exec until its own
#           distfeat_windows_emitted_total counter reaches SETS (one feature record per set).
# Both include their start-up (kcat's connection, the worker's group join). The spec is the
# issue-#22 workload: mmd D = 1024 + hdd_js D = 4096 at spec version SPEC_VERSION (default 3,
# the built-in default's version: mmd by NUFFT; 2: the direct method).
# Prints each run, then the ratio of the fastest kcat copy to the median worker time (1 = as
# fast as the copy). The fastest copy, not the median, is the ceiling: kcat's own time is
# bimodal here (about 0.67 s, or 1.16 s when its consumer waits out librdkafka's
# fetch.wait.max.ms before it sees the end), and the worker should not gain from that.
set -euo pipefail

RUNS=5 VERSION=3 SETS=3000 POINTS=500 PORT=19092 BIN=bin/distfeat KAFKA=0 TOPICS=0
while getopts "r:v:s:p:P:b:kT" o; do
	case $o in
	r) RUNS=$OPTARG ;;
	v) VERSION=$OPTARG ;;
	s) SETS=$OPTARG ;;
	p) POINTS=$OPTARG ;;
	P) PORT=$OPTARG ;;
	b) BIN=$OPTARG ;;
	k) KAFKA=1 ;;
	T) TOPICS=1 ;;
	*) sed -n '2,22p' "$0" >&2; exit 2 ;;
	esac
done
topic() { # the name of topic $1 in run $2 (the same names on the embedded broker's fresh broker each run)
	if [ "$KAFKA" = 1 ] || [ "$TOPICS" = 1 ]; then echo "kcat-ratio-$1${2:+-$2}"; else echo "$1"; fi
}
if [ "$TOPICS" = 1 ]; then
	list=$(topic stage)
	for r in $(seq 1 "$RUNS"); do list="$list,$(topic copy "$r"),$(topic in "$r"),$(topic out "$r"),$(topic dlq "$r")"; done
	echo "$list"
	exit 0
fi
command -v kcat >/dev/null || { echo "kcat-ratio: kcat not found (apt-get install kcat)" >&2; exit 1; }
[ -x "$BIN" ] || { echo "kcat-ratio: $BIN not found (make build)" >&2; exit 1; }

work=$(mktemp -d)
broker=127.0.0.1:$PORT metrics=127.0.0.1:$((PORT + 1))
if [ "$KAFKA" = 1 ]; then
	[ -n "${DISTFEAT_TEST_BROKERS:-}" ] || { echo "kcat-ratio: -k needs DISTFEAT_TEST_BROKERS (make bench-kcat)" >&2; exit 1; }
	broker=${DISTFEAT_TEST_BROKERS%%,*}
fi
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

cat >"$work/spec.json" <<EOF
{"version": $VERSION, "seed": 42, "dim": 2, "bounds": {"lo": [0, 0], "hi": [1, 1]}, "out_of_bounds": "clip",
 "families": [
  {"name": "mmd", "kind": "mmd", "features": 1024, "bandwidth": 0.1},
  {"name": "hdd_js", "kind": "hdd", "divergence": "js", "features": 4096, "sigma": 0.5}]}
EOF

ms() { date +%s%3N; }
copy() { # copy the loaded topic to $1
	kcat -C -b "$broker" -t "$(topic stage)" -o beginning -e -q -K$'\t' -f '%k\t%s\n' | kcat -P -b "$broker" -t "$1" -K$'\t'
}
emitted() { # the worker's distfeat_windows_emitted_total, summed over reasons
	curl -s "http://$metrics/metrics" | awk '/^distfeat_windows_emitted_total/ {s += $2} END {print s + 0}'
}
# The wait for the worker must not compete with it for the CPU: polling /metrics every 20 ms
# (a curl and a parser each time) took about a third of a core. Instead the loop below forks
# nothing while the worker works: it reads the worker's CPU time from /proc with bash's own
# read, every 10 ms (read -t on a FIFO nobody writes is a sleep without a process), and asks
# /metrics only once the worker has used no CPU for 200 ms. The worker's time is the moment
# its CPU time last grew (clock ticks of 10 ms: ±20 ms).
mkfifo "$work/tick"
exec {tick}<>"$work/tick"
start_broker() { # a fresh broker per run (kfake keeps every topic in memory: the runs must not slow each other), loaded
	if [ "$KAFKA" = 1 ]; then # the real broker: fresh topics per run, the stage topic loaded once
		bpid=
		[ "$r" = 1 ] || return 0
		"$BIN" produce --brokers "$broker" --topic "$(topic stage)" --synthetic gmm --sets "$SETS" --points "$POINTS" \
			--chunk "$POINTS" --format json >"$work/produce.log" 2>&1 || { cat "$work/produce.log" >&2; exit 1; }
		return 0
	fi
	"$BIN" broker --addr "$broker" --partitions 1 --topics stage,copy,in,out,dlq >"$work/broker.log" 2>&1 &
	bpid=$!
	pids+=($bpid)
	for _ in $(seq 1 100); do kcat -L -b "$broker" -t stage >/dev/null 2>&1 && break; sleep 0.1; done
	"$BIN" produce --brokers "$broker" --topic stage --synthetic gmm --sets "$SETS" --points "$POINTS" \
		--chunk "$POINTS" --format json >"$work/produce.log" 2>&1 || { cat "$work/produce.log" >&2; exit 1; }
}
kcs=() wks=()
for r in $(seq 1 "$RUNS"); do
	start_broker
	t0=$(ms)
	copy "$(topic copy "$r")"
	kc=$(($(ms) - t0))
	copy "$(topic in "$r")"
	sleep 0.5
	t0=$(ms)
	DISTFEAT_BROKERS=$broker DISTFEAT_INPUT_TOPIC=$(topic in "$r") DISTFEAT_OUTPUT_TOPIC=$(topic out "$r") DISTFEAT_DLQ_TOPIC=$(topic dlq "$r") \
		DISTFEAT_GROUP=kcat-ratio-$r DISTFEAT_SPEC=$work/spec.json DISTFEAT_METRICS_ADDR=$metrics \
		DISTFEAT_LOG_LEVEL=warn "$BIN" worker >"$work/worker$r.log" 2>&1 &
	wpid=$!
	pids+=($wpid)
	prev=-1 last=$t0 asked=0
	while :; do
		[ -e "/proc/$wpid" ] || { cat "$work/worker$r.log" >&2; exit 1; }
		read -r -a st <"/proc/$wpid/stat"
		us=${EPOCHREALTIME/./}
		now=$((us / 1000))
		if [ $((st[13] + st[14])) -ne "$prev" ]; then
			prev=$((st[13] + st[14])) last=$now
		elif [ $((now - last)) -ge 200 ] && [ $((now - asked)) -ge 200 ]; then
			asked=$now
			[ "$(emitted)" -ge "$SETS" ] && break
		fi
		read -r -t 0.01 -u "$tick" || true
	done
	wk=$((last - t0))
	cpu=$(awk -v t="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / t}' "/proc/$wpid/stat")
	kill "$wpid" $bpid
	wait "$wpid" $bpid 2>/dev/null || true
	ratio=$(awk -v a="$kc" -v b="$wk" 'BEGIN{printf "%.2f", a / b}')
	kcs+=("$kc") wks+=("$wk")
	mps=$(awk -v n=$((SETS * POINTS)) -v t="$wk" 'BEGIN{printf "%.2f", n / t / 1000}')
	echo "run $r: kcat copy $kc ms, worker $wk ms ($mps M points/s, $cpu CPU-s): ratio $ratio"
done
kmin=$(printf '%s\n' "${kcs[@]}" | sort -n | head -n 1)
wmed=$(printf '%s\n' "${wks[@]}" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
where="embedded broker (kfake)"
[ "$KAFKA" = 1 ] && where="Apache Kafka at $broker"
awk -v where="$where" -v v="$VERSION" -v k="$kmin" -v w="$wmed" 'BEGIN {printf "%s, spec version %s: fastest kcat copy %d ms, median worker %d ms: ratio %.2f\n", where, v, k, w, k / w}'
