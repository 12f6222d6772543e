#!/usr/bin/env bash
# Builds the upstream control plane this project is tested against, from Go modules:
# kube-apiserver and kube-controller-manager from k8s.io/kubernetes, etcd from
# go.etcd.io/etcd/server/v3, into upstream/bin/ (git-ignored), version-stamped as upstream does.
# Does nothing when the binaries there were built from the pinned versions in go.mod.
#
#   upstream/build.sh            build what is missing or stale
#   upstream/build.sh --regen    rewrite go.mod's replace block for the pinned Kubernetes version
#                                (k8s.io/kubernetes requires its staging modules at v0.0.0 and
#                                replaces them with folders of its own repository; a module that
#                                depends on it must replace each with its published v0.X.Y tag)
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v go >/dev/null 2>&1; then
  echo "upstream/build.sh: the go command is missing; it builds kube-apiserver, kube-controller-manager and etcd (Go 1.26)" >&2
  exit 1
fi

K8S=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)          # v1.37.2
ETCD=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)  # v3.7.0

if [[ "${1:-}" == "--regen" ]]; then
  GOMOD=$(go mod download -json "k8s.io/kubernetes@$K8S" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  MINOR_PATCH=${K8S#v1.}
  for m in $(awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' "$GOMOD"); do
    go mod edit -replace="$m=$m@v0.$MINOR_PATCH"
  done
  GODEBUG_LINE=$(sed -n 's/^godebug //p' "$GOMOD")
  [[ -n "$GODEBUG_LINE" ]] && go mod edit -godebug="$GODEBUG_LINE"
  go mod tidy
  echo "go.mod regenerated for k8s.io/kubernetes $K8S"
fi

STAMP="k8s=$K8S etcd=$ETCD go=$(go env GOVERSION) sum=$(sha256sum go.sum cmd/etcd/main.go | sha256sum | cut -c1-16)"
if [[ -f bin/.stamp && "$(cat bin/.stamp)" == "$STAMP" && -x bin/kube-apiserver && -x bin/kube-controller-manager && -x bin/etcd ]]; then
  echo "upstream binaries are up to date ($STAMP)"
  exit 0
fi

MINOR=$(echo "$K8S" | cut -d. -f2)
# A fixed build date keeps the binaries reproducible for the same pinned versions.
LDF="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDF="$LDF -X $p.gitVersion=$K8S -X $p.gitMajor=1 -X $p.gitMinor=$MINOR"
  LDF="$LDF -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done

echo "building kube-apiserver, kube-controller-manager ($K8S) and etcd ($ETCD) into upstream/bin ..."
start=$(date +%s)
mkdir -p bin
rm -f bin/.stamp
CGO_ENABLED=0 go build -trimpath -ldflags "$LDF" -o bin/ \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o bin/etcd ./cmd/etcd
echo "$STAMP" > bin/.stamp
echo "built in $(( $(date +%s) - start )) s:"
bin/kube-apiserver --version
bin/kube-controller-manager --version
bin/etcd --version | head -1
