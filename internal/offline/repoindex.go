package offline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// repoLimits bound the one walk of the repository, so that a monorepo costs
// seconds rather than minutes. Past a limit the index is marked truncated
// and the checks that depend on it are skipped.
type repoLimits struct {
	maxFiles     int
	maxFileBytes int64
	maxWordBytes int64
}

var defaultRepoLimits = repoLimits{maxFiles: 200_000, maxFileBytes: 1 << 20, maxWordBytes: 64 << 20}

// skipDirs are never walked: history, dependencies and caches, none of which
// is the code a memory describes.
var skipDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, "node_modules": true, "vendor": true,
	"__pycache__": true, ".venv": true}

// wordExts are the files whose identifiers are indexed: source and the
// configuration that names environment variables and settings.
var wordExts = sync.OnceValue(func() map[string]bool {
	return extSet(".", sourceExts+" md yaml yml toml json ini cfg conf env txt gradle mod")
})

// extSet is the space-separated extensions of list as a set, each with
// prefix before it.
func extSet(prefix, list string) map[string]bool {
	m := map[string]bool{}
	for _, e := range strings.Fields(list) {
		m[prefix+e] = true
	}
	return m
}

// sourceExts are the extensions a bare word must end in to be taken for a
// file name outside a code span.
const sourceExts = "go py pyi ts tsx js jsx mjs cjs rs java kt kts rb c h cc cpp hpp cs swift php sh bash zsh ps1 sql proto vue svelte scala lua ex exs erl hs dart tf"

// repoIndex is what the walk learned.
type repoIndex struct {
	// byBase maps a base name to every file and directory path with it.
	byBase    map[string][]string
	words     map[string]bool
	truncated bool
	// wordsTruncated means an absent identifier proves nothing.
	wordsTruncated bool
}

func indexRepo(ctx context.Context, root string, lim repoLimits) (*repoIndex, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("repo: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("repo %s: not a directory", root)
	}
	ix := &repoIndex{byBase: map[string][]string{}, words: map[string]bool{}}
	files := 0
	var wordBytes int64
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable corner does not spoil the rest
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if p == root {
			return nil
		}
		if e.IsDir() && skipDirs[e.Name()] {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		ix.byBase[path.Base(rel)] = append(ix.byBase[path.Base(rel)], rel)
		if e.IsDir() || !e.Type().IsRegular() {
			return nil
		}
		if files++; files > lim.maxFiles {
			ix.truncated, ix.wordsTruncated = true, true
			return filepath.SkipAll
		}
		name := e.Name()
		if !wordExts()[strings.ToLower(filepath.Ext(name))] && name != "Makefile" && name != "Dockerfile" && !strings.HasPrefix(name, ".env") {
			return nil
		}
		if wordBytes >= lim.maxWordBytes {
			ix.wordsTruncated = true
			return nil
		}
		n, err := ix.addWords(p, lim.maxFileBytes)
		if err != nil {
			return nil
		}
		wordBytes += n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk repo %s: %w", root, err)
	}
	return ix, nil
}

// addWords adds the identifiers of one file, read up to max bytes; binary
// files (a NUL in the first block) are skipped.
func (ix *repoIndex) addWords(p string, max int64) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max))
	if err != nil {
		return 0, err
	}
	if bytes.IndexByte(data[:min(len(data), 512)], 0) >= 0 {
		return int64(len(data)), nil
	}
	start := -1
	for i := 0; i <= len(data); i++ {
		c := byte(0)
		if i < len(data) {
			c = data[i]
		}
		isWord := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || start >= 0 && c >= '0' && c <= '9'
		switch {
		case isWord && start < 0:
			start = i
		case !isWord && start >= 0:
			ix.words[string(data[start:i])] = true
			start = -1
		}
	}
	return int64(len(data)), nil
}

// hasPath reports whether the repository has a file or directory at rel or
// ending in "/"+rel (memories often name a path from a subdirectory).
func (ix *repoIndex) hasPath(rel string) bool {
	for _, p := range ix.byBase[path.Base(rel)] {
		if p == rel || strings.HasSuffix(p, "/"+rel) {
			return true
		}
	}
	return false
}
