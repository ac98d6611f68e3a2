package checkup

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"golang.org/x/mod/semver"
)

// npmPackages reports each tracked package.json's dependencies against the
// version its lock file resolved (package-lock.json or a v1 yarn.lock
// beside it) and the version installed in node_modules, when there is one.
// Offline, npm's newest versions are not known: what is measured is
// whether the lock still satisfies the ranges and matches what is
// installed.
func (c *check) npmPackages() string {
	var b strings.Builder
	for _, f := range c.named("package.json") {
		var pkg struct {
			Dependencies    map[string]string `json:"dependencies"`
			DevDependencies map[string]string `json:"devDependencies"`
		}
		if err := json.Unmarshal(c.read(f), &pkg); err != nil {
			fmt.Fprintf(&b, "\n### `%s`\n\nNot read: %v\n", f, err)
			continue
		}
		deps := map[string]string{}
		for n, r := range pkg.DevDependencies {
			deps[n] = r
		}
		for n, r := range pkg.Dependencies {
			deps[n] = r
		}
		if len(deps) == 0 {
			continue
		}
		dir := path.Dir(f)
		lockName, locked := c.npmLock(dir)
		fmt.Fprintf(&b, "\n### `%s`\n\n", f)
		if lockName == "" {
			b.WriteString("No package-lock.json or yarn.lock beside it (a pnpm-lock.yaml is not read): only the ranges are listed.\n\n")
		} else {
			fmt.Fprintf(&b, "Compared: each range in package.json against the version `%s` resolved, and against the version installed in node_modules when there is one. npm's newest versions are not known offline.\n\n", path.Join(dir, lockName))
		}
		b.WriteString("| package | range | locked | installed | finding |\n|---|---|---|---|---|\n")
		names := make([]string, 0, len(deps))
		for n := range deps {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			rng, lv := deps[n], locked(n, deps[n])
			var inst struct{ Version string }
			_ = json.Unmarshal(c.read(path.Join(dir, "node_modules", n, "package.json")), &inst)
			var finding []string
			switch ok, known := satisfies(rng, lv); {
			case lockName != "" && lv == "":
				finding = append(finding, "not in the lock")
				c.found["npm_not_locked"]++
			case lv != "" && known && !ok:
				finding = append(finding, "locked outside the range")
				c.found["npm_out_of_range"]++
			}
			if inst.Version != "" && lv != "" && inst.Version != lv {
				finding = append(finding, "installed "+inst.Version+", locked "+lv)
				c.found["npm_installed_differs"]++
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", n, strings.ReplaceAll(rng, "|", "\\|"), orDash(lv), orDash(inst.Version), orDash(strings.Join(finding, "; ")))
		}
	}
	return b.String()
}

// npmLock reads the lock file in dir: its name and the version it resolved
// for a package and range ("" when none).
func (c *check) npmLock(dir string) (string, func(name, rng string) string) {
	if data := c.read(path.Join(dir, "package-lock.json")); data != nil {
		var lock struct {
			Packages     map[string]struct{ Version string } `json:"packages"`
			Dependencies map[string]struct{ Version string } `json:"dependencies"`
		}
		if json.Unmarshal(data, &lock) == nil {
			return "package-lock.json", func(name, _ string) string {
				if p, ok := lock.Packages["node_modules/"+name]; ok {
					return p.Version
				}
				return lock.Dependencies[name].Version
			}
		}
	}
	if data := c.read(path.Join(dir, "yarn.lock")); data != nil {
		resolved := yarnLock(data)
		return "yarn.lock", func(name, rng string) string { return resolved[name+"@"+rng] }
	}
	return "", func(string, string) string { return "" }
}

// yarnLock maps each "name@range" specifier of a v1 yarn.lock to the
// version it resolved.
func yarnLock(data []byte) map[string]string {
	out := map[string]string{}
	var specs []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case !strings.HasPrefix(line, " "):
			specs = specs[:0]
			for _, s := range strings.Split(strings.TrimSuffix(line, ":"), ",") {
				specs = append(specs, strings.Trim(strings.TrimSpace(s), `"`))
			}
		case strings.HasPrefix(strings.TrimSpace(line), "version "):
			v := strings.Trim(strings.TrimPrefix(strings.TrimSpace(line), "version "), `"`)
			for _, s := range specs {
				out[s] = v
			}
		}
	}
	return out
}

// satisfies reports whether version v is in npm range rng; known is false
// for what is not a version range (a tag, a URL, file:, workspace: ...),
// which is not judged.
func satisfies(rng, v string) (ok, known bool) {
	rng = strings.TrimSpace(rng)
	switch rng {
	case "", "*", "x", "X", "latest":
		return true, true
	}
	ver := "v" + strings.TrimPrefix(v, "v")
	if !semver.IsValid(ver) {
		return false, false
	}
	for _, set := range strings.Split(rng, "||") {
		ok, known := satisfiesSet(strings.TrimSpace(set), ver)
		if !known {
			return false, false
		}
		if ok {
			return true, true
		}
	}
	return false, true
}

// satisfiesSet is one "||" alternative: comparators that must all hold.
func satisfiesSet(set, ver string) (bool, bool) {
	if a, b, ok := strings.Cut(set, " - "); ok {
		set = ">=" + strings.TrimSpace(a) + " <=" + strings.TrimSpace(b)
	}
	if set == "" || set == "*" {
		return true, true
	}
	pre := false
	for _, comp := range strings.Fields(set) {
		op := ""
		for _, o := range []string{">=", "<=", ">", "<", "=", "^", "~"} {
			if strings.HasPrefix(comp, o) {
				op = o
				break
			}
		}
		lo, hi, hasPre, ok := bounds(op, strings.TrimPrefix(comp, op))
		if !ok {
			return false, false
		}
		pre = pre || hasPre
		if lo != "" && semver.Compare(ver, lo) < 0 || hi != "" && semver.Compare(ver, hi) >= 0 {
			return false, true
		}
	}
	// npm: a pre-release satisfies only a range that names one.
	return semver.Prerelease(ver) == "" || pre, true
}

// bounds turns one comparator into [lo, hi): either may be "" (none).
func bounds(op, v string) (lo, hi string, pre, ok bool) {
	parts := strings.SplitN(strings.SplitN(strings.TrimPrefix(v, "v"), "+", 2)[0], ".", 3)
	n := 0 // how many numeric parts are given
	var num [3]int
	for i, p := range parts {
		if p == "x" || p == "X" || p == "*" {
			break
		}
		core, tag, _ := strings.Cut(p, "-")
		x, err := atoi(core)
		if err != nil {
			return "", "", false, false
		}
		num[i] = x
		n++
		if tag != "" {
			if i != 2 {
				return "", "", false, false
			}
			pre = true
		}
	}
	if n == 0 {
		return "", "", false, op == "" || op == "=" || op == ">=" || op == "<="
	}
	full := "v" + strings.TrimPrefix(v, "v")
	if n < 3 || !semver.IsValid(full) {
		full = fmt.Sprintf("v%d.%d.%d", num[0], num[1], num[2])
	}
	next := func(i int) string { // the first version past the given prefix
		m := num
		m[i]++
		for j := i + 1; j < 3; j++ {
			m[j] = 0
		}
		return fmt.Sprintf("v%d.%d.%d-0", m[0], m[1], m[2])
	}
	switch op {
	case "", "=":
		if n == 3 {
			return full, next(2), pre, true
		}
		return full, next(n - 1), pre, true
	case "^":
		i := 0
		for i < n-1 && num[i] == 0 {
			i++
		}
		return full, next(i), pre, true
	case "~":
		return full, next(min(1, n-1)), pre, true
	case ">=":
		return full, "", pre, true
	case ">":
		if n < 3 {
			return next(n - 1), "", pre, true
		}
		return next(2), "", pre, true
	case "<":
		return "", full, pre, true
	case "<=":
		if n < 3 {
			return "", next(n - 1), pre, true
		}
		return "", next(2), pre, true
	}
	return "", "", false, false
}

func atoi(s string) (int, error) {
	n := 0
	if s == "" || len(s) > 9 {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("not a number: %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}
