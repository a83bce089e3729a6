#!/usr/bin/env bash
# Builds the Kubernetes the multi-machine tests run against — kube-apiserver,
# kube-controller-manager, kube-scheduler and kubelet from the k8s.io/kubernetes
# module and etcd through its embed package, all from the Go module proxy —
# into a cache keyed by version, and prints the directory. A cached build is
# reused: the first build costs about 10 minutes of a 2-core machine for
# kube-apiserver and as much again for the other three (they share most
# packages), later runs nothing. A cache holding only the older pair
# (apiserver, etcd) gains the missing binaries.
#   scripts/k8s-bin.sh            # build if missing; print the directory
# ROCELAB_K8S_CACHE overrides the cache root (/var/cache/rocelab/k8s).
set -euo pipefail
K8S=v1.37.2
STAGING=v0.37.2
ETCD=v3.7.3
cache="${ROCELAB_K8S_CACHE:-/var/cache/rocelab/k8s}/kubernetes-$K8S-etcd-$ETCD"
bins=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet)
missing() {
	for b in "${bins[@]}"; do [ -x "$cache/$b" ] || return 0; done
	return 1
}
if ! missing; then
	echo "$cache"
	exit 0
fi
mkdir -p "$cache"
work="$(mktemp -d)"
# While it builds, $cache.building holds its PID: the tests that need the
# binaries wait for a build in progress (.ci/run starts one beside make test).
echo $$ >"$cache.building"
trap 'rm -rf "$work" "$cache.building"' EXIT
export CGO_ENABLED=0 GOFLAGS=-mod=mod

if [ ! -x "$cache/etcd" ]; then
	mkdir -p "$work/etcd"
	cat >"$work/etcd/main.go" <<'GO'
// Command etcd runs an embedded etcd server for rocelab's test harness.
package main

import (
	"flag"
	"log"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dir := flag.String("data-dir", "", "data directory")
	client := flag.String("listen-client-urls", "http://127.0.0.1:2379", "client URL")
	peer := flag.String("listen-peer-urls", "http://127.0.0.1:2380", "peer URL")
	flag.Parse()
	cfg := embed.NewConfig()
	cfg.Dir = *dir
	cu, err := url.Parse(*client)
	if err != nil {
		log.Fatal(err)
	}
	pu, err := url.Parse(*peer)
	if err != nil {
		log.Fatal(err)
	}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	cfg.LogLevel = "error"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	<-e.Server.ReadyNotify()
	log.Printf("etcd ready on %s", cu)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	select {
	case <-sig:
	case err := <-e.Err():
		log.Fatal(err)
	}
}
GO
	printf 'module rocelab.test/etcd\n\ngo 1.26\n' >"$work/etcd/go.mod"
	(cd "$work/etcd" && go get "go.etcd.io/etcd/server/v3@$ETCD" >/dev/null && go mod tidy >/dev/null && go build -o "$cache/etcd" .)
fi

# cmd NAME IMPORT CONSTRUCTOR: a main package running one Kubernetes command.
cmd() {
	mkdir -p "cmd/$1"
	cat >"cmd/$1/main.go" <<GO
// Command $1 is Kubernetes' $1, for rocelab's test harness.
package main

import (
	"os"

	_ "time/tzdata"

	"k8s.io/component-base/cli"
	"$2"
)

func main() { os.Exit(cli.Run($3)) }
GO
}

if missing; then
	mkdir -p "$work/kube"
	cd "$work/kube"
	# go install …@K8S is refused (the module has replace directives):
	# a scratch module replaces each staging module by its release.
	gomod="$(go mod download -json "k8s.io/kubernetes@$K8S" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')"
	{
		printf 'module rocelab.test/kube\n\ngo 1.26\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$K8S"
		grep -E '=> \./staging' "$gomod" | awk -v v="$STAGING" '{print "\t" $1 " => " $1 " " v}'
		printf ')\n'
	} >go.mod
	cmd kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver/app 'app.NewAPIServerCommand()'
	cmd kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager/app 'app.NewControllerManagerCommand()'
	cmd kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler/app 'app.NewSchedulerCommand()'
	cmd kubelet k8s.io/kubernetes/cmd/kubelet/app 'app.NewKubeletCommand(context.Background())'
	sed -i 's/^import (/import (\n\t"context"/' cmd/kubelet/main.go
	go mod tidy >/dev/null 2>&1
	for b in kube-apiserver kube-controller-manager kube-scheduler kubelet; do
		[ -x "$cache/$b" ] || go build -o "$cache/$b" "./cmd/$b"
	done
fi
echo "$cache"
