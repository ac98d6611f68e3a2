package hookinstall

import (
	"strings"
	"testing"
)

// FuzzInstallRemove: whatever file Install accepts ends up with exactly the
// hook installed, a second Install changes nothing, and Remove takes it out
// leaving a file that still parses.
func FuzzInstallRemove(f *testing.F) {
	for _, tc := range settingsCases {
		f.Add(tc.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tg := claudeTarget("settings.json")
		out, _, err := Install(tg, []byte(src))
		if err != nil {
			return
		}
		if ok, err := Installed(tg, out); err != nil || !ok {
			t.Fatalf("not installed after Install: %v\n%q -> %q", err, src, out)
		}
		again, changed, err := Install(tg, out)
		if err != nil || changed || string(again) != string(out) {
			t.Fatalf("second install changed the file: %v %q", err, again)
		}
		cut, changed, err := Remove(tg, out)
		if err != nil || !changed {
			t.Fatalf("remove: %v %v", err, changed)
		}
		if len(cut) > 0 {
			if ok, err := Installed(tg, cut); err != nil || ok {
				t.Fatalf("still installed after Remove: %v\n%q", err, cut)
			}
		}
	})
}

// FuzzCodexTrust: whatever config.toml TrustCodex edits comes out with
// dream's hook trusted and every other setting as it was, a second trust
// changes nothing, and UntrustCodex gives back the original bytes (plus
// the final newline the append needed).
func FuzzCodexTrust(f *testing.F) {
	for _, s := range []string{"", "model = \"m\"\n", "[hooks.state.\"/a:stop:0:0\"]\ntrusted_hash = \"x\"\n", "[features]\nmemories = true", "hooks = {}\n", "# c\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n"} {
		f.Add(s)
	}
	h := CodexHook{Key: "/home/u/.codex/hooks.json:stop:0:0", Hash: "sha256:ab"}
	f.Fuzz(func(t *testing.T, src string) {
		out, changed, err := TrustCodex([]byte(src), h)
		if err != nil {
			return
		}
		if st, err := CodexTrustState(out, h); err != nil || st != CodexTrusted {
			t.Fatalf("not trusted after TrustCodex: %s %v\n%q -> %q", st, err, src, out)
		}
		if err := checkCodexTrust([]byte(src), out, h, CodexTrusted); err != nil {
			t.Fatalf("%v\n%q -> %q", err, src, out)
		}
		if again, ch, err := TrustCodex(out, h); err != nil || ch || string(again) != string(out) {
			t.Fatalf("second trust: %v %v", ch, err)
		}
		if !changed {
			return
		}
		back, ch, err := UntrustCodex(out, h)
		if err != nil || !ch || strings.TrimSuffix(string(back), "\n") != strings.TrimSuffix(src, "\n") {
			t.Fatalf("untrust: %v %v\n%q -> %q -> %q", ch, err, src, out, back)
		}
	})
}
