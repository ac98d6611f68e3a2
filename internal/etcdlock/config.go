package etcdlock

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/settings"
)

// Defaults for the timeouts of one request to etcd.
const (
	DefaultDialTimeout = 5 * time.Second
	DefaultOpTimeout   = 5 * time.Second
)

// ErrConfig marks a configuration etcd cannot be reached with (no
// endpoints, a bad URL, unreadable certificates): a usage problem, not an
// outage.
var ErrConfig = errors.New("etcd lock configuration")

// Config is how to reach etcd and where this memory's keys live.
type Config struct {
	// Endpoints are client URLs: http://host:port, https://host:port, or a
	// bare host:port.
	Endpoints []string
	// TLS, when non-nil, secures the connection.
	TLS *tls.Config
	// Username and Password authenticate when etcd has auth enabled.
	Username, Password string
	// Prefix is this memory's key prefix; it ends with "/".
	Prefix string
	// TTL is the lease's time to live, rounded up to whole seconds.
	TTL time.Duration
	// DialTimeout and OpTimeout bound connecting and each request; zero
	// means the defaults.
	DialTimeout, OpTimeout time.Duration
	// Host and PID name this holder; empty Host means os.Hostname.
	Host string
	PID  int
}

// DefaultPrefix is the key prefix used when lock_prefix is not set. It must
// name the logical memory, not this machine's path to it, because every
// machine sharing the memory must land on the same keys, and it must differ
// between memories, or every project would share one lock and one last
// consolidation time. identity is the memory's machine-independent name (its
// sync branch); the sync remote's URL, when set, is part of it (as written:
// spell it the same everywhere, or set lock_prefix).
func DefaultPrefix(syncRemote, identity string) string {
	id := "memory:" + identity
	if syncRemote != "" {
		id = "remote:" + strings.TrimSuffix(strings.TrimSpace(syncRemote), "/") + "#" + identity
	}
	sum := sha256.Sum256([]byte(id))
	return "/dream/" + hex.EncodeToString(sum[:8]) + "/"
}

// FromSettings builds a Config from the layered settings. identity (the
// memory's machine-independent name) feeds DefaultPrefix.
func FromSettings(d settings.Distributed, identity string) (Config, error) {
	c := Config{
		Username: d.EtcdUsername,
		Password: d.EtcdPassword,
		Prefix:   d.LockPrefix,
		TTL:      d.LockTTL,
	}
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix(d.SyncRemote, identity)
	}
	if !strings.HasSuffix(c.Prefix, "/") {
		c.Prefix += "/"
	}
	if len(d.EtcdEndpoints) == 0 {
		return c, fmt.Errorf("%w: lock = etcd needs etcd_endpoints", ErrConfig)
	}
	secure := d.EtcdCACert != "" || d.EtcdCert != "" || d.EtcdKey != ""
	for _, e := range d.EtcdEndpoints {
		e = strings.TrimSpace(e)
		if err := checkEndpoint(e); err != nil {
			return c, err
		}
		if strings.HasPrefix(e, "https://") {
			secure = true
		}
		c.Endpoints = append(c.Endpoints, e)
	}
	if secure {
		t, err := tlsConfig(d.EtcdCACert, d.EtcdCert, d.EtcdKey)
		if err != nil {
			return c, err
		}
		c.TLS = t
	}
	if (c.Username == "") != (c.Password == "") {
		return c, fmt.Errorf("%w: etcd_username and etcd_password go together", ErrConfig)
	}
	return c, nil
}

// checkEndpoint refuses what is not a client URL, so that a typo is reported
// here rather than as a dial timeout.
func checkEndpoint(e string) error {
	if e == "" {
		return fmt.Errorf("%w: empty etcd endpoint", ErrConfig)
	}
	if !strings.Contains(e, "://") {
		e = "http://" + e
	}
	u, err := url.Parse(e)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || (u.Path != "" && u.Path != "/") {
		return fmt.Errorf("%w: etcd endpoint %q is not http(s)://host:port", ErrConfig, e)
	}
	return nil
}

// tlsConfig loads the CA pool and the client key pair. With no CA the
// system roots verify the server.
func tlsConfig(caFile, certFile, keyFile string) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("%w: reading etcd_ca_cert: %v", ErrConfig, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: etcd_ca_cert %s holds no PEM certificate", ErrConfig, caFile)
		}
		t.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, fmt.Errorf("%w: etcd_cert and etcd_key go together", ErrConfig)
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: loading etcd_cert/etcd_key: %v", ErrConfig, err)
		}
		t.Certificates = []tls.Certificate{pair}
	}
	return t, nil
}

// Open is dream.Config.OpenLock for lock = etcd: the etcd lock the
// settings describe, named by the memory's sync branch, wrapping file.
func Open(cfg dream.Config, file dream.Lock) (dream.Lock, error) {
	if cfg.Settings.Lock != settings.LockEtcd {
		return nil, fmt.Errorf("unknown lock backend %q (want file or etcd)", cfg.Settings.Lock)
	}
	ec, err := FromSettings(cfg.Settings.Distributed, cfg.Settings.SyncBranch)
	if err != nil {
		return nil, err
	}
	return New(ec, file)
}
