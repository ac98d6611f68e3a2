package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkGrepCredentialGuard measures what refusing credential locations
// costs a grep over a 1,000-file tree: "guarded" has keys in ~/.ssh and
// ~/.aws for the guard to compare against, "baseline" a home without any
// (the guard has nothing to check). Compare the two ns/op.
func BenchmarkGrepCredentialGuard(b *testing.B) {
	for _, guarded := range []bool{false, true} {
		name := "baseline"
		if guarded {
			name = "guarded"
		}
		b.Run(name, func(b *testing.B) {
			home := b.TempDir()
			b.Setenv("HOME", home)
			if guarded {
				writeFile(b, filepath.Join(home, ".ssh", "id_ed25519"), fakeKey)
				writeFile(b, filepath.Join(home, ".aws", "credentials"), fakeAWS)
			}
			repo := b.TempDir()
			for i := range 1000 {
				writeFile(b, filepath.Join(repo, fmt.Sprintf("pkg%d", i%10), fmt.Sprintf("sub%d", i%7), fmt.Sprintf("f%d.go", i)), "package x\n\n// TODO: tidy\nfunc f() {}\n")
			}
			mem := b.TempDir()
			set, err := NewSet(Env{MemoryDir: mem, RepoDir: repo})
			if err != nil {
				b.Fatal(err)
			}
			defer set.Close()
			var grep Tool
			for _, tl := range set.Tools() {
				if tl.Name() == "grep" {
					grep = tl
				}
			}
			in, _ := json.Marshal(map[string]any{"pattern": "TODO", "output_mode": "count"})
			b.ResetTimer()
			for b.Loop() {
				if _, err := grep.Execute(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
