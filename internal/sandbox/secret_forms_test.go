package sandbox

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// privateKeyDER generates real keys at run time, so that the PEM-body rule is
// tested against what openssl and ssh-keygen really write and no key sits in
// the repository.
func privateKeyDER(t *testing.T) map[string][]byte {
	t.Helper()
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	ec, err := x509.MarshalECPrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	ed, err := x509.MarshalPKCS8PrivateKey(edKey)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{
		"pkcs1 rsa":     x509.MarshalPKCS1PrivateKey(rsaKey),
		"pkcs8 rsa":     pkcs8,
		"sec1 ec":       ec,
		"pkcs8 ed25519": ed,
	}
}

// pemBody is the base64 body of a PEM block: 64-character lines, no header.
func pemBody(der []byte) string {
	block := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	lines := strings.Split(strings.TrimSpace(block), "\n")
	return strings.Join(lines[1:len(lines)-1], "\n") + "\n"
}

// TestCheckSecretIssue9Forms are the forms that landed in memory in issue 9
// (class 7): each must be refused now.
func TestCheckSecretIssue9Forms(t *testing.T) {
	awsID := "AKIA" + "IOSFODNN7EXAMPL2"
	anthropic := fake("sk-ant-api03-", 40)
	tests := []struct{ name, content string }{
		{"PASSWORD env", "local stack: PASSWORD=hunter2hunter2"},
		{"export DB_PASS", "before the migration run\n\n    export DB_PASS=" + fake("", 14) + "\n"},
		{"DB_PASS symbols", "DB_PASS=Tr0ub4dor&3"},
		{"camel dbPass", `config.dbPass = "` + fake("", 16) + `"`},
		{"credentials key", "aws_credentials: " + fake("", 24)},
		{"slack webhook", "alerts post to https://hooks.slack.com/services/T0123ABCD/B0456EFGH/" + fake("", 24)},
		{"discord webhook", "https://discord.com/api/webhooks/123456789012345678/" + fake("", 40)},
		{"postgres url", "DATABASE_URL=postgres://app:s3cr3tPW@db.internal:5432/app"},
		{"mysql url low entropy", "mysql://root:hunter22@localhost/shop"},
		{"redis url no user", "redis://:" + fake("", 12) + "@cache:6379/0"},
		{"ado connection string", "Server=db;User Id=app;Password=" + fake("", 12) + ";"},
		{"key split over two lines", "the deploy key is AKIAIOSFOD\nNN7EXAMPL2 (rotate monthly)"},
		{"anthropic key wrapped", "key: " + anthropic[:20] + "\n  " + anthropic[20:]},
		{"base64 aws", "blob " + base64.StdEncoding.EncodeToString([]byte("aws_access_key_id="+awsID))},
		{"base64 anthropic", "ANTHROPIC=" + base64.StdEncoding.EncodeToString([]byte(anthropic))},
		{"base64 pem", base64.StdEncoding.EncodeToString([]byte("-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3Blbn...\n"))},
		{"presigned url", "https://bucket.s3.amazonaws.com/k?X-Amz-Signature=" + fake("", 40)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSecret(tt.content)
			if !errors.Is(err, ErrSecret) {
				t.Fatalf("CheckSecret(%q) = %v, want ErrSecret", tt.content, err)
			}
			for _, f := range findSecrets(tt.content) {
				if len(f.value) >= 8 && strings.Contains(err.Error(), f.value) {
					t.Errorf("error echoes the secret: %q", err)
				}
			}
		})
	}
	for name, der := range privateKeyDER(t) {
		t.Run("pem body without header/"+name, func(t *testing.T) {
			body := pemBody(der)
			for _, content := range []string{
				body,
				"key for the staging box:\n\n```\n" + body + "```\n",
				// The first three lines only: a truncated paste.
				strings.Join(strings.SplitN(body, "\n", 4)[:3], "\n"),
				// One unbroken line.
				base64.StdEncoding.EncodeToString(der),
			} {
				err := CheckSecret(content)
				if !errors.Is(err, ErrSecret) || !strings.Contains(err.Error(), "private key") {
					t.Errorf("CheckSecret(%.60q...) = %v, want a private key refusal", content, err)
				}
			}
		})
	}
	// The line reported is where the secret starts.
	err := CheckSecret("intro\n\nsee AKIAIOSFOD\nNN7EXAMPL2\n")
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("split key: %v, want line 3", err)
	}
}

// TestCheckSecretIssue9NotSecrets pins what the wider rules must still let
// through: prose and placeholders around the same words.
func TestCheckSecretIssue9NotSecrets(t *testing.T) {
	certDER := func() []byte {
		// A public key is not a secret: SubjectPublicKeyInfo starts
		// SEQUENCE, SEQUENCE.
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}()
	for _, ok := range []string{
		"the bypass=true flag skips the cache",
		"compass: north",
		"PASSWORD=correcthorsebatterystaple is the xkcd example, do not use it",
		"export DB_PASS=$DB_PASS_FROM_VAULT",
		"DB_PASS=<from 1password>",
		"postgres://user:password@localhost/db",
		"postgres://user:pass@localhost/db",
		"https://hooks.slack.com/services/…",
		"webhooks live in https://api.slack.com/messaging/webhooks",
		"public key:\n" + pemBody(certDER),
		"max_tokens: 4096\npassword_min_length: 12",
		"构建命令是 `make build`，密码在 1Password 里。",
		"see docs/architecture.md and docs/runbooks/oncall-escalation-policy.md for details",
		"commit 3f2a9c1b7e4d5a6f8b9c0d1e2f3a4b5c6d7e8f90 fixed it",
	} {
		if err := CheckSecret(ok); err != nil {
			t.Errorf("CheckSecret(%q) = %v, want nil", ok, err)
		}
	}
}

// TestCheckSecretEnvLines: a .env line (NAME=value, the whole line) of a
// password, secret or token name holds the credential itself whatever it
// looks like, a passphrase of plain words included (issue 28,
// r2_secret_variants); the same words in prose, a placeholder, a reference
// or a flag value are not refused.
func TestCheckSecretEnvLines(t *testing.T) {
	for _, tt := range []struct {
		name, content string
		line          int
	}{
		{"passphrase", "# Staging env\n\nDB_HOST=staging.internal\nPASSWORD=correcthorsebatterystaple\n", 4},
		{"passwd", "PASSWD=tulipmountainriver", 1},
		{"export", "export DB_PASSWORD=bluewhalesong", 1},
		{"secret", "APP_SECRET=sunflowerlamp", 1},
		{"client secret", "OAUTH_CLIENT_SECRET=orangekettle", 1},
		{"token", "TOKEN=purplelighthouse", 1},
		{"list item", "- SMTP_PASSWORD=velvetharbor", 1},
		{"in code block", "```\nREDIS_PASSWORD=quietmeadow\n```\n", 2},
		{"comment after", "ADMIN_PASSWORD=silverlake # rotate in May", 1},
		{"quoted", `PASSWORD="gardenparty"`, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSecret(tt.content)
			if !errors.Is(err, ErrSecret) || !strings.Contains(err.Error(), fmt.Sprintf("line %d", tt.line)) {
				t.Fatalf("CheckSecret(%q) = %v, want ErrSecret on line %d", tt.content, err, tt.line)
			}
			for _, f := range findSecrets(tt.content) {
				if strings.Contains(err.Error(), f.value) {
					t.Errorf("error echoes the secret: %q", err)
				}
			}
		})
	}
	for _, ok := range []string{
		"Set PASSWORD= in .env before the first run.",
		"The PASSWORD=... line of .env holds the database password.",
		"the .env sets PASSWORD=hunterlake for local runs only", // prose around it: not a .env line
		"PASSWORD=changeme",
		"PASSWORD=password",
		"PASSWORD=<your password>",
		"PASSWORD=$DB_PASSWORD",
		"TOKEN=${GITHUB_TOKEN}",
		"PASSWORD=xxxxxxxx",
		"PASSWORD_REQUIRED=true",
		"AUTH_TOKEN=none",
		"ADMIN_PASSWORD=required",
		"PASSWORD_MIN_LENGTH=12",
		"MAX_TOKENS=4096",
		"SECRET_FILE=/run/secrets/db_password",
		"DB_SECRET=/run/secrets/db",
		"SORT_KEY=created_at",
		"SSH_KEY=~/.ssh/id_ed25519",
		"password=hunterlake", // lower case: a setting in code or prose, not an environment variable
		"Password: ask Ana, never write it down.",
		"Passwords rotate every 90 days; the token expires after an hour.",
	} {
		if err := CheckSecret(ok); err != nil {
			t.Errorf("CheckSecret(%q) = %v, want nil", ok, err)
		}
	}
}

// TestCheckSecretName: a file name is checked like content.
func TestCheckSecretName(t *testing.T) {
	for _, bad := range []string{
		"AKIA" + "IOSFODNN7EXAMPL2.md",
		"keys/" + fake("ghp_", 36) + ".md",
		fake("sk-ant-api03-", 40),
	} {
		if err := CheckSecretName(bad); !errors.Is(err, ErrSecret) {
			t.Errorf("CheckSecretName(%q) = %v, want ErrSecret", bad, err)
		}
	}
	for _, ok := range []string{"MEMORY.md", "feedback_testing.md", "aws-credentials-rotation.md", "项目/构建.md", "2026-11-29-retro.md"} {
		if err := CheckSecretName(ok); err != nil {
			t.Errorf("CheckSecretName(%q) = %v, want nil", ok, err)
		}
	}
}

// TestSecretRulesCompiledLazily: no regexp of this package may be compiled
// at package initialisation (process start cost, issue 15). The test reads
// the package's own source and fails on any package-level variable whose
// initialiser calls regexp outside a function literal (sync.OnceValue's
// argument is one).
func TestSecretRulesCompiledLazily(t *testing.T) {
	fset := token.NewFileSet()
	matches, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range matches {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			ast.Inspect(gd, func(n ast.Node) bool {
				if _, ok := n.(*ast.FuncLit); ok {
					return false // runs later, on first use
				}
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "regexp" {
						t.Errorf("%s: package-level regexp.%s runs at init; compile it in a sync.OnceValue", fset.Position(sel.Pos()), sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
	// And the lazily built rules still work when many goroutines race to
	// the first use.
	done := make(chan error, 8)
	for range 8 {
		go func() { done <- CheckSecret("x " + fake("ghp_", 36)) }()
	}
	for range 8 {
		if err := <-done; !errors.Is(err, ErrSecret) {
			t.Fatalf("concurrent first use: %v", err)
		}
	}
}
