package offline

import (
	"context"
	"strings"
	"testing"
)

func TestFindLeads(t *testing.T) {
	mem, repo := t.TempDir(), t.TempDir()
	writeFiles(t, mem, map[string]string{
		"MEMORY.md": "- [Arch](arch.md) — layout\n- [Ops](ops.md) — operations\n",
		"arch.md": "---\nname: Arch\ndescription: layout\n---\n" +
			"- Config is parsed by `LoadConfig` in `internal/config/loader.go`.\n" +
			"- The HTTP server lives in server.go and calls `handleRequest()`.\n" +
			"- Run `make` or `go test`; Postgres is the `Redis` alternative.\n" +
			"- See [ops](ops.md) and https://example.com/x/y.go for more.\n" +
			"- The deploy script restarts every worker in the staging pool first.\n",
		"ops.md": "---\nname: Ops\ndescription: operations\n---\n" +
			"- The deploy script restarts every worker in the staging pool at once.\n" +
			"- `DATABASE_URL` must be set; `cmd/api/` is the entry point.\n",
	})
	writeFiles(t, repo, map[string]string{
		"internal/config/config.go": "package config\n\nfunc ParseConfig() {}\n",
		"cmd/api/main.go":           "package main\n\nfunc handleRequest() {}\n",
		"node_modules/x/loader.go":  "package x\nfunc LoadConfig() {}\n",
		".env.example":              "DATABASE_URL=postgres://\n",
	})
	l, err := FindLeads(context.Background(), mem, repo)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range l.DriftSuspects {
		got[s.Mention] = s.Kind
	}
	want := map[string]string{"LoadConfig": "identifier", "internal/config/loader.go": "path", "server.go": "file"}
	if len(got) != len(want) {
		t.Errorf("suspects = %+v", l.DriftSuspects)
	}
	for m, k := range want {
		if got[m] != k {
			t.Errorf("suspect %q kind %q, want %q (all: %+v)", m, got[m], k, l.DriftSuspects)
		}
	}
	if len(l.NearDuplicates) != 1 || l.NearDuplicates[0].A.File != "arch.md" || l.NearDuplicates[0].B.File != "ops.md" {
		t.Fatalf("near duplicates = %+v", l.NearDuplicates)
	}
	if s := l.NearDuplicates[0].Similarity; s < nearThreshold || s >= 1 {
		t.Errorf("similarity = %v", s)
	}

	md := l.Markdown(10000)
	for _, w := range []string{"arch.md:5 names identifier `LoadConfig`", "Near-duplicates", "arch.md:9 and ops.md:5"} {
		if !strings.Contains(md, w) {
			t.Errorf("markdown lacks %q:\n%s", w, md)
		}
	}
	short := l.Markdown(200)
	if len(short) > 200 || !strings.Contains(short, "omitted") {
		t.Errorf("capped markdown (%d bytes):\n%s", len(short), short)
	}
	if (Leads{}).Markdown(100) != "" {
		t.Error("empty leads should render empty")
	}

	noRepo, err := FindLeads(context.Background(), mem, "")
	if err != nil || len(noRepo.DriftSuspects) != 0 {
		t.Errorf("no repo: %+v, %v", noRepo, err)
	}
	if _, err := FindLeads(context.Background(), mem, mem+"/missing"); err == nil {
		t.Error("missing repo: want error")
	}
}

func TestRepoLimitsTruncate(t *testing.T) {
	repo := t.TempDir()
	writeFiles(t, repo, map[string]string{"a.go": "package a\nfunc A() {}\n", "b.go": "package b\nfunc B() {}\n", "c.go": "package c\n"})
	ix, err := indexRepo(context.Background(), repo, repoLimits{maxFiles: 2, maxFileBytes: 1 << 10, maxWordBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if !ix.truncated || missing(ix, Suspect{Mention: "zzz.go", Kind: "file"}) {
		t.Errorf("a truncated index must not report absence: %+v", ix)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		in, mention, kind string
	}{
		{"internal/foo.go:42", "internal/foo.go", "path"},
		{"./cmd/api/", "cmd/api", "path"},
		{"config.yaml", "config.yaml", "file"},
		{"config.Load", "config.Load", "identifier"},
		{"parse_args", "parse_args", "identifier"},
		{"Run()", "Run()", "identifier"},
		{"Redis", "", ""},
		{"make test", "", ""},
		{"/etc/hosts", "", ""},
		{"github.com/x/y@v1.2.0", "", ""},
		{"--verbose", "", ""},
		{"../up.go", "", ""},
	}
	for _, tt := range tests {
		s, ok := classify(tt.in)
		if s.Mention != tt.mention || s.Kind != tt.kind || ok != (tt.kind != "") {
			t.Errorf("classify(%q) = %+v, %v", tt.in, s, ok)
		}
	}
}
