package etcdlock

import (
	"errors"
	"testing"

	"github.com/dreamkit/dream/settings"
)

func TestFromSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    settings.Distributed
		ok   bool
	}{
		{"plain", settings.Distributed{EtcdEndpoints: []string{"http://10.0.0.1:2379", "10.0.0.2:2379"}}, true},
		{"no endpoints", settings.Distributed{}, false},
		{"bad scheme", settings.Distributed{EtcdEndpoints: []string{"ftp://x:1"}}, false},
		{"path", settings.Distributed{EtcdEndpoints: []string{"http://x:1/v3"}}, false},
		{"user without password", settings.Distributed{EtcdEndpoints: []string{"x:1"}, EtcdUsername: "u"}, false},
		{"cert without key", settings.Distributed{EtcdEndpoints: []string{"https://x:1"}, EtcdCert: "c.pem"}, false},
		{"missing ca", settings.Distributed{EtcdEndpoints: []string{"https://x:1"}, EtcdCACert: "/nonexistent/ca.pem"}, false},
		{"https system roots", settings.Distributed{EtcdEndpoints: []string{"https://x:1"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := FromSettings(tc.d, "/home/u/mem")
			if tc.ok != (err == nil) {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrConfig) {
				t.Fatalf("err %v is not ErrConfig", err)
			}
			if err == nil && (c.Prefix == "" || c.Prefix[len(c.Prefix)-1] != '/') {
				t.Fatalf("prefix %q", c.Prefix)
			}
		})
	}
	a := DefaultPrefix("ssh://git@example.org/me/memory.git", "dream/3fa2c1d09e8b7a65")
	b := DefaultPrefix("ssh://git@example.org/me/memory.git/", "dream/3fa2c1d09e8b7a65")
	if a != b {
		t.Fatalf("two machines with the same remote and memory get different prefixes: %s %s", a, b)
	}
	if DefaultPrefix("ssh://git@example.org/me/memory.git", "dream/0000000000000001") == a {
		t.Fatal("two memories on one remote share a prefix")
	}
	if DefaultPrefix("", "dream/m1") == DefaultPrefix("", "dream/m2") {
		t.Fatal("two memory dirs share a prefix")
	}
}

func FuzzParseRecords(f *testing.F) {
	f.Add([]byte(`{"host":"h","pid":1,"task_id":"t","acquired_at":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"at":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"at":null}`))
	f.Add([]byte("\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := parseLast(b); err == nil && r.At.IsZero() {
			t.Fatal("parseLast accepted a record without a time")
		}
		if r, err := parseHolder(b); err == nil && r.PID < 0 {
			t.Fatal("parseHolder accepted a negative pid")
		}
	})
}
