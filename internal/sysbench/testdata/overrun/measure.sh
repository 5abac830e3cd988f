#!/bin/sh
# Measures sysbench's own end-of-step overrun on normal steps: how much longer than --time it
# reports as "total time" (the reporter's durationSeconds), with the longest event ("max:" in ms).
# It starts a private MariaDB on loopback (mariadb-server-core), as the package's real tests do.
# usage: measure.sh DIR > results.txt
# Each line: script threads --time total_time max_latency_ms. sysbench.OverrunTolerance cites it.
set -eu
d=$1/db; rm -rf "$d"; mkdir -p "$d"
mariadb-install-db --no-defaults --user="$(id -un)" --datadir="$d/data" --auth-root-authentication-method=socket \
  --skip-test-db >/dev/null 2>&1
port=33917
/usr/sbin/mariadbd --no-defaults --user="$(id -un)" --datadir="$d/data" --bind-address=127.0.0.1 --port=$port \
  --socket="$d/s.sock" --pid-file="$d/pid" --log-error="$d/err.log" --skip-log-bin --innodb-buffer-pool-size=128M \
  --innodb-flush-log-at-trx-commit=0 --skip-name-resolve --max-connections=300 &
server=$!
trap 'kill $server' EXIT
for _ in $(seq 1 60); do mariadb --no-defaults --socket="$d/s.sock" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.5; done
mariadb --no-defaults --socket="$d/s.sock" -uroot \
  -e "CREATE DATABASE sbtest; CREATE USER sb@'%' IDENTIFIED BY 'sb'; GRANT ALL ON sbtest.* TO sb@'%';"
common="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$port --mysql-user=sb --mysql-password=sb --mysql-db=sbtest --tables=4 --table-size=10000"
sysbench oltp_read_write $common --threads=4 prepare >/dev/null
for rep in 1 2 3; do
  for script in oltp_point_select oltp_read_write oltp_update_index; do
    for th in 1 4 16 64 128; do
      for dur in 5 10; do
        tt=$(sysbench $script $common --threads=$th --time=$dur --percentile=95 run 2>&1 |
          awk '/total time:/{sub("s","",$3);print $3} /max:/{m=$2} END{print m}' | tr '\n' ' ')
        echo "$script $th $dur $tt"
      done
    done
  done
done
