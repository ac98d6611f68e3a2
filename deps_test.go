package dream

import (
	"os/exec"
	"strings"
	"testing"
)

// The model SDKs: a package that imports either links it.
var sdkModules = []string{"github.com/anthropics/anthropic-sdk-go", "github.com/openai/openai-go"}

// What the etcd lock and the MCP server bring: the command wires them, the
// library a Go host embeds links none of it.
var serverModules = []string{"go.etcd.io", "google.golang.org/grpc", "google.golang.org/protobuf", "github.com/golang/protobuf",
	"github.com/modelcontextprotocol/go-sdk"}

// TestBackendsStayOutsideTheRoot runs the real `go list -deps`: package dream
// must link neither model SDK nor the machinery of the runners it ships
// (the sub-agent, its tools and sandbox, the prompts, the history dream,
// the runner and provider packages), nor the backends the command wires
// (git sync, the etcd lock with its etcd, gRPC and
// protobuf) nor the MCP SDK, so that a host bringing its own Runner pays
// for none of them; and a host that dreams only offline (package runner)
// links no SDK either.
func TestBackendsStayOutsideTheRoot(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	const mod = "github.com/dreamkit/dream"
	for _, tc := range []struct {
		pkg       string
		forbidden []string
	}{
		{pkg: mod, forbidden: append([]string{
			mod + "/internal/agent", mod + "/internal/tools", mod + "/internal/sandbox", mod + "/internal/prompt",
			mod + "/internal/nanobot", mod + "/internal/hostcfg", mod + "/runner", mod + "/provider", mod + "/llm/anthropic", mod + "/llm/openai",
			mod + "/internal/etcdlock", mod + "/internal/gitsync", mod + "/internal/mcpserver", mod + "/internal/daemon",
		}, append(sdkModules, serverModules...)...)},
		{pkg: mod + "/runner", forbidden: append([]string{mod + "/provider", mod + "/llm/anthropic", mod + "/llm/openai"}, sdkModules...)},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", tc.pkg).Output()
			if err != nil {
				var stderr string
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = string(ee.Stderr)
				}
				t.Fatalf("go list -deps %s: %v\n%s", tc.pkg, err, stderr)
			}
			deps := strings.Fields(string(out))
			if len(deps) < 10 {
				t.Fatalf("go list -deps %s printed %d packages: %q", tc.pkg, len(deps), out)
			}
			for _, dep := range deps {
				for _, f := range tc.forbidden {
					if dep == f || strings.HasPrefix(dep, f+"/") {
						t.Errorf("%s depends on %s", tc.pkg, dep)
					}
				}
			}
		})
	}
}
