package settings

import (
	"errors"
	"strings"
	"time"
)

// Lock backends accepted by the lock key.
const (
	LockFile = "file"
	LockEtcd = "etcd"
)

// DefaultLockTTL is the etcd lease's time to live: how long a crashed or
// cut-off holder keeps the lock before another machine may take it over.
// The lease is renewed while the holder runs, so a long dream never loses it
// by itself; the TTL only bounds how long a dead one blocks the others.
const DefaultLockTTL = 60 * time.Second

// Distributed are the settings for sharing one memory between machines: the
// lock backend and the git remote the memory's history travels through.
type Distributed struct {
	// Lock is the lock backend: LockFile (the default) or LockEtcd.
	Lock string
	// EtcdEndpoints are the etcd client URLs (http://host:2379 or https://).
	EtcdEndpoints []string
	// EtcdCACert, EtcdCert and EtcdKey are PEM files for TLS: the CA that
	// signs the servers, and this client's certificate and key (both or
	// neither).
	EtcdCACert, EtcdCert, EtcdKey string
	// EtcdUsername and EtcdPassword authenticate to an etcd with auth on.
	EtcdUsername, EtcdPassword string
	// LockPrefix is the etcd key prefix of this memory's lock and last
	// consolidation time; empty derives one from the memory's identity (and
	// SyncRemote), the same on every machine sharing the memory.
	LockPrefix string
	// LockTTL is the etcd lease's time to live.
	LockTTL time.Duration
	// SyncRemote is a git URL (bare repo path, ssh, https) the memory's
	// audit history is pulled from before each dream and pushed to after.
	SyncRemote string
	// SyncBranch names this memory's branch on SyncRemote and, with
	// LockPrefix empty, its etcd keys; empty derives it from the memory's
	// identity (a hash of its path relative to the home dir, so that one memory has one name on every machine). Set it when two machines reach one
	// memory through paths that differ relative to their home dirs.
	SyncBranch string
}

// DefaultDistributed is the single-machine setup: the file lock, no remote.
func DefaultDistributed() Distributed {
	return Distributed{Lock: LockFile, LockTTL: DefaultLockTTL}
}

var errLockBackend = errors.New(`must be "file" or "etcd"`)

// lockBackendKey is the lock key: one of the known backends, nothing else,
// so that a typo cannot silently fall back to a lock other machines ignore.
func lockBackendKey() spec {
	parse := func(t string) (string, error) {
		switch v := strings.ToLower(strings.TrimSpace(t)); v {
		case LockFile, LockEtcd:
			return v, nil
		}
		return "", errLockBackend
	}
	return scalarKey("lock", LockFile, "consolidation lock backend: file (.consolidate-lock) or etcd (several machines)",
		errLockBackend, parse, func(s string) string { return s }, func(s *Settings) *string { return &s.Lock })
}

var errCodexOwner = errors.New(`must be "codex", "dream" or empty`)

// codexOwnerKey is codex_memory_owner: who consolidates Codex's memories/
// when Codex's memories feature would too. A typo must not hand the memory
// to both, so only the two names (or nothing) are accepted.
func codexOwnerKey() spec {
	parse := func(t string) (string, error) {
		switch v := strings.ToLower(strings.TrimSpace(t)); v {
		case "", CodexOwner, DreamOwner:
			return v, nil
		}
		return "", errCodexOwner
	}
	return scalarKey("codex_memory_owner", "", "who consolidates Codex's memories/ while Codex's memories feature is on: codex (dream leaves it alone) or dream; empty: dream leaves it alone and says so",
		errCodexOwner, parse, func(s string) string { return s }, func(s *Settings) *string { return &s.CodexMemoryOwner })
}

// secretKey is a free-text key whose value `dream config` never prints.
func secretKey(name, help string, field func(*Settings) *string) spec {
	s := stringKey(name, "", help, false, field)
	s.format = func(st *Settings) string {
		if *field(st) != "" {
			return "(set, hidden)"
		}
		return ""
	}
	return s
}
