package dream

import "github.com/dreamkit/dream/internal/gate"

// SessionRule says which transcripts a host agent itself counts as
// sessions and how it names the current one (see Config.SessionRule). The
// command line fills it from the agent's layout (internal/host); an
// embedding host may build its own.
type SessionRule = gate.Rule
