package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPOverStdioSubprocess drives a real `dream mcp` process with the
// SDK's client over its stdin and stdout.
func TestMCPOverStdioSubprocess(t *testing.T) {
	w := newWorld(t)
	notes := "---\nname: notes\ndescription: notes\ntype: user\n---\n\n# 笔记\n\n- The user prefers tabs over spaces in Go code.\n- 部署在周五进行。\n- The user prefers tabs over spaces in Go code.\n"
	w.write(w.mem, "notes.md", notes)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(binPath, append([]string{"mcp"}, w.locFlags()...)...)
	cmd.Env = append(append([]string{}, w.env...), "DREAM_PROVIDER=offline")
	cmd.Dir = w.repo
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != "dream" {
		t.Errorf("server name %q", got)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 10 {
		t.Errorf("%d tools, want 10", len(tools.Tools))
	}
	callTool := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("%s: tool error %v", name, res.Content)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var m map[string]any
		json.Unmarshal(b, &m)
		return m
	}
	st := callTool("dream_status", nil)
	if st["memory_dir"] != w.mem {
		t.Errorf("status memory_dir %v", st["memory_dir"])
	}
	run := callTool("dream_run", nil)
	id, _ := run["task_id"].(string)
	if run["staged"] != true || id == "" {
		t.Fatalf("dream_run: %v", run)
	}
	diff := callTool("dream_diff", map[string]any{"id": id})
	if d, _ := diff["diff"].(string); !strings.Contains(d, "-- The user prefers tabs") {
		t.Errorf("dream_diff: %v", diff)
	}
	callTool("dream_apply", map[string]any{"id": id})
	b, _ := os.ReadFile(filepath.Join(w.mem, "notes.md"))
	if strings.Count(string(b), "The user prefers tabs") != 1 || !strings.Contains(string(b), "部署在周五进行。") {
		t.Errorf("after dream_apply:\n%s", b)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file://" + filepath.ToSlash(filepath.Join(w.mem, "notes.md"))})
	if err != nil || rr.Contents[0].Text != string(b) {
		t.Errorf("resource notes.md: %v %+v", err, rr)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "dream_show", Arguments: map[string]any{"id": "no-such-dream"}})
	if err != nil || !res.IsError {
		t.Errorf("dream_show of an unknown id: err %v, result %+v", err, res)
	}
}
