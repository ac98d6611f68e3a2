package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dreamkit/dream/internal/fsutil"
)

// Service kinds `dream daemon install` writes.
const (
	KindSystemd = "systemd"
	KindLaunchd = "launchd"
)

// launchdLabel names the launchd agent (reverse-DNS, as launchd expects).
const launchdLabel = "dev.dreamkit.dream"

// systemdUnit is the unit's file name.
const systemdUnit = "dream.service"

// Unit is a service definition for the user's supervisor.
type Unit struct {
	Kind string
	// Path is where the file goes.
	Path string
	// Content is the file.
	Content string
	// Enable and Disable are the commands the user runs to start it at
	// login and to stop it; dream does not run them, so that installing
	// never starts a process behind the user's back.
	Enable, Disable []string
}

// UnitFor builds the service definition of kind for the dream binary at
// exe. home is the user's home; configHome is the user's XDG config
// directory (settings.ConfigHome), where systemd looks for user units.
func UnitFor(kind, exe, home, configHome string) (Unit, error) {
	if !filepath.IsAbs(exe) {
		return Unit{}, fmt.Errorf("daemon install: the dream binary path %q is not absolute", exe)
	}
	if strings.ContainsAny(exe, "\n\r\x00") {
		return Unit{}, fmt.Errorf("daemon install: the dream binary path %q holds a line break", exe)
	}
	switch kind {
	case KindSystemd:
		if configHome == "" {
			return Unit{}, errors.New("daemon install: neither XDG_CONFIG_HOME nor the home directory is known")
		}
		return Unit{
			Kind: kind,
			Path: filepath.Join(configHome, "systemd", "user", systemdUnit),
			Content: "# Written by `dream daemon install`; `dream daemon install --remove` takes it out.\n" +
				"[Unit]\n" +
				"Description=dream: consolidates AI coding agents' memory when their sessions go idle\n" +
				"\n" +
				"[Service]\n" +
				"Type=simple\n" +
				"ExecStart=" + systemdQuote(exe) + " daemon\n" +
				"ExecReload=/bin/kill -HUP $MAINPID\n" +
				"# Provider keys (ANTHROPIC_API_KEY=...) go here, not in the unit.\n" +
				"EnvironmentFile=-%h/.config/dream/daemon.env\n" +
				"Restart=on-failure\n" +
				"RestartSec=30\n" +
				"KillSignal=SIGTERM\n" +
				"TimeoutStopSec=30\n" +
				"Nice=10\n" +
				"\n" +
				"[Install]\n" +
				"WantedBy=default.target\n",
			Enable:  []string{"systemctl --user daemon-reload", "systemctl --user enable --now " + systemdUnit},
			Disable: []string{"systemctl --user disable --now " + systemdUnit, "systemctl --user daemon-reload"},
		}, nil
	case KindLaunchd:
		if home == "" {
			return Unit{}, errors.New("daemon install: home directory unknown")
		}
		path := filepath.Join(home, "Library", "LaunchAgents", launchdLabel+".plist")
		logs := filepath.Join(home, "Library", "Logs", "dream-daemon.log")
		return Unit{
			Kind: kind,
			Path: path,
			Content: `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by dream daemon install; dream daemon install --remove takes it out. -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + launchdLabel + `</string>
	<key>ProgramArguments</key>
	<array>
		<string>` + xmlEscape(exe) + `</string>
		<string>daemon</string>
	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>ProcessType</key>
	<string>Background</string>
	<key>StandardErrorPath</key>
	<string>` + xmlEscape(logs) + `</string>
</dict>
</plist>
`,
			Enable:  []string{"launchctl bootstrap gui/$(id -u) " + shellQuote(path)},
			Disable: []string{"launchctl bootout gui/$(id -u)/" + launchdLabel},
		}, nil
	}
	return Unit{}, fmt.Errorf("daemon install: unknown kind %q (systemd or launchd)", kind)
}

// Install writes u. It refuses to replace a file it did not write.
func Install(u Unit) (changed bool, err error) {
	old, err := os.ReadFile(u.Path)
	switch {
	case err == nil && string(old) == u.Content:
		return false, nil
	case err == nil && !strings.Contains(string(old), "dream daemon install"):
		return false, fmt.Errorf("daemon install: %s exists and was not written by dream; move it away first", u.Path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("daemon install: %w", err)
	}
	if err := fsutil.WriteFileAtomic(u.Path, []byte(u.Content), 0o600, true); err != nil {
		return false, fmt.Errorf("daemon install: %w", err)
	}
	return true, os.Chmod(u.Path, 0o644)
}

// Remove deletes u's file if dream wrote it.
func Remove(u Unit) (removed bool, err error) {
	old, err := os.ReadFile(u.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("daemon install --remove: %w", err)
	}
	if !strings.Contains(string(old), "dream daemon install") {
		return false, fmt.Errorf("daemon install --remove: %s was not written by dream; left alone", u.Path)
	}
	if err := os.Remove(u.Path); err != nil {
		return false, fmt.Errorf("daemon install --remove: %w", err)
	}
	return true, nil
}

// systemdQuote quotes a path for ExecStart: double quotes, with '\', '"'
// escaped and '%' doubled (systemd expands specifiers even in quotes).
func systemdQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `%`, `%%`, `$`, `$$`)
	return `"` + r.Replace(s) + `"`
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace(s)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
