package offline

import (
	"strings"
	"sync"

	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/indexcount"
)

// roles are what the host's layout says of each memory file (host.File):
// whether a dream may write it at all, and whether the agent parses its
// structure. The engine reads them instead of guessing from a file's shape.
type roles struct{ files []host.File }

func (l Layout) roles() roles { return roles{files: l.Files} }

// codexLayout is Codex CLI's file roles, from the host package (the one
// place they are written down); the directories do not matter here.
var codexLayout = sync.OnceValue(func() Layout {
	hl, err := host.Resolve("codex", "", "/", nil)
	if err != nil {
		return Layout{}
	}
	return LayoutFromHost(hl)
})

// LayoutFromHost is the engine's view of a host layout: its index (a file
// with the index role, when the agent loads it with a limit), and every
// file's role.
func LayoutFromHost(hl host.Layout) Layout {
	l := Layout{Host: hl.Host, Files: hl.Files}
	lim, ok := indexcount.Of(hl.Host)
	for _, f := range hl.Files {
		if f.Role == host.RoleIndex && !strings.ContainsAny(f.Path, "*?[") && ok {
			l.Index, l.Limit = f.Path, lim
		}
	}
	return l
}

// file returns the role entry for rel, if the layout lists files.
func (r roles) file(rel string) (host.File, bool) {
	if len(r.files) == 0 {
		return host.File{}, false
	}
	return host.Layout{Files: r.files}.FileFor(rel)
}

// mayEdit reports whether fixes may change rel: a layout that lists its
// files allows only the writable ones (generated files are rebuilt by the
// agent; a section file is the user's outside one section), and a layout
// that lists none allows every Markdown file.
func (r roles) mayEdit(rel string) bool {
	if len(r.files) == 0 {
		return true
	}
	f, ok := r.file(rel)
	return ok && f.Writable && f.Role != host.RoleSection
}

// codexBlocks are where the block headers of a Codex MEMORY.md are: the
// agent parses them (host.ParseCodexMemory), and host.Layout.CheckEdit
// refuses any change to one, so the engine edits block bodies only and
// treats each block as its own scope.
type codexBlocks struct {
	// spans are the header bytes of each block, in order; nil for a file
	// that is not in the block format.
	spans [][2]int
	// refused is set when the file should be in the block format and its
	// headers cannot be located: then nothing in it is touched.
	refused bool
}

func (r roles) blocks(f *file) codexBlocks {
	rf, ok := r.file(f.rel)
	if !ok || rf.Format != host.FormatCodexMemoryBlocks {
		return codexBlocks{}
	}
	text := string(f.src)
	blocks, err := host.ParseCodexMemory(text)
	if err != nil {
		return codexBlocks{refused: true}
	}
	cb := codexBlocks{spans: [][2]int{}}
	at := 0
	for _, b := range blocks {
		i := strings.Index(text[at:], b.Header)
		if b.Header == "" || i < 0 {
			return codexBlocks{refused: true} // e.g. CRLF lines: the parser's header has none
		}
		cb.spans = append(cb.spans, [2]int{at + i, at + i + len(b.Header)})
		at += i + len(b.Header)
	}
	return cb
}

// inHeader reports whether [start, end) touches a block header.
func (b codexBlocks) inHeader(start, end int) bool {
	for _, s := range b.spans {
		if start < s[1] && s[0] < end || start == end && start >= s[0] && start < s[1] {
			return true
		}
	}
	return false
}

// of is the ordinal of the block holding off.
func (b codexBlocks) of(off int) int {
	n := 0
	for _, s := range b.spans {
		if s[0] <= off {
			n++
		}
	}
	return n
}
