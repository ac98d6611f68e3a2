package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxResourceBytes bounds one resource read; a memory file is a few KB, and
// a model's context is not the place for more.
const maxResourceBytes = 1 << 20

// fileURI is the file:// URI of rel inside the memory dir.
func (s *Server) fileURI(rel string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(s.opts.Base.MemoryDir, rel))}
	return u.String()
}

// relFromURI maps a resource URI back to a path inside the memory dir, or
// fails: another scheme, another directory, "..", the lock file.
func (s *Server) relFromURI(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") {
		return "", fmt.Errorf("not a file URI of the memory dir: %q", raw)
	}
	mem := filepath.ToSlash(s.opts.Base.MemoryDir)
	p := path.Clean(u.Path)
	if p != u.Path || !strings.HasPrefix(p, mem+"/") {
		return "", fmt.Errorf("not inside the memory dir: %q", raw)
	}
	rel := strings.TrimPrefix(p, mem+"/")
	if rel == "" || !fs.ValidPath(rel) {
		return "", fmt.Errorf("not a memory file: %q", raw)
	}
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return "", fmt.Errorf("hidden files are not memory: %q", raw)
		}
	}
	return rel, nil
}

func mimeFor(rel string) string {
	switch strings.ToLower(path.Ext(rel)) {
	case ".md", ".markdown":
		return "text/markdown"
	case ".jsonl":
		return "application/x-ndjson"
	case ".json":
		return "application/json"
	}
	return "text/plain"
}

// addMemoryTemplate makes every file of the memory dir readable by URI,
// including files a dream creates after the list was sent.
func (s *Server) addMemoryTemplate() {
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "memory-file",
		Title:       "A memory file",
		Description: "A file of the agent's memory dir (read-only).",
		URITemplate: s.fileURI("") + "/{+path}",
	}, s.readResource)
}

// readResource reads one memory file through an os.Root on the memory dir,
// so that a symbolic link inside it cannot lead a client outside.
func (s *Server) readResource(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	rel, err := s.relFromURI(req.Params.URI)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	root, err := os.OpenRoot(s.opts.Base.MemoryDir)
	if err != nil {
		return nil, fmt.Errorf("opening the memory dir: %w", err)
	}
	defer root.Close()
	// Never blocking in open: a FIFO planted in the memory once hung the
	// call, and the server with it.
	f, _, err := fsutil.OpenRegular(root, filepath.FromSlash(rel), false)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxResourceBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	if len(b) > maxResourceBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", rel, maxResourceBytes)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: mimeFor(rel), Text: string(b)}}}, nil
}

// refreshResources lists the memory files as resources: new files are
// added, gone ones removed, so that clients that cache the list are told
// (the SDK sends resources/list_changed).
func (s *Server) refreshResources() error {
	mem := s.opts.Base.MemoryDir
	if mem == "" {
		return nil
	}
	want := map[string]*mcp.Resource{}
	err := filepath.WalkDir(mem, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			if p == mem {
				return err
			}
			return nil
		}
		name := de.Name()
		if p != mem && strings.HasPrefix(name, ".") {
			if de.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !de.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(mem, p)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		info, err := de.Info()
		if err != nil {
			return nil
		}
		uri := s.fileURI(rel)
		want[uri] = &mcp.Resource{URI: uri, Name: rel, Title: rel, MIMEType: mimeFor(rel), Size: info.Size(),
			Description: "memory file " + rel}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []string
	for uri := range s.resources {
		if want[uri] == nil {
			gone = append(gone, uri)
			delete(s.resources, uri)
		}
	}
	if len(gone) > 0 {
		s.mcp.RemoveResources(gone...)
	}
	for uri, r := range want {
		if !s.resources[uri] {
			s.mcp.AddResource(r, s.readResource)
			s.resources[uri] = true
		}
	}
	return nil
}
