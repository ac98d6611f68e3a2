// Package multihost holds the tests of dream across machines: dreamers
// sharing one memory through one etcd and one bare git remote, first in one
// process on loopback, then as separate processes in network namespaces the
// test creates (one per host, plus a hub namespace for etcd and the git
// server), where a holder can be SIGKILLed or have its link cut mid-dream,
// and where the sync cases run between hosts: syncs waiting for the lock, a
// hand-merged conflict, a refused push, a force-pushed remote.
//
// Its tests run only when DREAM_MULTIHOST=1 is set: the network-namespace
// test alone takes minutes under -race, more than the rest of the module, so
// `go test ./...` skips them and CI (.ci/run) runs this package in a step of
// its own: DREAM_MULTIHOST=1 go test -race ./internal/multihost.
//
// It has no code of its own: it exists so that the embedded etcd server the
// tests start is linked into this package's test binary only.
package multihost
