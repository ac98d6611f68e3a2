package hookinstall

import "testing"

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
