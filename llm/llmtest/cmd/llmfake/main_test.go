package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRunServesScript(t *testing.T) {
	script := filepath.Join(t.TempDir(), "turns.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"text":"hello from the script"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-script", script}, strings.NewReader(""), pw, &stderr)
		pw.Close()
	}()
	url, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("read URL: %v", err)
	}
	url = strings.TrimSpace(url)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("URL %q is not on loopback", url)
	}
	res, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), "hello from the script") {
		t.Errorf("answer %s", body)
	}
	go io.Copy(io.Discard, pr)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if !strings.Contains(stderr.String(), "served 1 requests, 0 script turns left") {
		t.Errorf("stderr %q", stderr.String())
	}
}

func TestRunErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"status":200}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		stdin     string
		wantUsage bool
		want      string
	}{
		{"no script", nil, "", true, "want -script"},
		{"unknown flag", []string{"-x"}, "", true, "not defined"},
		{"missing file", []string{"-script", filepath.Join(t.TempDir(), "none.json")}, "", false, "read script"},
		{"invalid script", []string{"-script", bad}, "", false, "not an HTTP error status"},
		{"invalid stdin", []string{"-script", "-"}, "{", false, "parse script"},
		{"bad addr", []string{"-script", "-", "-addr", "nonsense"}, "[]", false, "listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), tt.args, strings.NewReader(tt.stdin), io.Discard, io.Discard)
			var ue usageError
			if err == nil || errors.As(err, &ue) != tt.wantUsage || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run = %v, want usage=%v containing %q", err, tt.wantUsage, tt.want)
			}
		})
	}
}
