package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dreamkit/dream/internal/fsutil"
)

// bigMemory writes a memory of n topic files shaped like a real one: an index
// of pointers, topics nested in project and dated folders with headings,
// numbered procedures, code, quotes and Chinese, names with spaces, a tab,
// a newline and CJK characters, executable scripts, symlinks to a file, to
// a directory and to nothing, an empty and a one-byte file, and one file
// past the threshold git streams whole.
func bigMemory(t *testing.T, dir string, n int) {
	t.Helper()
	var index strings.Builder
	index.WriteString("# Memory\n\n## Pointers\n\n")
	for i := range n {
		var p string
		switch i % 5 {
		case 0:
			p = fmt.Sprintf("projects/p%02d/notes/topic_%05d.md", i%23, i)
		case 1:
			p = fmt.Sprintf("日记/2026/第%d天.md", i)
		case 2:
			p = fmt.Sprintf("with space/note %d.md", i)
		case 3:
			p = fmt.Sprintf("flat_%05d.md", i)
		default:
			p = fmt.Sprintf("deep/a/b/c/d/%d.md", i)
		}
		body := fmt.Sprintf("# Topic %d\n\n## How to deploy\n\n1. Build with `make`.\n2. Ship it.\n\n```sh\nmake deploy ENV=%d\n```\n\n> Quoted: “never on Fridays”.\n\n- 用户偏好：简洁 %d\n- See [MEMORY](../MEMORY.md)\n", i, i, i)
		writeFile(t, dir, p, body, 0o644)
		if i%50 == 0 {
			fmt.Fprintf(&index, "- [Topic %d](%s)\n", i, p)
		}
	}
	writeFile(t, dir, "MEMORY.md", index.String(), 0o644)
	writeFile(t, dir, "tools/run.sh", "#!/bin/sh\necho run\n", 0o755)
	writeFile(t, dir, "tools/sync.py", "#!/usr/bin/env python3\nprint('sync')\n", 0o755)
	writeFile(t, dir, "odd\nname.md", "a newline in the name\n", 0o644)
	writeFile(t, dir, "tab\tname.md", "a tab in the name\n", 0o644)
	writeFile(t, dir, "empty.md", "", 0o644)
	writeFile(t, dir, "fixed/dir/a.md", "# A\n", 0o644)
	writeFile(t, dir, "fixed/dir/b.md", "# B\n", 0o644)
	writeFile(t, dir, "one.md", "x", 0o644)
	writeFile(t, dir, "logs/paste.log", strings.Repeat("2026-12-01 12:00:00 INFO a pasted log line\n", 9<<20/43), 0o644)
	for link, target := range map[string]string{"latest.md": "flat_00003.md", "current": "projects/p01", "gone.md": "nowhere.md"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(t *testing.T, dir, p, body string, mode os.FileMode) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(full, mode); err != nil {
		t.Fatal(err)
	}
}

// bigDream changes dir as a dream that rewrote most of it would, and
// returns the paths it touched, each once: appends to every file whose
// number is not a multiple of 7, deletes those that are multiples of 13 (11
// in round 2), adds new ones; in round 1 it also makes a note executable
// and a script not, points a symlink elsewhere, turns a file into a
// directory (listed before the file inside it) and a directory into a file
// (listed before the files it held).
func bigDream(t *testing.T, dir string, round int) []string {
	t.Helper()
	var touched []string
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || e.Type()&os.ModeSymlink != 0 {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "fixed/") || rel == "flat_00028.md" {
			return nil
		}
		var num int
		if _, err := fmt.Sscanf(filepath.Base(rel), "topic_%d.md", &num); err != nil {
			if _, err := fmt.Sscanf(filepath.Base(rel), "flat_%d.md", &num); err != nil {
				num = len(rel)
			}
		}
		switch {
		case num%13 == 0 && round == 1, num%11 == 0 && round == 2:
			touched = append(touched, rel)
			return os.Remove(p)
		case num%7 != 0:
			touched = append(touched, rel)
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			_, err = f.WriteString("- Dated by the dream: 2026-12-01.\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 150 {
		p := fmt.Sprintf("新/merged %d-%d.md", round, i)
		writeFile(t, dir, p, fmt.Sprintf("# Merged %d\n\n1. One.\n2. Two.\n", i), 0o644)
		touched = append(touched, p)
	}
	if round != 1 {
		return touched
	}
	if err := os.Chmod(filepath.Join(dir, "flat_00008.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "tools/run.sh"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "latest.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("日记/2026/第1天.md", filepath.Join(dir, "latest.md")); err != nil {
		t.Fatal(err)
	}
	// A file becomes a directory, a directory a file.
	if err := os.Remove(filepath.Join(dir, "flat_00028.md")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "flat_00028.md/inner.md", "now a folder\n", 0o644)
	if err := os.RemoveAll(filepath.Join(dir, "fixed/dir")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "fixed/dir", "now a file\n", 0o644)
	touched = append(touched, "flat_00008.md", "tools/run.sh", "latest.md", "flat_00028.md", "flat_00028.md/inner.md", "fixed/dir", "fixed/dir/a.md", "fixed/dir/b.md")
	return touched
}

// recordedTree is HEAD's tree id, after checking that the history is
// whole (every object there, no temporary index or pack left) and that the
// index holds HEAD with every file's stat data: a change check right after
// the record finds nothing.
func recordedTree(t *testing.T, h *History) string {
	t.Helper()
	ctx := testCtx(t)
	if out, err := h.Git(ctx, nil, "fsck", "--no-dangling", "--connectivity-only"); err != nil {
		t.Fatalf("fsck: %v\n%s", err, out)
	}
	if out, err := h.Git(ctx, nil, "diff-index", "--cached", "--name-only", "HEAD"); err != nil || len(out) > 0 {
		t.Fatalf("index differs from HEAD (%v): %q", err, out)
	}
	if out, err := h.Git(ctx, nil, "diff-files", "--name-only"); err != nil || len(out) > 0 {
		t.Fatalf("the stat check right after the record finds changes (%v): %.300q", err, out)
	}
	left, _ := fsutil.Glob(h.gitDir, "index.*")
	tmp, _ := fsutil.Glob(filepath.Join(h.gitDir, "objects", "pack"), "tmp_*")
	if len(left)+len(tmp) > 0 {
		t.Fatalf("left behind: %v %v", left, tmp)
	}
	out, err := h.Git(ctx, nil, "rev-parse", "HEAD^{tree}")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestRecordSameTreeAsGitAdd records a big memory, a big dream (an
// explicit path list) and a big hand edit (git's stat check), and wants for
// the first record the tree plain `git add -A` makes of the same dir, the
// history whole after each, and the dream's message naming its files.
func TestRecordSameTreeAsGitAdd(t *testing.T) {
	t.Parallel()
	needGit(t)
	mem := t.TempDir()
	bigMemory(t, mem, 900)
	ctx := testCtx(t)
	h, err := Open(ctx, t.TempDir(), mem)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	first := recordedTree(t, h)
	// git's own add of the same dir, in a repository of its own
	gitDir := t.TempDir()
	plainGit(t, mem, "--git-dir="+gitDir, "--work-tree="+mem, "init", "-q")
	plainGit(t, mem, "--git-dir="+gitDir, "--work-tree="+mem, "add", "-A")
	if plain := strings.TrimSpace(plainGit(t, mem, "--git-dir="+gitDir, "--work-tree="+mem, "write-tree")); plain != first {
		t.Fatalf("first record's tree %s, git add -A's %s", first, plain)
	}
	touched := bigDream(t, mem, 1)
	if _, err := h.RecordDream(ctx, Meta{DreamID: "d1", Status: "completed", Provider: "offline", StartedAt: started, Kind: KindDream, Paths: touched}); err != nil {
		t.Fatal(err)
	}
	recordedTree(t, h)
	msg, err := h.Git(ctx, nil, "log", "-1", "--format=%B")
	if err != nil {
		t.Fatal(err)
	}
	// A hand edit of most of it again, found by git's stat check.
	bigDream(t, mem, 2)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	recordedTree(t, h)
	for _, want := range []string{"flat_00028.md/inner.md", "fixed/dir", "新/merged 1-0.md"} {
		if !strings.Contains(string(msg), want) && !strings.Contains(string(msg), "more files") {
			t.Errorf("dream message lists neither %q nor a count of more files:\n%.2000s", want, msg)
		}
	}
}

// A record fails cleanly, and moves nothing, when HEAD moved after the
// record read it: another writer's commit is never lost.
func TestCommitOnlyFromParent(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	first, err := h.RecordHandEdits(ctx)
	if err != nil || first == "" {
		t.Fatalf("first record %q: %v", first, err)
	}
	writeTree(t, mem, map[string]string{"new.md": "a new memory\n"})
	if _, err := h.stagePaths(ctx, []string{"new.md"}); err != nil {
		t.Fatal(err)
	}
	tree := writeIndexTree(t, h)
	stale := strings.Repeat("1", 40)
	if _, err := h.commitOn(ctx, stale, tree, "dream x: 1 file\n"); err == nil {
		t.Fatal("a commit on a stale parent moved HEAD")
	}
	if head, err := h.head(ctx); err != nil || head != first {
		t.Fatalf("HEAD %s (%v), want it unmoved at %s", head, err, first)
	}
	if _, err := h.commitOn(ctx, "", tree, "dream x: 1 file\n"); err == nil {
		t.Fatal("a first commit replaced an existing history")
	}
}

// The commit is the one `git commit --cleanup=verbatim` writes: the index's
// tree, HEAD as parent, dream's identity, the message byte for byte, and
// the reflog line git commit writes.
func TestCommitIndexLikeGitCommit(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	first, err := h.RecordHandEdits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, mem, map[string]string{"new.md": "# 新\n"})
	if _, err := h.stagePaths(ctx, []string{"new.md"}); err != nil {
		t.Fatal(err)
	}
	msg := "dream d: 1 file (+1 −0)\n\n# not a comment\n\n\n   indented\n\nDream-Kind: dream\n\n"
	tree := writeIndexTree(t, h)
	parent, err := h.head(ctx)
	if err != nil || parent != first {
		t.Fatalf("head %q (%v), want %s", parent, err, first)
	}
	sha, err := h.commitOn(ctx, parent, tree, msg)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := h.Git(ctx, nil, "cat-file", "commit", sha)
	if err != nil {
		t.Fatal(err)
	}
	header, body, _ := strings.Cut(string(raw), "\n\n")
	lines := strings.Split(header, "\n")
	if len(lines) != 4 || lines[0] != "tree "+tree || lines[1] != "parent "+first ||
		!strings.HasPrefix(lines[2], "author dream <dream@localhost> ") || !strings.HasPrefix(lines[3], "committer dream <dream@localhost> ") {
		t.Errorf("commit header:\n%s", header)
	}
	if body != msg {
		t.Errorf("message %q, want %q byte for byte", body, msg)
	}
	if head, err := h.head(ctx); err != nil || head != sha {
		t.Errorf("HEAD %s (%v), want %s", head, err, sha)
	}
	reflog, err := h.Git(ctx, nil, "reflog", "-2", "--format=%gs")
	if err != nil {
		t.Fatal(err)
	}
	if want := "commit: dream d: 1 file (+1 −0)\ncommit (initial): hand edits: "; !strings.HasPrefix(string(reflog), want) {
		t.Errorf("reflog %q, want it to start %q", reflog, want)
	}
}

func writeIndexTree(t *testing.T, h *History) string {
	t.Helper()
	out, err := h.Git(testCtx(t), nil, "write-tree")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// head reads HEAD from a loose ref, from packed-refs alone, as nothing
// before the first record, and asks git for a detached HEAD.
func TestHeadFromRefFiles(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	if head, err := h.head(ctx); err != nil || head != "" {
		t.Fatalf("head of an empty history %q (%v)", head, err)
	}
	first, err := h.RecordHandEdits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	check := func(how string) {
		t.Helper()
		sha, ok := h.readHead()
		head, err := h.head(ctx)
		if err != nil || head != first {
			t.Fatalf("%s: head %q (%v), want %s", how, head, err, first)
		}
		if how != "detached" && (!ok || sha != first) {
			t.Fatalf("%s: read %q %v from the ref files", how, sha, ok)
		}
	}
	check("loose")
	if _, err := h.Git(ctx, nil, "pack-refs", "--all", "--prune"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(h.gitDir, "refs", "heads", "main")); !os.IsNotExist(err) {
		t.Fatalf("pack-refs left the loose ref: %v", err)
	}
	check("packed")
	writeTree(t, mem, map[string]string{"new.md": "packed parent\n"})
	second, err := h.RecordHandEdits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := h.Git(ctx, nil, "rev-parse", second+"^"); err != nil || strings.TrimSpace(string(out)) != first {
		t.Fatalf("the commit after pack-refs has parent %q (%v), want %s", out, err, first)
	}
	first = second
	if _, err := h.Git(ctx, nil, "update-ref", "--no-deref", "HEAD", first); err != nil {
		t.Fatal(err)
	}
	check("detached")
}

// A record that stages nothing skips asking git only while the index is
// the one the last record left with HEAD: what a failed record staged is
// still committed by the next one, and a HEAD moved by anything else is
// asked about.
func TestNothingStagedSkipsOnlyWhileIndexIsHead(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	if h.indexIsHead() {
		t.Fatal("an empty history claims its index is HEAD")
	}
	first, err := h.RecordHandEdits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !h.indexIsHead() {
		t.Fatal("a record did not note its index")
	}
	// A record that failed after staging: the index is ahead of HEAD.
	writeTree(t, mem, map[string]string{"topic.md": "# Staged by a record that failed\n"})
	if _, err := h.stagePaths(ctx, []string{"topic.md"}); err != nil {
		t.Fatal(err)
	}
	if h.indexIsHead() {
		t.Fatal("an index staged since the note claims to be HEAD")
	}
	second, err := h.RecordHandEdits(ctx)
	if err != nil || second == "" {
		t.Fatalf("the staged file was not recorded: %q %v", second, err)
	}
	if got, err := h.FileAt(ctx, "HEAD", "topic.md"); err != nil || string(got) != "# Staged by a record that failed\n" {
		t.Fatalf("HEAD:topic.md %q (%v)", got, err)
	}
	if sha, err := h.RecordHandEdits(ctx); err != nil || sha != "" {
		t.Fatalf("nothing changed, recorded %q (%v)", sha, err)
	}
	// HEAD moved back by something else: the index is not HEAD's.
	if _, err := h.Git(ctx, nil, "update-ref", "HEAD", first); err != nil {
		t.Fatal(err)
	}
	if h.indexIsHead() {
		t.Fatal("a moved HEAD still matches the note")
	}
	third, err := h.RecordHandEdits(ctx)
	if err != nil || third == "" {
		t.Fatalf("the index ahead of the moved HEAD was not recorded: %q %v", third, err)
	}
	// A note that is not one is no match.
	if err := os.WriteFile(filepath.Join(h.gitDir, recordedName), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if h.indexIsHead() {
		t.Fatal("a garbage note matched")
	}
}

// nestedRepos finds every directory holding a .git (a directory or a
// gitdir file) at any depth, sorted, without descending into them, into
// the memory dir's own .git or through a symlink.
func TestNestedReposListing(t *testing.T) {
	t.Parallel()
	mem := t.TempDir()
	for _, d := range []string{".git/objects", "a/repo/.git/refs", "a/repo/inner/.git", "b/c/d/wt", "e/f", "z/clone/.git"} {
		if err := os.MkdirAll(filepath.Join(mem, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, mem, "b/c/d/wt/.git", "gitdir: /elsewhere\n", 0o644)
	writeFile(t, mem, "e/f/notes.md", "# 笔记\n", 0o644)
	if err := os.Symlink(filepath.Join(mem, "a/repo"), filepath.Join(mem, "e/link")); err != nil {
		t.Fatal(err)
	}
	got := nestedRepos(mem)
	want := []string{"a/repo", "b/c/d/wt", "z/clone"}
	if !slices.Equal(got, want) {
		t.Fatalf("nestedRepos = %q, want %q", got, want)
	}
}

// A folder the history holds that becomes a repository of its own (the
// user ran git init in it) is left alone from then on: neither an edit of
// a file recorded before nor a new file in it is recorded, while the rest
// of the memory still is.
func TestFolderTurnedRepositoryLeftAlone(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	writeTree(t, mem, map[string]string{"notes/proj/a.md": "# 项目 A\n\n1. Plan.\n"})
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(mem, "notes/proj/.git"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, mem, map[string]string{
		"notes/proj/a.md": "# 项目 A\n\n1. Plan.\n2. Edited inside the repository.\n",
		"notes/proj/b.md": "new inside the repository\n",
		"topic.md":        "# Topic\n\nedited outside it\n",
	})
	sha, err := h.RecordHandEdits(ctx)
	if err != nil || sha == "" {
		t.Fatalf("record %q: %v", sha, err)
	}
	out, err := h.Git(ctx, nil, "show", "--name-only", "--format=", sha)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "topic.md" {
		t.Fatalf("recorded %q, want only topic.md", got)
	}
}

// changeWriter keeps a -z diff's records whole and at most maxPatch bytes
// of the patch after the empty record, however git's output is cut into
// writes, and stops git exactly when the patch is past the cap.
func FuzzChangeWriter(f *testing.F) {
	f.Add([]byte(":100644 100644 aaa bbb M\x00a.md\x001\t0\ta.md\x00\x00diff --git a/a.md b/a.md\n+x\n"), uint8(3), uint8(10))
	f.Add([]byte(":000000 100644 0 1 A\x00x\ny\x00\x00"), uint8(1), uint8(0))
	f.Add([]byte("no records at all"), uint8(5), uint8(4))
	f.Fuzz(func(t *testing.T, out []byte, chunk, maxPatch uint8) {
		step := int(chunk%16) + 1
		stopped := false
		w := &changeWriter{maxPatch: int(maxPatch), patchAt: -1, full: func() { stopped = true }}
		for i := 0; i < len(out) && !w.done; i += step {
			n, err := w.Write(out[i:min(i+step, len(out))])
			if err == nil && n != min(step, len(out)-i) {
				t.Fatalf("short write %d without an error", n)
			}
		}
		want := out
		if i := bytes.Index(out, []byte{0, 0}); i >= 0 {
			recs, patch := out[:i+2], out[i+2:]
			want = append(slices.Clip(recs), patch[:min(len(patch), int(maxPatch))]...)
			if stopped != (len(patch) > int(maxPatch)) {
				t.Fatalf("stopped %v with a patch of %d bytes and a cap of %d", stopped, len(patch), maxPatch)
			}
		} else if stopped {
			t.Fatal("stopped before the records ended")
		}
		if !bytes.Equal(w.buf.Bytes(), want) {
			t.Fatalf("kept %q, want %q", w.buf.Bytes(), want)
		}
	})
}

// parseListing takes every name as git wrote it (a newline, a tab, a
// leading "? " inside a name) and drops only gitlinks (no scope here).
func FuzzParseListing(f *testing.F) {
	f.Add([]byte("? new.md\x00? tools/repo/\x00H 100644 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0\ta\tb.md\x00H 160000 1111111111111111111111111111111111111111 0\told/clone\x00"))
	f.Add([]byte("? odd\nname.md\x00? ? q\x00"))
	h := &History{}
	f.Fuzz(func(t *testing.T, out []byte) {
		untracked, drop := h.parseListing(out)
		if drop == nil {
			t.Fatal("drop is nil")
		}
		recs := map[string]bool{}
		for _, r := range bytes.Split(out, []byte{0}) {
			recs[string(r)] = true
		}
		for _, p := range untracked {
			if p == "" || strings.HasSuffix(p, "/") || !recs["? "+p] {
				t.Fatalf("untracked %q is no untracked file record", p)
			}
		}
		for _, p := range drop {
			found := false
			for r := range recs {
				if strings.Contains(r, " 160000 ") || strings.HasPrefix(r[min(2, len(r)):], "160000 ") {
					if strings.HasSuffix(r, "\t"+p) {
						found = true
					}
				}
			}
			if !found {
				t.Fatalf("dropped %q, which is no gitlink record", p)
			}
		}
	})
}
