package checkup

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// maxManifest bounds a manifest or lock file read whole.
const maxManifest = 16 << 20

// read returns a tracked file's bytes (rel is slash-separated), nil when it
// is missing, not regular, or too big to be a manifest.
func (c *check) read(rel string) []byte {
	p := filepath.Join(c.o.Repo, filepath.FromSlash(rel))
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxManifest {
		return nil
	}
	b, _ := os.ReadFile(p)
	return b
}

// holdsAny reports whether the file at p contains one of subs.
func holdsAny(p string, subs []string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxManifest {
		return false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	for _, s := range subs {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// goModules reports each tracked go.mod's requirements against the newest
// release of the same module this machine knows: recorded in the go.sum
// beside it (the versions the build graph has ever pinned) or downloaded
// into the module cache.
func (c *check) goModules() string {
	var b strings.Builder
	for _, f := range c.named("go.mod") {
		data := c.read(f)
		mf, err := modfile.Parse(f, data, nil) // ParseLax would drop the replaces
		if err != nil {
			mf, err = modfile.ParseLax(f, data, nil)
		}
		if err != nil || mf.Module == nil {
			fmt.Fprintf(&b, "\n### `%s`\n\nNot read: %v\n", f, err)
			continue
		}
		sum := goSum(c.read(path.Join(path.Dir(f), "go.sum")))
		replaced := map[string]bool{}
		for _, r := range mf.Replace {
			replaced[r.Old.Path] = true
		}
		fmt.Fprintf(&b, "\n### `%s` (module %s)\n\n", f, mf.Module.Mod.Path)
		b.WriteString("Compared: each requirement's version against the newest release of that module recorded in the `go.sum` beside it or downloaded into this machine's module cache (a pre-release only against pre-releases). Indirect requirements are listed only when behind or missing from go.sum.\n\n")
		b.WriteString("| module | required | newest known here | behind |\n|---|---|---|---|\n")
		hidden := 0
		for _, r := range mf.Require {
			p, v := r.Mod.Path, r.Mod.Version
			status := ""
			switch {
			case replaced[p]:
				status = "replaced (not compared)"
			case !sum[p][v]:
				status = "missing from go.sum"
				c.found["go_sum_missing"]++
			}
			newest, where := v, ""
			if status == "" {
				for cand, src := range c.knownVersions(p, sum[p]) {
					if semver.IsValid(cand) && (semver.Prerelease(cand) == "" || semver.Prerelease(v) != "") && semver.Compare(cand, newest) > 0 {
						newest, where = cand, src
					}
				}
				if newest != v {
					status = distance(v, newest)
					c.found["go_behind"]++
				}
			}
			if r.Indirect && status == "" {
				hidden++
				continue
			}
			shown := newest
			if where != "" {
				shown += " (" + where + ")"
			}
			name := p
			if r.Indirect {
				name += " (indirect)"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, v, shown, orDash(status))
		}
		if hidden > 0 {
			fmt.Fprintf(&b, "\n%d indirect requirement(s) are at the newest version known here and not listed.\n", hidden)
		}
	}
	return b.String()
}

// goSum maps each module in a go.sum to the versions it records.
func goSum(data []byte) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			continue
		}
		v := strings.TrimSuffix(f[1], "/go.mod")
		if out[f[0]] == nil {
			out[f[0]] = map[string]bool{}
		}
		out[f[0]][v] = true
	}
	return out
}

// knownVersions are the versions of mod this machine knows, each with
// where it is known from: go.sum, then the module cache's download dir.
func (c *check) knownVersions(mod string, inSum map[string]bool) map[string]string {
	out := map[string]string{}
	for v := range inSum {
		out[v] = "go.sum"
	}
	if c.o.ModCache == "" {
		return out
	}
	esc, err := module.EscapePath(mod)
	if err != nil {
		return out
	}
	dir := filepath.Join(c.o.ModCache, "cache", "download", filepath.FromSlash(esc), "@v")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name := e.Name()
		for _, ext := range []string{".info", ".mod", ".zip"} {
			if v, ok := strings.CutSuffix(name, ext); ok {
				if uv, err := module.UnescapeVersion(v); err == nil {
					if _, seen := out[uv]; !seen {
						out[uv] = "module cache"
					}
				}
			}
		}
	}
	if list, err := os.ReadFile(filepath.Join(dir, "list")); err == nil {
		for _, v := range strings.Fields(string(list)) {
			if _, seen := out[v]; !seen {
				out[v] = "module cache"
			}
		}
	}
	return out
}

// distance says how far from is behind to: "N minor" or "N patch" (a
// module path holds one major version; +incompatible ones say major).
func distance(from, to string) string {
	if semver.Major(from) != semver.Major(to) {
		return "a major version"
	}
	fm, tm := numbers(from), numbers(to)
	switch {
	case tm[1] != fm[1]:
		return fmt.Sprintf("%d minor", tm[1]-fm[1])
	case tm[2] != fm[2]:
		return fmt.Sprintf("%d patch", tm[2]-fm[2])
	}
	return "a pre-release"
}

// numbers are a valid semver's major, minor and patch.
func numbers(v string) [3]int {
	var out [3]int
	core, _, _ := strings.Cut(strings.TrimPrefix(semver.Canonical(v), "v"), "-")
	for i, p := range strings.SplitN(core, ".", 3) {
		out[i], _ = strconv.Atoi(p)
	}
	return out
}
