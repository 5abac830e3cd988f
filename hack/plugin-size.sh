#!/usr/bin/env bash
# Prints the size of each kubectl-mysqlbench binary given and fails when one is over the limit:
# the plugin is downloaded by every krew user, and the limit keeps it from growing back (it was
# 107 MB unstripped, 51 MB stripped while it linked client-go's every API group; see
# docs/plugin.md, "Release").
#
#   hack/plugin-size.sh FILE...      (make plugin-size checks bin/kubectl-mysqlbench;
#                                     hack/plugin-release.sh checks every platform's binary)
#
# PLUGIN_MAX_BYTES is the limit, 40 MB (40,000,000 bytes) unless set.
set -euo pipefail

max=${PLUGIN_MAX_BYTES:-40000000}
[ $# -gt 0 ] || { echo "usage: $0 FILE..." >&2; exit 2; }
over=0
for f in "$@"; do
  # wc -c, not stat: GNU and BSD stat spell the size differently.
  size=$(wc -c <"$f" | tr -d ' ')
  mb=$(awk -v b="$size" 'BEGIN { printf "%.1f", b / 1e6 }')
  if [ "$size" -gt "$max" ]; then
    echo "$f: $size bytes ($mb MB), over the limit of $max bytes" >&2
    over=1
  else
    echo "$f: $size bytes ($mb MB)"
  fi
done
if [ "$over" = 1 ]; then
  echo "the plugin outgrew PLUGIN_MAX_BYTES=$max: find what grew with go tool nm -size -sort size on an unstripped build," >&2
  echo "or go list -deps ./cmd/kubectl-mysqlbench (client-go's kubernetes/scheme and controller-runtime's client link every API group)" >&2
  exit 1
fi
