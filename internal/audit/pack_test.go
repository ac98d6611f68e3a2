package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dreamkit/dream/internal/fsutil"
)

// countObjects is `git count-objects -v` as numbers.
func countObjects(t *testing.T, h *History, mem string) map[string]int {
	t.Helper()
	res := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(plainGit(t, mem, "--git-dir="+h.GitDir(), "count-objects", "-v")), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("count-objects: %q", l)
		}
		res[k] = n
	}
	return res
}

// A record hashes its blobs into packs, not a loose object per file, and
// rolls its packs up into one; and
// a record with more files than the message lists still has every file,
// with git's own counts, in its entry.
func TestBigRecordPacksBlobsAndCapsTheMessage(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	const n = copyPackAt + 100 // three update-index batches, rolled up by copying
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("topics/t%04d.md", i)] = fmt.Sprintf("# Topic %d\n\n- fact %d\n- 事实 %d\n", i, i, i)
	}
	writeTree(t, mem, files)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	c := countObjects(t, h, mem)
	if c["in-pack"] < n || c["count"] > 20 || c["packs"] != 1 {
		t.Fatalf("after the first record: %v, want the %d blobs in one pack and few loose objects", c, n)
	}
	changed := maxMsgFiles + 37
	var paths []string
	for i := range changed {
		p := fmt.Sprintf("topics/t%04d.md", i)
		files[p] += "- dated: 2026-12-01\n"
		if i%50 == 0 {
			files[p] = "# rewritten\n"
		}
		paths = append(paths, p)
	}
	writeTree(t, mem, files)
	m := meta("wide")
	m.Paths = paths
	sha, err := h.RecordDream(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	msg := plainGit(t, mem, "--git-dir="+h.GitDir(), "log", "-1", "--format=%B", sha)
	if want := fmt.Sprintf("dream wide: %d files\n", changed); !strings.HasPrefix(msg, want) {
		t.Fatalf("subject %q, want %q", strings.SplitN(msg, "\n", 2)[0], want)
	}
	if want := fmt.Sprintf("… and %d more files (the commit holds every change)\n", changed-maxMsgFiles); !strings.Contains(msg, want) {
		t.Fatalf("message lacks %q", want)
	}
	if got := strings.Count(msg, "\nmodified "); got != maxMsgFiles {
		t.Fatalf("message lists %d files, want %d", got, maxMsgFiles)
	}
	e, err := h.Show(ctx, "wide")
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Files) != changed {
		t.Fatalf("entry has %d files, want %d", len(e.Files), changed)
	}
	numstat := plainGit(t, mem, "--git-dir="+h.GitDir(), "diff-tree", "--numstat", "--no-renames", sha+"^", sha)
	for i, l := range strings.Split(strings.TrimSpace(numstat), "\n") {
		want := fmt.Sprintf("%d\t%d\t%s", e.Files[i].Added, e.Files[i].Removed, e.Files[i].Path)
		if l != want {
			t.Fatalf("file %d: git says %q, the entry %q", i, l, want)
		}
	}
	if got, err := h.FileAt(ctx, sha, "topics/t0001.md"); err != nil || string(got) != files["topics/t0001.md"] {
		t.Fatalf("FileAt = %q, %v", got, err)
	}
}

// A file whose stat changed but whose bytes did not is hashed again and
// adds nothing: no pack, no entry; nor do many (past refreshAt, git
// refreshes their stat first), while a same-size edit among them, its
// mtime put back, is still recorded.
func TestTouchedFilesAddNoPack(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	files := map[string]string{}
	for i := range refreshAt + 50 {
		files[fmt.Sprintf("many/m%03d.md", i)] = fmt.Sprintf("- memory %03d\n", i)
	}
	writeTree(t, mem, files)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, refreshAt + 50} {
		before := countObjects(t, h, mem)
		later := time.Now().Add(time.Duration(n) * time.Minute)
		for i := range n {
			if err := os.Chtimes(filepath.Join(mem, "many", fmt.Sprintf("m%03d.md", i)), later, later); err != nil {
				t.Fatal(err)
			}
		}
		if sha, err := h.RecordHandEdits(ctx); err != nil || sha != "" {
			t.Fatalf("%d touched: RecordHandEdits = %q, %v", n, sha, err)
		}
		// The objects, loose or packed, are the same ones: a roll-up may
		// run in any record (rollupArgs estimates the loose objects from
		// one of git's 256 object dirs, so a single loose object there
		// starts one), and it moves loose objects into a pack without
		// adding any; a blob hashed again into a pack of its own adds one.
		after := countObjects(t, h, mem)
		if after["count"]+after["in-pack"] != before["count"]+before["in-pack"] {
			t.Fatalf("%d touched: objects %v became %v", n, before, after)
		}
		if rolled := after["count"] < before["count"]; !rolled && after["packs"] != before["packs"] {
			t.Fatalf("%d touched: no roll-up, yet the packs went from %d to %d", n, before["packs"], after["packs"])
		}
	}
	p := filepath.Join(mem, "many", "m007.md")
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("- memory 700\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	for i := range refreshAt + 50 {
		if err := os.Chtimes(filepath.Join(mem, "many", fmt.Sprintf("m%03d.md", i)), later, later); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	sha, err := h.RecordHandEdits(ctx)
	if err != nil || sha == "" {
		t.Fatalf("the same-size edit among touched files: %q, %v", sha, err)
	}
	if e, err := h.Show(ctx, sha); err != nil || len(e.Files) != 1 || e.Files[0].Path != "many/m007.md" {
		t.Fatalf("entry %+v, %v", e.Files, err)
	}
}

// A long history of small dreams stays a few packs and few loose objects.
func TestManyRecordsAreRolledUp(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	for d := range 2*packLimit + 3 {
		p := fmt.Sprintf("t%02d.md", d%7)
		writeTree(t, mem, map[string]string{p: fmt.Sprintf("# %s\n\n- revision %d\n", p, d)})
		m := meta(fmt.Sprintf("d%03d", d))
		m.Paths = []string{p}
		if _, err := h.RecordDream(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	c := countObjects(t, h, mem)
	if c["packs"] > packLimit+1 || c["count"] >= packEvery {
		t.Fatalf("after %d dreams: %v", 2*packLimit+3, c)
	}
	es, err := h.Log(ctx, 0)
	if err != nil || len(es) != 2*packLimit+4 {
		t.Fatalf("log: %d entries, %v", len(es), err)
	}
}

func TestGeometricRollup(t *testing.T) {
	for _, tc := range []struct {
		packs []int
		want  int
	}{
		{nil, 0},
		{[]int{5}, 0},
		{[]int{1, 2, 4, 8}, 0},                  // a progression: nothing to do
		{[]int{3, 3, 3}, 9},                     // none twice the next: all
		{[]int{27000, 3, 4, 5, 6}, 18},          // the small ones, not the big one
		{[]int{27000, 22000, 3}, 49003},         // two of a size are rewritten together
		{[]int{100, 40, 5, 5, 5}, 15},           // 40 ≥ 2×15 stays
		{[]int{1000, 100, 1, 1, 1, 1, 1, 1}, 6}, // 100 ≥ 2×6 stays
		{[]int{1000, 10, 1, 1, 1, 1, 1, 1}, 16}, // 10 < 2×6 joins, 1000 stays
		{[]int{1000, 10, 8, 1, 1, 1, 1, 1}, 23}, // joins cascade
		{[]int{2, 1}, 0},                        // 2 ≥ 2×1
		{[]int{16, 8, 4, 2, 1, 1}, 32},          // the two ones break it: all roll up
	} {
		if got := geometricRollup(tc.packs, 2); got != tc.want {
			t.Errorf("geometricRollup(%v) = %d, want %d", tc.packs, got, tc.want)
		}
	}
}

// A record whose update-index fails in a later batch leaves the index as
// it was: no batch of the dream's files is left staged for the next
// record to commit under another name.
func TestFailedBatchLeavesIndexAlone(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	if _, err := h.RecordHandEdits(ctx); err != nil {
		t.Fatal(err)
	}
	before := plainGit(t, mem, "--git-dir="+h.GitDir(), "--work-tree="+mem, "ls-files", "--stage")
	files := map[string]string{}
	var paths []string
	for i := range bulkBatch + 10 {
		p := fmt.Sprintf("new/n%04d.md", i)
		files[p] = fmt.Sprintf("- note %d\n", i)
		paths = append(paths, p)
	}
	writeTree(t, mem, files)
	// update-index refuses a path beyond a symlink: the last batch fails.
	if err := os.MkdirAll(filepath.Join(mem, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, mem, map[string]string{"real/f.md": "x\n"})
	if err := os.Symlink("real", filepath.Join(mem, "ln")); err != nil {
		t.Fatal(err)
	}
	m := meta("half")
	m.Paths = append(paths, "ln/f.md")
	if _, err := h.RecordDream(ctx, m); err == nil {
		t.Fatal("RecordDream through a symlinked directory succeeded")
	}
	if after := plainGit(t, mem, "--git-dir="+h.GitDir(), "--work-tree="+mem, "ls-files", "--stage"); after != before {
		t.Fatalf("the index changed: %d bytes of entries became %d", len(before), len(after))
	}
}

// packedSizes maps every object in the history's packs to its size and
// the bytes it takes in its pack (`git verify-pack -v`).
func packedSizes(t *testing.T, h *History, mem string) map[string][2]int {
	t.Helper()
	idxs, err := fsutil.Glob(filepath.Join(h.GitDir(), "objects", "pack"), "pack-*.idx")
	if err != nil || len(idxs) == 0 {
		t.Fatalf("no pack in the history (%v)", err)
	}
	out := map[string][2]int{}
	for _, idx := range idxs {
		for _, l := range strings.Split(plainGit(t, mem, "--git-dir="+h.GitDir(), "verify-pack", "-v", idx), "\n") {
			f := strings.Fields(l)
			if len(f) < 5 || len(f[0]) < 40 || (f[1] != "blob" && f[1] != "tree" && f[1] != "commit") {
				continue
			}
			size, err1 := strconv.Atoi(f[2])
			inPack, err2 := strconv.Atoi(f[3])
			if err1 != nil || err2 != nil {
				t.Fatalf("verify-pack line %q", l)
			}
			out[f[0]] = [2]int{size, inPack}
		}
	}
	return out
}

// A record stores the blobs of a batch of small files whole (no zlib
// stream per file, see rawObjectMax) and compresses a batch holding a big
// file; either way the history gives every file back byte for byte. Batches
// of two paths and two workers run the staging's own update-index and the
// helpers' (prehashBatch), which each decide for their batch.
func TestSmallFilesStoredWholeBigOnesCompressed(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprintf("parallel=%v", parallel), func(t *testing.T) {
			h, mem := setup(t)
			ctx := testCtx(t)
			if parallel {
				h.batch, h.workers = 2, 2
			}
			if _, err := h.RecordHandEdits(ctx); err != nil {
				t.Fatal(err)
			}
			var log strings.Builder
			for i := 0; log.Len() <= 200<<10; i++ {
				fmt.Fprintf(&log, "2026-11-30T10:%02d:%02dZ INFO deploy step %d finished: migrated table orders_%d\n", i/60%60, i%60, i, i%17)
			}
			// Small files of a few hundred bytes, each of which zlib would
			// shrink by more than the 11 bytes an uncompressed stream adds,
			// so that a compressed one cannot pass for one stored whole.
			small := map[string]string{
				"topics/billing.md": "# Billing\n\n## Refunds\n\n1. Open the ticket and find the charge.\n2. Check the charge in Stripe; check the charge date against the invoice date.\n   - over 500 EUR: ask finance first, in #finance, and wait for their answer\n3. Refund and reply; refund in the original currency, reply with the refund id.\n",
				"topics/部署.md":      "# 部署\n\n- 先跑 `make check`，再发布；发布前先通知值班，发布后再通知值班。\n- 回滚见 [runbook](../runbook.md)；回滚前先通知值班，回滚后再通知值班。\n- 发布窗口：周二、周四 10:00–16:00；周五不发布，节假日前一天不发布。\n",
				"feedback.md":       "> Never squash-merge release branches.\n\n- Why: the changelog tool reads merge commits, and a squash-merge leaves the changelog tool nothing to read.\n- How to apply: merge release branches with a merge commit; merge hotfix branches with a merge commit too.\n",
				"topics/style.md":   "# Style\n\n```go\nif err != nil {\n\treturn fmt.Errorf(\"load config: %w\", err)\n}\nif err := save(cfg); err != nil {\n\treturn fmt.Errorf(\"save config: %w\", err)\n}\n```\n\n- Wrap every error with what was being done: load config, save config.\n",
			}
			big := map[string]string{
				"topics/oncall.md":  "# On-call\n\n- Page the secondary after 15 minutes without an answer; page the manager after 30 minutes without an answer.\n- Hand over at 09:00 on Monday; hand over in #oncall, with the open pages and the open incidents.\n",
				"topics/release.md": "# Release\n\n- Tag from main only; tag with the version from the changelog; tag after the changelog is merged.\n- Never tag from a release branch; never tag from a hotfix branch; never tag a commit that is not on main.\n",
				"worklog/deploy.md": "# Deploy log\n\n```\n" + log.String() + "```\n",
				"worklog/notes.md":  "- The deploy of 2026-11-30 needed a second run (see deploy.md); the second run needed the migration lock released first.\n- The deploy of 2026-12-01 needed no second run; the migration lock was released before the run.\n",
			}
			stored := func(files map[string]string, id string) (map[string][2]int, string) {
				writeTree(t, mem, files)
				m := meta(id)
				for p := range files {
					m.Paths = append(m.Paths, p)
				}
				slices.Sort(m.Paths)
				sha, err := h.RecordDream(ctx, m)
				if err != nil || sha == "" {
					t.Fatalf("record %s = %q, %v", id, sha, err)
				}
				for p, body := range files {
					if got, err := h.FileAt(ctx, sha, p); err != nil || string(got) != body {
						t.Fatalf("%s at %s: %v, %d bytes, want %d", p, id, err, len(got), len(body))
					}
				}
				return packedSizes(t, h, mem), sha
			}
			wantWhole := func(files map[string]string, sizes map[string][2]int, sha string) {
				t.Helper()
				for p, body := range files {
					if len(body) > rawObjectMax {
						continue
					}
					id := strings.TrimSpace(plainGit(t, mem, "--git-dir="+h.GitDir(), "rev-parse", sha+":"+p))
					s, ok := sizes[id]
					if !ok {
						t.Fatalf("%s (%s) is in no pack", p, id)
					}
					if s[1] < s[0]+11 {
						t.Errorf("%s: %d bytes take %d in the pack, want it stored whole (its size and an uncompressed zlib stream's 11 bytes)", p, s[0], s[1])
					}
				}
			}
			for p, body := range small {
				if len(body) > rawObjectMax {
					t.Fatalf("%s: %d bytes is no small file (rawObjectMax %d)", p, len(body), rawObjectMax)
				}
			}
			sizes, sha := stored(small, "small")
			wantWhole(small, sizes, sha)
			sizes, sha = stored(big, "big")
			wantWhole(big, sizes, sha)
			id := strings.TrimSpace(plainGit(t, mem, "--git-dir="+h.GitDir(), "rev-parse", sha+":worklog/deploy.md"))
			if s := sizes[id]; s[0] <= rawObjectMax || s[1] == 0 || s[1] > s[0]/4 {
				t.Errorf("the log: %d bytes take %d in the pack, want it compressed", s[0], s[1])
			}
		})
	}
}

// stageRuns keeps the batch's order and splits it where small files and
// big ones meet; a batch that alternates too often is one compressed run.
func TestStageRuns(t *testing.T) {
	h, mem := setup(t)
	big := strings.Repeat("- a line of a pasted log\n", rawObjectMax/20)
	files := map[string]string{"a.md": "small\n", "b.md": big, "c.md": "small\n", "d.md": "small\n", "e.md": big}
	for i := range maxRuns + 1 {
		files[fmt.Sprintf("z/%02d.md", i)] = map[bool]string{true: big, false: "small\n"}[i%2 == 1]
	}
	writeTree(t, mem, files)
	if err := os.Mkdir(filepath.Join(mem, "dir.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	show := func(runs []stageRun) string {
		var out []string
		for _, r := range runs {
			out = append(out, fmt.Sprintf("%v:%s", r.raw, strings.ReplaceAll(strings.TrimSuffix(string(r.list), "\x00"), "\x00", ",")))
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct{ paths, want string }{
		{"a.md,c.md,d.md", "true:a.md,c.md,d.md"},
		{"a.md,b.md,c.md,d.md,e.md", "true:a.md false:b.md true:c.md,d.md false:e.md"},
		{"b.md,e.md", "false:b.md,e.md"},
		{"a.md,b.md,c.md,e.md,d.md", "true:a.md false:b.md true:c.md false:e.md true:d.md"}, // maxRuns runs: still split
		// gone, a directory: nothing to compress, they join their run
		{"gone.md,dir.md,b.md,gone2.md", "true:gone.md,dir.md false:b.md true:gone2.md"},
		{"z/00.md,z/01.md,z/02.md,z/03.md,z/04.md,z/05.md", "false:z/00.md,z/01.md,z/02.md,z/03.md,z/04.md,z/05.md"},
	} {
		list := nulList(strings.Split(tc.paths, ","))
		if got := show(h.stageRuns(list)); got != tc.want {
			t.Errorf("stageRuns(%s) = %s, want %s", tc.paths, got, tc.want)
		}
	}
}

// What a record writes beside its roll-up goes to a quarantine: the
// roll-up's prune-packed removes empty fan-out directories of objects/,
// and a loose object written there meanwhile can lose its directory
// between git creating it and creating its temporary file in it (CI saw
// write-tree fail so). git runs through a wrapper that logs when each
// process starts and ends and where it writes objects. It makes the
// overlap certain, with marker files and bounded waits: the tree is not
// written before the roll-up has started, and the roll-up does not run
// before the commit is written. After the record the quarantine is gone
// and the repository holds every object; a stale quarantine goes, a
// fresh one stays.
func TestRollupBesideWritersInQuarantine(t *testing.T) {
	h, mem := setup(t)
	ctx := testCtx(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "git.log")
	wrapper := filepath.Join(dir, "git")
	started, committed := shellQuote(filepath.Join(dir, "rollup.started")), shellQuote(filepath.Join(dir, "commit.done"))
	failCommit := shellQuote(filepath.Join(dir, "fail.commit"))
	// await FILE: up to 10 s, so that a record that no longer overlaps
	// fails the test instead of hanging it.
	script := `#!/bin/sh
await() { i=0; while [ ! -e "$1" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done; }
sub= skip=
for a in "$@"; do
	if [ -n "$skip" ]; then skip=; continue; fi
	case $a in -c) skip=1 ;; -*) ;; *) sub=$a; break ;; esac
done
[ "$sub" = commit-tree ] && [ -e ` + failCommit + ` ] && exit 1
[ "$sub" = write-tree ] && await ` + started + `
echo "start $$ $sub $(date +%s%N) ${GIT_OBJECT_DIRECTORY:--}" >>` + shellQuote(log) + `
[ "$sub" = repack ] && : >` + started + ` && await ` + committed + `
` + shellQuote(h.gitBin) + ` "$@"
rc=$?
echo "end $$ $sub $(date +%s%N) -" >>` + shellQuote(log) + `
[ "$sub" = commit-tree ] && : >` + committed + `
exit $rc
`
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	objects := filepath.Join(h.GitDir(), "objects")
	stale, fresh := filepath.Join(objects, quarantinePrefix+"old"), filepath.Join(objects, quarantinePrefix+"new")
	for _, d := range []string{stale, fresh} {
		if err := os.MkdirAll(filepath.Join(d, "ab"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if old := time.Now().Add(-2 * staleQuarantine); os.Chtimes(stale, old, old) != nil {
		t.Fatal("chtimes")
	}
	h.gitBin = wrapper
	files := map[string]string{}
	for i := range bulkBatch + 50 { // more than one batch: the record rolls up
		files[fmt.Sprintf("topics/t%04d.md", i)] = fmt.Sprintf("# Topic %d\n\n- fact %d\n", i, i)
	}
	writeTree(t, mem, files)
	sha, err := h.RecordHandEdits(ctx)
	if err != nil || sha == "" {
		t.Fatalf("RecordHandEdits = %q, %v", sha, err)
	}
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	type span struct {
		sub, objects string
		start, end   int64
	}
	spans := map[string]*span{}
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.SplitN(l, " ", 5) // the object dir, last, may hold spaces
		if len(f) != 5 {
			t.Fatalf("log line %q", l)
		}
		ns, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		s := spans[f[1]]
		if s == nil {
			s = &span{sub: f[2]}
			spans[f[1]] = s
		}
		if f[0] == "start" {
			s.start, s.objects = ns, f[4]
		} else {
			s.end = ns
		}
	}
	writes := map[string]bool{"write-tree": true, "commit-tree": true, "update-index": true, "hash-object": true, "fast-import": true, "mktree": true}
	var repacks, beside int
	for _, r := range spans {
		if r.sub != "repack" {
			continue
		}
		repacks++
		if r.objects != "-" {
			t.Errorf("the roll-up ran on the object dir %s, not the repository's", r.objects)
		}
		for _, w := range spans {
			if !writes[w.sub] || w.end <= r.start || r.end <= w.start {
				continue
			}
			beside++
			if w.objects == "-" || filepath.Dir(w.objects) != objects || !strings.HasPrefix(filepath.Base(w.objects), quarantinePrefix) {
				t.Errorf("git %s ran beside the roll-up writing objects to %s, not to a quarantine", w.sub, w.objects)
			}
		}
	}
	if repacks != 1 || beside < 2 {
		t.Fatalf("%d roll-ups and %d object writers beside them, want 1 and the tree and the commit:\n%s", repacks, beside, raw)
	}
	left, _ := fsutil.Glob(objects, quarantinePrefix+"*")
	if !slices.Equal(left, []string{fresh}) {
		t.Fatalf("quarantines left: %q, want only the fresh one", left)
	}
	plainGit(t, mem, "--git-dir="+h.GitDir(), "fsck", "--strict", "--no-dangling")
	files["topics/t0001.md"] += "- dated: 2026-12-01\n"
	writeTree(t, mem, files)
	if sha, err := h.RecordHandEdits(ctx); err != nil || sha == "" {
		t.Fatalf("the record after = %q, %v", sha, err)
	}
	plainGit(t, mem, "--git-dir="+h.GitDir(), "fsck", "--strict", "--no-dangling")
	// A record that fails after its tree was written still settles its
	// quarantine: the index's cache names that tree, and plain git
	// (fsck, gc) must find it.
	if err := os.WriteFile(filepath.Join(dir, "fail.commit"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for p := range files {
		files[p] += "- rewritten\n"
	}
	writeTree(t, mem, files)
	if sha, err := h.RecordHandEdits(ctx); err == nil {
		t.Fatalf("a record whose commit-tree failed = %q, want an error", sha)
	}
	plainGit(t, mem, "--git-dir="+h.GitDir(), "fsck", "--strict")
	if left, _ := fsutil.Glob(objects, quarantinePrefix+"*"); !slices.Equal(left, []string{fresh}) {
		t.Fatalf("quarantines left after a failed record: %q", left)
	}
}

// shellQuote quotes s as one word of a POSIX shell script.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
