// Package etcdtest starts a real etcd server in-process for tests
// (go.etcd.io/etcd/server/v3/embed): one member, a temporary data dir, and
// ports chosen at random on the address asked for (loopback by default), so
// `go test` needs no etcd installed and no network beyond the host it names.
//
// Only tests import it: the etcd server's dependency tree stays out of the
// dream binary, which links the client alone.
package etcdtest

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Server is a running embedded etcd.
type Server struct {
	// URL is the client URL, e.g. http://127.0.0.1:41234.
	URL  string
	etcd *embed.Etcd
}

// Start runs a server listening on host (e.g. "127.0.0.1") and stops it
// when the test ends. Heartbeat and election are shortened so that leases
// as short as a second are honoured: tests wait for lease expiry.
func Start(t testing.TB, host string) *Server {
	t.Helper()
	dir := t.TempDir()
	var lastErr error
	for range 5 { // a port picked free may be taken before etcd binds it
		s, err := StartIn(dir, host)
		if err == nil {
			t.Cleanup(s.Close)
			return s
		}
		lastErr = err
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o700)
	}
	t.Fatalf("starting embedded etcd: %v", lastErr)
	return nil
}

// StartIn runs a server with its data in dir, for helper processes that
// have no testing.T of their own to clean up with; the caller Closes it.
func StartIn(dir, host string) (*Server, error) {
	cport, err := freePort(host)
	if err != nil {
		return nil, err
	}
	pport, err := freePort(host)
	if err != nil {
		return nil, err
	}
	cu := url.URL{Scheme: "http", Host: net.JoinHostPort(host, strconv.Itoa(cport))}
	pu := url.URL{Scheme: "http", Host: net.JoinHostPort(host, strconv.Itoa(pport))}
	cfg := embed.NewConfig()
	cfg.Name = "dream-test"
	cfg.Dir = dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	// Even at error level the server reports its own shutdown as errors.
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.TickMs, cfg.ElectionMs = 50, 500
	cfg.UnsafeNoFsync = true // a test's data dir is thrown away
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd failed: %w", err)
	case <-time.After(30 * time.Second):
		e.Close()
		return nil, fmt.Errorf("embedded etcd not ready after 30s")
	}
	return &Server{URL: cu.String(), etcd: e}, nil
}

// Close stops the server.
func (s *Server) Close() { s.etcd.Close() }

func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
