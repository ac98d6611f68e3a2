package trust

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrCredentialDir is matched (errors.Is) by a *CredentialDirError.
var ErrCredentialDir = errors.New("directory holds credentials")

// CredentialDirError says which directory dream was asked to write into and
// which credential store it would have exposed.
type CredentialDirError struct {
	// Role names the directory ("memory dir", "state dir").
	Role string
	// Dir is the directory as given.
	Dir string
	// Credential is the credential path it is, is inside of, or contains.
	Credential string
	// Relation is "is", "is inside" or "contains".
	Relation string
}

func (e *CredentialDirError) Error() string {
	what := e.Dir
	if e.Relation != "is" {
		what = fmt.Sprintf("%s %s %s", e.Dir, e.Relation, e.Credential)
	}
	return fmt.Sprintf("refusing %s %s: %s, which holds credentials; dream never writes where keys and tokens live (pick a directory of its own)", e.Role, e.Dir, what)
}

// Is makes errors.Is(err, ErrCredentialDir) true.
func (e *CredentialDirError) Is(target error) bool { return target == ErrCredentialDir }

// credentialPaths lists, relative to the home directory, the places that
// hold keys and tokens. Directories and single files alike: a memory dir
// that contains one of them (the home directory itself, ~/.claude) would put
// it within the reach of the model's write tool.
//
// The agents' own auth files, from their public sources: Claude Code keeps
// its OAuth credentials in ~/.claude/.credentials.json (CLAUDE_CONFIG_DIR
// moves ~/.claude); Codex CLI in $CODEX_HOME/auth.json, CODEX_HOME
// defaulting to ~/.codex (openai/codex, codex-rs core auth); Gemini CLI in
// ~/.gemini/oauth_creds.json (google-gemini/gemini-cli). Their memory
// directories (~/.claude/projects/*/memory, ~/.codex/memories,
// ~/.gemini/tmp/*/memory) neither are nor contain these files, so every
// host layout stays allowed.
var credentialPaths = []string{
	".ssh",
	".aws",
	".gnupg",
	".config/gh",
	".config/gcloud",
	".azure",
	".kube",
	".docker/config.json",
	".netrc",
	".git-credentials",
	".npmrc",
	".pypirc",
	".password-store",
	".claude/.credentials.json",
	".codex/auth.json",
	".gemini/oauth_creds.json",
}

// credentialEnv lists the variables that move a credential store away from
// home, with the file inside it ("" for the whole directory).
var credentialEnv = []struct{ variable, inside string }{
	{"GNUPGHOME", ""},
	{"GH_CONFIG_DIR", ""},
	{"CLAUDE_CONFIG_DIR", ".credentials.json"},
	{"CODEX_HOME", "auth.json"},
	{"AWS_SHARED_CREDENTIALS_FILE", ""},
	{"AWS_CONFIG_FILE", ""},
	{"KUBECONFIG", ""},
	{"DOCKER_CONFIG", "config.json"},
}

// CredentialPaths returns the credential locations for this user: the
// well-known ones under home and those the environment moves elsewhere.
func CredentialPaths(env func(string) (string, bool), home string) []string {
	var out []string
	if home != "" {
		for _, p := range credentialPaths {
			out = append(out, filepath.Join(home, filepath.FromSlash(p)))
		}
	}
	if env != nil {
		for _, c := range credentialEnv {
			v, ok := env(c.variable)
			if !ok || v == "" || !filepath.IsAbs(v) {
				continue
			}
			// KUBECONFIG may be a list.
			for _, p := range filepath.SplitList(v) {
				if filepath.IsAbs(p) {
					out = append(out, filepath.Join(p, c.inside))
				}
			}
		}
	}
	return out
}

// CheckWritableDir refuses dir as a directory dream writes into (role names
// it in the error) when it is a credential location, lies inside one, or
// contains one (the home directory, /, ~/.config). Both the path as given and its symlink-resolved form are
// compared, against both forms of each credential path, so that neither a
// symlink to ~/.ssh nor a symlinked home slips through. The error is a
// *CredentialDirError.
func CheckWritableDir(role, dir string, env func(string) (string, bool), home string) error {
	if dir == "" {
		return nil
	}
	forms := pathForms(dir)
	for _, c := range CredentialPaths(env, home) {
		for _, cf := range pathForms(c) {
			for _, df := range forms {
				rel := relation(df, cf)
				if rel == "" {
					continue
				}
				return &CredentialDirError{Role: role, Dir: dir, Credential: c, Relation: rel}
			}
		}
	}
	return nil
}

// pathForms is p cleaned and absolute, plus its symlink-resolved form when
// that exists and differs.
func pathForms(p string) []string {
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = filepath.Clean(p)
	}
	out := []string{abs}
	if r, err := filepath.EvalSymlinks(abs); err == nil && r != abs {
		out = append(out, r)
	}
	return out
}

// relation says how dir stands to cred: "is", "is inside", "contains", or
// "" for unrelated.
func relation(dir, cred string) string {
	switch {
	case dir == cred:
		return "is"
	case within(dir, cred):
		return "is inside"
	case within(cred, dir):
		return "contains"
	}
	return ""
}

// within reports whether p lies strictly below dir.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
