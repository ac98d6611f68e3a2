package early

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dreamkit/dream/cmd/dream/internal/hookplan"
	"github.com/dreamkit/dream/settings"
)

// TestPlanHookLeavesTheEtcdLockToMaybe: the quick time gate reads the local
// lock file; with the etcd lock the last consolidation is the cluster's,
// so the hook starts the detached maybe, which asks the cluster, instead
// of trusting a local file another machine never touched.
func TestPlanHookLeavesTheEtcdLockToMaybe(t *testing.T) {
	root := t.TempDir()
	mem := filepath.Join(root, "memory")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(mem, ".consolidate-lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil { // consolidated just now, here
		t.Fatal(err)
	}
	env := func(k string) (string, bool) {
		if k == "HOME" {
			return filepath.Join(root, "home"), true
		}
		return "", false
	}
	s := settings.Defaults(env, filepath.Join(root, "home"))
	s.MemoryDir, s.Repo, s.StateDir = mem, root, filepath.Join(root, "state")
	if job, why := PlanHook(s, "", hookplan.Payload{}, env, time.Now()); job != nil || why != "" {
		t.Fatalf("file lock, consolidated now: job %+v, why %q; want nothing to do", job, why)
	}
	s.Lock = settings.LockEtcd
	if job, why := PlanHook(s, "", hookplan.Payload{}, env, time.Now()); job == nil || job.Memory != mem {
		t.Fatalf("etcd lock: job %+v, why %q; want the detached maybe to decide", job, why)
	}
}
