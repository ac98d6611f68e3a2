package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/llm/llmtest"
)

// TestCredentialsUnreadableThroughRepoRoot is issue 9's other road to the
// keys: no hostile file at all, just a session started in the home
// directory, so the repository root the model reads is $HOME. The scripted
// model reads, globs, greps and lists its way towards ~/.ssh and ~/.aws;
// nothing of them (content or names) may reach the provider's requests,
// each direct read is a tool error, and the dream still completes.
func TestCredentialsUnreadableThroughRepoRoot(t *testing.T) {
	t.Parallel()
	aw := newAttackWorld(t)
	os.Remove(filepath.Join(aw.repo, ".dream.toml"))
	const awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzEXAMPLEKEY"
	aw.write(filepath.Join(aw.home, ".aws"), "credentials", "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = "+awsSecret+"\n")
	aw.write(aw.home, "todo.md", "# Todo\n\n1. Rotate the PRIVATE KEY notes into the wiki\n")
	key := filepath.Join(aw.ssh, "id_ed25519")
	attempts := []llmtest.Call{
		{Name: "read", Input: map[string]any{"file_path": key}},
		{Name: "read", Input: map[string]any{"file_path": ".ssh/id_ed25519"}},
		{Name: "read", Input: map[string]any{"file_path": filepath.Join(aw.home, ".aws", "credentials")}},
		{Name: "ls", Input: map[string]any{"path": aw.ssh}},
		{Name: "grep", Input: map[string]any{"pattern": "PRIVATE KEY|aws_secret", "path": aw.home, "output_mode": "content"}},
		{Name: "grep", Input: map[string]any{"pattern": "ssh-ed25519", "output_mode": "files_with_matches"}},
		{Name: "glob", Input: map[string]any{"pattern": "**/*"}},
		{Name: "ls", Input: map[string]any{"path": aw.home}},
	}
	var script []llmtest.Turn
	for _, c := range attempts {
		script = append(script, llmtest.Turn{Calls: []llmtest.Call{c}})
	}
	user := llmtest.NewServer(append(script, llmtest.Turn{Text: "Done."})...)
	defer user.Close()

	r := aw.dream(aw.userEnv(user.URL), "run", "--json", "--max-turns", "30", "--repo", aw.home)
	if r.code != 0 {
		t.Fatalf("the dream must complete, every attempt refused or filtered:\n%s", r)
	}
	reqs := user.Requests()
	if len(reqs) < len(attempts)+1 {
		t.Fatalf("the model got %d request(s), want %d: the script did not run", len(reqs), len(attempts)+1)
	}
	refused := 0
	var results string
	for _, req := range reqs {
		body := string(req.Body)
		for _, secret := range []string{"b3BlbnNzaC1rZXktdjEA", awsSecret, "AKIAIOSFODNN7EXAMPLE", "AAAAC3NzaC1lZDI1NTE5AAAAIGVub3VnaC"} {
			if strings.Contains(body, secret) {
				t.Errorf("a request carried %q from a credential file", secret)
			}
		}
		refused += countToolErrors(t, req.Protocol, req.Body)
		results = toolResultText(t, req.Body)
	}
	// Apart from the refusals of what the model itself named, no result
	// names anything in ~/.ssh or ~/.aws: a mention would come from a
	// listing.
	var listings []string
	for _, line := range strings.Split(results, "\n") {
		if !strings.Contains(line, " failed: ") {
			listings = append(listings, line)
		}
	}
	for _, name := range []string{"authorized_keys", "id_ed25519", ".ssh", ".aws", "credentials\\n"} {
		if l := strings.Join(listings, "\n"); strings.Contains(l, name) {
			t.Errorf("a listing named %q:\n%s", name, l)
		}
	}
	if !strings.Contains(results, "refused: credentials location") {
		t.Errorf("no tool said why it refused:\n%s", results)
	}
	if !strings.Contains(results, "credential location(s) skipped") {
		t.Errorf("no listing said it skipped credential locations:\n%s", results)
	}
	if !strings.Contains(results, "todo.md") {
		t.Errorf("the rest of the home directory was not searchable:\n%s", results)
	}
	if refused < 4 {
		t.Errorf("%d attempt(s) came back as tool errors, want the 3 reads and the ls of ~/.ssh", refused)
	}
}

// TestHistoryAndCompactNeverWriteCredentialDirs: `dream history append` and
// `dream compact` write outside a dream, so they make the credential-dir
// check a dream makes: pointed at ~/.ssh (or at $HOME, which holds it) they
// refuse and ~/.ssh is left as it was.
func TestHistoryAndCompactNeverWriteCredentialDirs(t *testing.T) {
	t.Parallel()
	aw := newAttackWorld(t)
	os.Remove(filepath.Join(aw.repo, ".dream.toml"))
	sessions := filepath.Join(aw.root, "nanobot-sessions")
	writeSession(t, sessions, "telegram:8812", time.Now().Add(-time.Hour), 4)
	srv := llmtest.NewServer(llmtest.Turn{Text: "- [permanent] 灯 19:00 开启"})
	defer srv.Close()
	before := treeHash(t, aw.ssh, nil)
	for _, dir := range []string{aw.ssh, filepath.Join(aw.ssh, "memory"), aw.home} {
		os.MkdirAll(filepath.Join(aw.ssh, "memory"), 0o700)
		for _, args := range [][]string{
			{"history", "append", "--memory-dir", dir, "--", "- [durable] 用户喜欢简短回答"},
			{"compact", "telegram:8812", "--force", "--memory-dir", dir, "--sessions-dir", sessions},
		} {
			r := aw.dream(modelEnv("openai", srv.URL, false), args...)
			if r.code == 0 || !strings.Contains(r.stderr, "holds credentials") {
				t.Errorf("dream %v: want a refusal naming the credentials:\n%s", args, r)
			}
		}
		os.RemoveAll(filepath.Join(aw.ssh, "memory"))
	}
	if after := treeHash(t, aw.ssh, nil); after != before {
		t.Errorf("~/.ssh changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if len(srv.Requests()) != 0 {
		t.Error("a refused compaction called the model")
	}
	// The same commands on a plain directory still work.
	if r := aw.dream(nil, "history", "append", "--memory-dir", aw.mem, "--", "- [durable] fine"); r.code != 0 {
		t.Errorf("history append on a plain memory dir:\n%s", r)
	}
}
