#!/bin/sh
# Captures the golden outputs of internal/mysqlslap/testdata from real runs of Build's launcher.
# usage: capture.sh PREFIX LAUNCHER ROOT HOST PORT
#   LAUNCHER: Build's launcher script with its mount paths relocated under ROOT (cred/, run/);
#   the server at HOST:PORT has the accounts below (see the test's setup): slap (password in
#   ROOT/cred/password, the operator's grants), nop (no grant on mysqlslap), ro (SELECT only),
#   noins (all but INSERT).
set -u
prefix=$1 l=$2 root=$3 host=$4 port=$5
pw=$(cat "$root/cred/password")
run() { # run NAME USER STATS ARGS...
  name=$1 user=$2 stats=$3; shift 3
  rm -f "$root/term"
  env MYSQLBENCH_HOST="$host" MYSQLBENCH_PORT="$port" MYSQLBENCH_USER="$user" MYSQLBENCH_RESULT_FILE="$root/term" \
    MYSQLBENCH_SERVER_STATS="$stats" sh "$l" mysqlslap --host="$host" --port="$port" --user="$user" \
    --create-schema=mysqlslap "$@" >"$prefix-$name.log" 2>&1
  echo "$?" >"$prefix-$name.rc"
  cp "$root/term" "$prefix-$name.term" 2>/dev/null || : >"$prefix-$name.term"
}
gen="--auto-generate-sql --auto-generate-sql-load-type=mixed"
run ok slap 0 --concurrency=4 --iterations=2 --number-of-queries=2000 $gen
run stats slap 1 --concurrency=4 --iterations=1 --number-of-queries=2000 $gen
printf '%s' "wrong-$pw" >"$root/cred/password"
run access-denied slap 0 --concurrency=2 --iterations=1 --number-of-queries=100 $gen
printf '%s' "$pw" >"$root/cred/password"
run no-grant nop 0 --concurrency=2 --iterations=1 --number-of-queries=100 $gen
run no-insert noins 0 --concurrency=2 --iterations=1 --number-of-queries=100 $gen
run bad-query slap 0 --concurrency=2 --iterations=1 --number-of-queries=100 '--create=DO 0' '--query=SELEC 1'
run bad-option slap 0 --concurrency=2 --iterations=1 --number-of-queries=100 $gen --no-such-option=1
run no-stats-grants bare 1 --concurrency=2 --iterations=1 --number-of-queries=100 $gen
host=no-such-host.invalid
run unknown-host slap 0 --concurrency=2 --iterations=1 --number-of-queries=100 $gen
host=127.0.0.1 port=1
run refused slap 0 --concurrency=2 --iterations=1 --number-of-queries=100 $gen
