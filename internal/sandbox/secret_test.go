package sandbox

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// Credentials are assembled at run time so that no scanner mistakes this
// file for a leak.
func fake(prefix string, n int) string {
	const alphabet = "aB3dE5gH7jK9mN2pQ4sT6vW8yZ"
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; i < n; i++ {
		b.WriteByte(alphabet[(i*7+3)%len(alphabet)])
	}
	return b.String()
}

func TestCheckSecret(t *testing.T) {
	tests := []struct {
		name     string
		content  string
		wantKind string // empty: no secret expected
		wantLine int
	}{
		{"aws", "deploy uses " + "AKIA" + "IOSFODNN7EXAMPL2" + " for s3", "AWS access key id", 1},
		{"aws session", "x\n" + "ASIA" + "ABCDEFGHIJKLMNO5", "AWS access key id", 2},
		{"github classic", "token " + fake("ghp_", 36), "GitHub token", 1},
		{"github oauth", fake("gho_", 36), "GitHub token", 1},
		{"github fine-grained", fake("github_pat_", 60), "GitHub token", 1},
		{"gitlab", "a\nb\n" + fake("glpat-", 20), "GitLab token", 3},
		{"slack", fake("xoxb-", 30), "Slack token", 1},
		{"pem", "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIE...", "PEM private key", 1},
		{"pem openssh", "-----BEGIN OPENSSH " + "PRIVATE KEY-----", "PEM private key", 1},
		{"anthropic", fake("sk-ant-api03-", 40), "Anthropic API key", 1},
		{"openai", fake("sk-proj-", 40), "OpenAI API key", 1},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "JSON Web Token", 1},
		{"env assignment", "API_KEY=" + fake("", 24), "value of API_KEY", 1},
		{"yaml secret key", "config:\n  SECRET_KEY: " + fake("", 20), "value of SECRET_KEY", 2},
		{"quoted token", `token: "` + fake("", 32) + `"`, "value of token", 1},
		{"json", `{"api_key": "` + fake("", 32) + `"}`, "value of api_key", 1},
		{"password", "db password = Tr0ub4dor&3x", "value of password", 1},

		{"placeholder angle", "API_KEY=<your-token>", "", 0},
		{"placeholder xxx", "token: xxxxxxxxxxxxxxxx", "", 0},
		{"placeholder env", "TOKEN=${GITHUB_TOKEN}", "", 0},
		{"placeholder dollar", "GITHUB_TOKEN=$GH_TOKEN_VALUE1", "", 0},
		{"changeme", "password = changeme123", "", 0},
		{"reference", "SECRET_KEY: settings.SECRET_KEY", "", 0},
		{"env call", "api_key = os.getenv(\"KEY\")", "", 0},
		{"prose", "The API token: rotate it every 90 days via the console.", "", 0},
		{"short", "password = hunter2", "", 0},
		{"numbers", "max_tokens: 4096\ntoken: 12345678901234", "", 0},
		{"sk prose", "the risk-management-strategy-document is in docs", "", 0},
		{"sk word", "use sk-learn-preprocessing-pipelines for this", "", 0},
		{"ghp short", "ghp_abc is the prefix GitHub uses", "", 0},
		{"plain memory", "---\nname: build\n---\nRun `make test` before pushing. Token budget is 200 lines.", "", 0},
		{"pem public", "-----BEGIN PUBLIC KEY-----", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSecret(tt.content)
			if tt.wantKind == "" {
				if err != nil {
					t.Fatalf("CheckSecret: unexpected %v", err)
				}
				return
			}
			if !errors.Is(err, ErrSecret) {
				t.Fatalf("CheckSecret error = %v, want ErrSecret", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.wantKind) || !strings.Contains(msg, "line "+strconv.Itoa(tt.wantLine)) {
				t.Errorf("error %q should name %q and line %d", msg, tt.wantKind, tt.wantLine)
			}
			for _, f := range findSecrets(tt.content) {
				if strings.Contains(msg, f.value) {
					t.Errorf("error echoes the secret: %q", msg)
				}
			}
		})
	}
}

func TestCheckSecretAdded(t *testing.T) {
	key := fake("ghp_", 36)
	other := fake("glpat-", 24)
	tests := []struct {
		name          string
		before, after string
		wantErr       bool
	}{
		{"pre-existing kept", "old " + key, "new text\nold " + key, false},
		{"pre-existing removed", "old " + key, "clean", false},
		{"new one added", "old " + key, "old " + key + "\n" + other, true},
		{"duplicated", "old " + key, key + " and again " + key, true},
		{"from nothing", "", key, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSecretAdded(tt.before, tt.after)
			if (err != nil) != tt.wantErr {
				t.Fatalf("CheckSecretAdded error = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}

// Common credential formats beyond the original list: each is refused.
func TestCheckSecretMoreFormats(t *testing.T) {
	for _, tt := range []struct{ name, content string }{
		{"google api key", "maps key " + fake("AIza", 35)},
		{"stripe live", "billing uses " + fake("sk_live_", 24)},
		{"stripe restricted", fake("rk_live_", 24)},
		{"hugging face", "HF " + fake("hf_", 34)},
		{"npm", "registry " + fake("npm_", 36)},
		{"slack app", fake("xapp-1-", 40)},
		{"url credentials", "DATABASE_URL is postgres://admin:" + fake("", 16) + "@db.internal:5432/app"},
		{"bearer", "curl -H 'Authorization: Bearer " + fake("", 32) + "'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := CheckSecret(tt.content); !errors.Is(err, ErrSecret) {
				t.Errorf("CheckSecret(%q) = %v, want ErrSecret", tt.content, err)
			}
		})
	}
	for _, ok := range []string{
		"connect with postgres://user:password@localhost/db",
		"see https://example.com:8080/path@v2",
		"the bearer of bad news",
		"Authorization: Bearer <token>",
		"use the stripe sk_live_ prefix for production keys",
	} {
		if err := CheckSecret(ok); err != nil {
			t.Errorf("CheckSecret(%q) = %v, want nil", ok, err)
		}
	}
}
