package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/etcdlock"
	"github.com/dreamkit/dream/internal/gitsync"
	"github.com/dreamkit/dream/internal/mcpserver"
	"github.com/dreamkit/dream/internal/nanobot"
	"github.com/dreamkit/dream/jobs"
)

// cmdMCP serves the dream tools over stdio. Stdout is the protocol, so
// nothing else is ever written there: diagnostics go to stderr. A bad line
// on stdin is answered and skipped (mcpserver.StdioTransport); at the end
// of stdin the server exits once a dream it started has landed. The memory
// dir comes from the usual location flags (--host, --memory-dir); without
// one the server still lists, kills and reads dreams by id.
func cmdMCP(a *app, args []string) error {
	if _, err := a.standardCommand("mcp", args, nil); err != nil {
		return err
	}
	s := a.loaded.Settings
	// No runner here: the server fits each dream to its host through
	// hostcfg.For (mcpserver.Options.Host, Backend).
	base := dream.Config{StateDir: s.StateDir, Settings: s.Dream, PersistThrottle: true, OpenLock: etcdlock.Open, OpenSync: gitsync.Open}
	hostName := ""
	if s.MemoryDir != "" || s.Host != "" {
		mem, sessions, repo, err := a.locations()
		if err != nil {
			return err
		}
		if fi, err := os.Stat(mem); err != nil || !fi.IsDir() {
			if err == nil {
				err = errors.New("not a directory")
			}
			return usagef("memory directory %s: %v", mem, err)
		}
		session := a.session
		base.MemoryDir, base.SessionsDir, base.RepoDir = mem, sessions, repo
		base.CurrentSession = func() string { return session }
		hostName = s.Host
		if a.layout != nil {
			hostName = a.layout.Host
		} else if hostName == "" && a.isNanobot() {
			hostName = nanobot.HostName
		}
	}
	// An MCP server is started by the agent, with the agent's
	// environment: its keys are not dream's to spend without consent.
	choice, err := a.chooseProvider()
	if err != nil {
		return usagef("%v", err)
	}
	log := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	base.Logf = func(format string, args ...any) { log.Warn("dream", "message", fmt.Sprintf(format, args...)) }
	note := choice.Name + " " + choice.Model + " (" + choice.Why + ")"
	for _, u := range choice.Unused {
		note += "; " + u.Var + " is set but not spent: to give it to dream, " + u.Enable
	}
	repo := a.jobRepo()
	jobsHere := jobsOf(a.loaded.Jobs, s, a.home(), a.env)
	srv, err := mcpserver.New(mcpserver.Options{Base: base, Host: hostName, Backend: choice, Provider: note, Home: a.home(), Env: a.env, Version: version, Logger: log,
		Repo: repo, Jobs: func() []jobs.Job { return jobsHere(repo) }})
	if err != nil {
		return err
	}
	if err := srv.Run(a.ctx, mcpserver.StdioTransport(a.stdin, a.stdout)); err != nil && !errors.Is(err, io.EOF) && a.ctx.Err() == nil {
		return err
	}
	return nil
}
