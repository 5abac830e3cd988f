#!/usr/bin/env bash
# Prints a directory of strict Kubernetes JSON schemas that kubeconform can use offline
# (-schema-location '<dir>/{{.ResourceKind}}-{{.Group}}-{{.ResourceAPIVersion}}.json' style names,
# see hack/validate-manifests.sh).
#
# The schemas come from the PyPI package kubernetes-validate (downloaded with pip, never
# installed). kubeconform resolves "$ref"s against "$id", so the script drops "$id" and turns the
# absolute "/api/_definitions.json#" refs into file-relative "_definitions.json#" ones. Cached by
# version under $MYSQLBENCH_CACHE/kube-schemas.
#
# env: KUBE_SCHEMA_VERSION (Kubernetes minor, default 1.33), KUBERNETES_VALIDATE_VERSION (PyPI
#      version holding it, default 1.33.1), PYTHON (default python3).
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
. "$hack/lib.sh"

KUBE_SCHEMA_VERSION=${KUBE_SCHEMA_VERSION:-1.33}
KUBERNETES_VALIDATE_VERSION=${KUBERNETES_VALIDATE_VERSION:-1.33.1}
PYTHON=${PYTHON:-python3}
dir="$MYSQLBENCH_CACHE/kube-schemas/kubernetes-validate-$KUBERNETES_VALIDATE_VERSION/v$KUBE_SCHEMA_VERSION-strict"

if [ -f "$dir/.complete" ]; then
	echo "$dir"
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log "pip: downloading kubernetes-validate==$KUBERNETES_VALIDATE_VERSION for its Kubernetes $KUBE_SCHEMA_VERSION schemas"
"$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: \
	--dest "$work" "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" >&2
wheel=$(ls "$work"/kubernetes_validate-*.whl)

rm -rf "$dir.tmp"
mkdir -p "$dir.tmp"
"$PYTHON" - "$wheel" "$KUBE_SCHEMA_VERSION" "$dir.tmp" <<'PY'
import json, re, sys, zipfile

wheel, minor, out = sys.argv[1:]
prefix = re.compile(r"kubernetes_validate/kubernetes-json-schema/v%s\.\d+-local-strict/([^/]+\.json)$" % re.escape(minor))
count = 0
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        m = prefix.match(name)
        if not m:
            continue
        doc = json.loads(z.read(name))
        doc.pop("$id", None)
        text = json.dumps(doc).replace('"/api/_definitions.json#', '"_definitions.json#')
        with open("%s/%s" % (out, m.group(1)), "w") as f:
            f.write(text)
        count += 1
if count == 0:
    sys.exit("no v%s strict schemas in %s" % (minor, wheel))
print(count, file=sys.stderr)
PY
[ -f "$dir.tmp/_definitions.json" ] && [ -f "$dir.tmp/deployment-apps-v1.json" ] ||
	die "kubernetes-validate $KUBERNETES_VALIDATE_VERSION: no complete v$KUBE_SCHEMA_VERSION schema set"
touch "$dir.tmp/.complete"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
echo "$dir"
