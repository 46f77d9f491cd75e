# Sourced by the integration scripts that read a textfile back through the real node_exporter.
# start_node_exporter NE DIR LOG: starts NE (prometheus-node-exporter) with only the textfile collector on DIR,
# on a free loopback port (a few tries: another test may hold one); sets `port` and `ne_pid` (the caller's
# cleanup kills it). `port` stays empty when it did not start (LOG says why).
start_node_exporter() {
  local ne=$1 dir=$2 log=$3 p
  port=""
  for _try in 1 2 3 4 5; do
    p=$((20000 + RANDOM % 20000))
    "$ne" --collector.disable-defaults --collector.textfile --collector.textfile.directory="$dir" \
      --web.listen-address="127.0.0.1:$p" >"$log" 2>&1 &
    ne_pid=$!
    for _ in $(seq 50); do
      if curl -fsS "http://127.0.0.1:$p/metrics" >/dev/null 2>&1; then port=$p; return 0; fi
      kill -0 "$ne_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill "$ne_pid" 2>/dev/null || true
    wait "$ne_pid" 2>/dev/null || true
    ne_pid=""
  done
}
