package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/internal/etcdlock"
	"github.com/dreamkit/dream/internal/fsutil"
	"github.com/dreamkit/dream/internal/gitsync"
	"github.com/dreamkit/dream/internal/host"
	"github.com/dreamkit/dream/internal/hostcfg"
	"github.com/dreamkit/dream/llm/anthropic"
	"github.com/dreamkit/dream/llm/openai"
	"github.com/dreamkit/dream/provider"
	"github.com/dreamkit/dream/settings"
	"github.com/dreamkit/dream/spend"
)

// startedByEnv marks the dream a `dream hook` starts: it runs with the
// agent's environment, whose keys were not given to dream. An agent that
// sets it only makes dream stricter.
const startedByEnv = "DREAM_STARTED_BY"

// inherited says this process runs with an environment that is not the
// user's own shell: under an agent (`dream hook`, the dream it starts,
// `dream maybe --hook`, `dream mcp`) or as a service (`dream daemon`). A
// key found there is not spent without consent (provider.Options).
func (a *app) inherited() bool {
	switch a.cmd {
	case "hook", "daemon", "mcp":
		return true
	}
	return a.hook || a.getenv(startedByEnv) != ""
}

// chooseProvider is provider.ChooseWith for this process.
func (a *app) chooseProvider() (provider.Choice, error) {
	return provider.ChooseWith(a.loaded.Settings, a.getenv, provider.Options{Inherited: a.inherited(), Agent: a.agentName()})
}

// agentName is the agent whose layout this invocation uses, when it is
// one `dream init` knows.
func (a *app) agentName() string {
	h := a.loaded.Settings.Host
	if a.layout != nil {
		h = a.layout.Host
	}
	switch h {
	case "claude", "codex", "gemini", "nanobot", "codebot":
		return h
	}
	return ""
}

// consentView is what `status` and `doctor` say about the provider: the
// choice for a command typed here, and for the hook, the daemon and the
// MCP server, which only inherit the keys.
type consentView struct {
	Here       choiceView `json:"here"`
	Background choiceView `json:"background"`
}

type choiceView struct {
	Provider string              `json:"provider"`
	Model    string              `json:"model,omitempty"`
	Why      string              `json:"why"`
	Unused   []provider.Unused   `json:"unused,omitempty"`
	Rejected *provider.Rejection `json:"rejected,omitempty"`
	Error    string              `json:"error,omitempty"`
}

func viewOf(c provider.Choice, err error) choiceView {
	if err != nil {
		return choiceView{Provider: "none", Why: err.Error(), Error: err.Error()}
	}
	return choiceView{Provider: c.Name, Model: c.Model, Why: c.Why, Unused: c.Unused, Rejected: c.Rejected}
}

// consent computes both choices.
func (a *app) consent() consentView {
	agent := a.agentName()
	here, herr := provider.ChooseWith(a.loaded.Settings, a.getenv, provider.Options{Agent: agent})
	bg, berr := provider.ChooseWith(a.loaded.Settings, a.getenv, provider.Options{Inherited: true, Agent: agent})
	return consentView{Here: viewOf(here, herr), Background: viewOf(bg, berr)}
}

// printConsent writes the provider lines of `dream status`.
func printConsent(w io.Writer, v consentView) {
	line := func(label string, c choiceView) {
		name := c.Provider
		if c.Model != "" {
			name += " " + c.Model
		}
		fmt.Fprintf(w, "%-14s%s (%s)\n", label, name, c.Why)
	}
	if v.Here.Provider == v.Background.Provider && v.Here.Model == v.Background.Model {
		line("provider:", v.Here)
	} else {
		line("provider:", v.Here)
		line("  background:", v.Background)
		fmt.Fprintln(w, "              (the hook, the daemon and the MCP server only inherit the keys of the agent or service that starts them)")
	}
	seen := map[string]bool{}
	for _, u := range append(append([]provider.Unused(nil), v.Background.Unused...), v.Here.Unused...) {
		if !seen[u.Var] {
			seen[u.Var] = true
			fmt.Fprintf(w, "%-14s%s is set but not spent by background dreams; to give it to dream: %s\n", "unused key:", u.Var, u.Enable)
		}
	}
}

// statusWithCost is `dream status --json`: the report, the layout, who
// would dream and what it would cost.
type statusWithCost struct {
	statusWithLayout
	Provider consentView       `json:"provider"`
	Cost     dream.CostOutlook `json:"cost"`
}

// estimateBackend is the provider `dream status` estimates a dream with:
// the one a command typed here would use, else the background one, else
// the offline engine (nothing to estimate).
func (a *app) estimateBackend() hostcfg.Backend {
	for _, inherited := range []bool{false, true} {
		c, err := provider.ChooseWith(a.loaded.Settings, a.getenv, provider.Options{Inherited: inherited, Agent: a.agentName()})
		if err == nil && c.Provider != nil {
			return c
		}
	}
	return provider.Choice{}
}

// printCost writes the estimate and spend lines of `dream status` and
// `dream run --dry-run`.
func printCost(w io.Writer, o dream.CostOutlook, s settings.Settings) {
	if e := o.Estimate; e != nil {
		fmt.Fprintf(w, "%-14s%s\n", "estimate:", e)
	}
	fmt.Fprintf(w, "%-14stoday %s of %s (%s tokens), this month %s of %s (%s tokens): max_cost_per_day, max_cost_per_month\n", "spend:",
		spend.Dollars(o.Today.USD), spend.Dollars(s.MaxCostPerDay), spend.Count(o.Today.Tokens),
		spend.Dollars(o.ThisMonth.USD), spend.Dollars(s.MaxCostPerMonth), spend.Count(o.ThisMonth.Tokens))
	if o.Refusal != "" {
		fmt.Fprintf(w, "%-14sa model dream would not start now: %s\n", "budget:", firstLine(o.Refusal))
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// printSpend is a report's estimate and cost line.
func printSpend(w io.Writer, r dream.Report) {
	var parts []string
	if e := r.Estimate; e != nil {
		parts = append(parts, "estimate "+e.String())
	}
	if c := r.Cost; c != nil {
		parts = append(parts, "cost "+c.String())
	}
	fmt.Fprintln(w, strings.Join(parts, " · "))
}

// rejectedFix is what clears a model the endpoint rejected.
const rejectedFix = "name a model the endpoint serves (model, or base_url, in dream's config.toml: dream config shows them), or remove model-rejected.json from the state dir once it serves this one"

// doctorProvider is doctor's provider lines: what a command typed here
// uses, and what the hook, the daemon and the MCP server use with the
// keys they only inherit, each unused key with what gives it to dream.
func (a *app) doctorProvider(add func(name, status, detail, fix string)) {
	v := a.consent()
	switch c := v.Here; {
	case c.Error != "":
		add("provider", statusFail, c.Error, "export ANTHROPIC_API_KEY=... or OPENAI_API_KEY=..., or --provider offline")
	case c.Rejected != nil:
		add("provider", statusWarn, c.Why, rejectedFix)
	case c.Provider == provider.Offline && len(c.Unused) == 0:
		add("provider", statusWarn, "offline engine ("+c.Why+"): mechanical fixes only, zero tokens", "export ANTHROPIC_API_KEY=... (or OPENAI_API_KEY=...) for model dreams")
	case c.Provider == provider.Offline:
		add("provider", statusWarn, "offline engine ("+c.Why+")", c.Unused[0].Enable)
	default:
		add("provider", statusOK, fmt.Sprintf("%s, model %s (%s; the value is never shown)", c.Provider, c.Model, c.Why), "")
	}
	bg := v.Background
	switch {
	case bg.Error != "":
		add("background", statusFail, bg.Error, "")
	case bg.Rejected != nil:
		add("background", statusWarn, bg.Why, rejectedFix)
	case bg.Provider == provider.Offline && len(bg.Unused) > 0:
		add("background", statusWarn, "hook, daemon and MCP dreams are offline: "+bg.Why, bg.Unused[0].Enable)
	case bg.Provider == provider.Offline:
		add("background", statusOK, "hook, daemon and MCP dreams are offline ("+bg.Why+")", "")
	default:
		s := a.loaded.Settings
		add("background", statusOK, fmt.Sprintf("hook, daemon and MCP dreams use %s %s (%s), at most %s a dream, %s a day, %s a month",
			bg.Provider, bg.Model, bg.Why, spend.Dollars(s.MaxCostPerDream), spend.Dollars(s.MaxCostPerDay), spend.Dollars(s.MaxCostPerMonth)), "")
	}
}

// modelDreamsView is what `dream init AGENT --model-dreams` did.
type modelDreamsView struct {
	Provider string `json:"provider"`
	Config   string `json:"config"`
	Changed  bool   `json:"changed"`
	// MemoryDir and Estimate: what a dream on the agent's memory for this
	// repository costs now (nil when the memory does not exist yet).
	MemoryDir string          `json:"memory_dir,omitempty"`
	Estimate  *spend.Estimate `json:"estimate,omitempty"`
	Ceilings  spend.Limits    `json:"ceilings"`
}

// initModelDreams records consent and says what it costs, for a person.
func (a *app) initModelDreams(agent string) error {
	md, err := a.recordModelDreams(agent)
	if err != nil {
		return err
	}
	if a.jsonOut {
		a.printJSON(md)
		return nil
	}
	w := a.stdout
	if md.Changed {
		fmt.Fprintf(w, "model dreams: recorded provider = %q in %s: %s's hook (and the daemon and MCP server) may now spend %s from the environment they inherit\n",
			md.Provider, md.Config, agent, keyVar(md.Provider))
	} else {
		fmt.Fprintf(w, "model dreams: %s already says provider = %q\n", md.Config, md.Provider)
	}
	switch {
	case md.Estimate != nil:
		fmt.Fprintf(w, "a dream on %s now: %s\n", md.MemoryDir, md.Estimate)
	case md.MemoryDir != "":
		fmt.Fprintf(w, "%s does not exist yet: `dream status --host %s` shows what a dream costs once it does\n", md.MemoryDir, agent)
	}
	c := md.Ceilings
	fmt.Fprintf(w, "ceilings: %s a dream, %s a day, %s a month (max_cost_per_dream, max_cost_per_day, max_cost_per_month in %s); spend so far: dream stats\n",
		spend.Dollars(c.Dream.USD), spend.Dollars(c.Day.USD), spend.Dollars(c.Month.USD), md.Config)
	fmt.Fprintf(w, "to withdraw it, take the provider line out of %s\n", md.Config)
	return nil
}

func keyVar(name string) string {
	if name == provider.OpenAI {
		return "OPENAI_API_KEY"
	}
	return "ANTHROPIC_API_KEY"
}

// userConfigPath is the user's config.toml.
func (a *app) userConfigPath() string { return settings.UserFile(a.lookupEnv, a.home()) }

// recordModelDreams writes provider = NAME into the user's config file,
// keeping every other byte, and estimates a dream on the agent's memory.
// The provider is the agent's own (claude: anthropic, codex: openai),
// else the one whose key this shell has.
func (a *app) recordModelDreams(agent string) (modelDreamsView, error) {
	name := map[string]string{"claude": provider.Anthropic, "codex": provider.OpenAI}[agent]
	if p := strings.ToLower(strings.TrimSpace(a.loaded.Settings.Provider)); p == provider.Anthropic || p == provider.OpenAI {
		name = p
	}
	if name == "" {
		switch {
		case a.getenv("ANTHROPIC_API_KEY") != "":
			name = provider.Anthropic
		case a.getenv("OPENAI_API_KEY") != "":
			name = provider.OpenAI
		default:
			return modelDreamsView{}, usagef("%s has no provider of its own dream knows: export ANTHROPIC_API_KEY or OPENAI_API_KEY here, or set DREAM_PROVIDER=anthropic|openai, and run it again", agent)
		}
	}
	path := a.userConfigPath()
	if path == "" {
		return modelDreamsView{}, usagef("no config file: set HOME or XDG_CONFIG_HOME")
	}
	changed, err := setTopLevelKey(path, "provider", name)
	if err != nil {
		return modelDreamsView{}, err
	}
	s := a.loaded.Settings
	s.Provider = name
	md := modelDreamsView{Provider: name, Config: path, Changed: changed, Ceilings: spend.Limits{
		Dream: spend.Amount{Tokens: s.MaxTokens, USD: s.MaxCostPerDream},
		Day:   spend.Amount{Tokens: s.MaxTokensPerDay, USD: s.MaxCostPerDay},
		Month: spend.Amount{Tokens: s.MaxTokensPerMonth, USD: s.MaxCostPerMonth}}}
	l, err := host.Resolve(agent, s.Repo, a.home(), a.env)
	if err != nil {
		return md, nil
	}
	md.MemoryDir = l.MemoryDir
	if !dirExists(l.MemoryDir) {
		return md, nil
	}
	model := s.Model
	if model == "" {
		model = map[string]string{provider.Anthropic: anthropic.DefaultModel, provider.OpenAI: openai.DefaultModel}[name]
	}
	s.Host = agent
	cfg, err := hostcfg.For(host.Project{Host: agent, MemoryDir: l.MemoryDir, SessionsDir: l.SessionsDir, RepoDir: s.Repo},
		provider.ForEstimate(name, model), dream.Config{StateDir: s.StateDir, Settings: s.Dream, OpenLock: etcdlock.Open, OpenSync: gitsync.Open}, a.home(), a.env)
	if err != nil {
		return md, nil
	}
	d, err := dream.New(cfg)
	if err != nil {
		return md, nil
	}
	defer d.Close()
	if o, err := d.Estimate(a.ctx); err == nil {
		md.Estimate = o.Estimate
	}
	return md, nil
}

// setTopLevelKey sets key = "value" in the TOML file at path, keeping
// every other byte: the key's line among the top-level keys is replaced,
// or a line is added at the top. A file in which the key is written
// another way (a dotted or quoted key) is refused, with what to do.
func setTopLevelKey(path, key, value string) (changed bool, err error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	line := fmt.Sprintf("%s = %q", key, value)
	text := string(old)
	lines := strings.SplitAfter(text, "\n")
	re := regexp.MustCompile(`^\s*` + regexp.QuoteMeta(key) + `\s*=`)
	found := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "[") {
			break // the top-level keys end at the first table
		}
		if re.MatchString(l) {
			nl := ""
			if strings.HasSuffix(l, "\n") {
				nl = "\n"
			}
			if strings.TrimRight(l, "\r\n") == line {
				return false, nil
			}
			lines[i], found = line+nl, true
			break
		}
	}
	next := strings.Join(lines, "")
	if !found {
		next = line + "\n" + text
	}
	var check map[string]any
	if _, err := toml.Decode(next, &check); err != nil || check[key] != value {
		return false, fmt.Errorf("%s: could not set %s = %q without rewriting the file (%v): add that line at its top by hand", path, key, value, err)
	}
	if err := fsutil.WriteFileAtomic(path, []byte(next), 0o600, true); err != nil {
		return false, err
	}
	return true, nil
}
