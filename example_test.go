package dream_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dreamkit/dream"
	"github.com/dreamkit/dream/runner"
	"github.com/dreamkit/dream/settings"
)

// A host embeds dream by building a Dreamer once and calling MaybeStart
// from its idle hook; Run runs one dream now, as `dream run` does.
// This one uses the offline engine (package runner), which needs no model
// and links no model SDK.
func ExampleDreamer_Run() {
	root, _ := os.MkdirTemp("", "dream-example-")
	defer os.RemoveAll(root)
	mem := filepath.Join(root, "memory")
	os.MkdirAll(mem, 0o755)
	os.WriteFile(filepath.Join(mem, "MEMORY.md"), []byte("# Memory\n\n- [Notes](notes.md) — working notes\n"), 0o644)
	os.WriteFile(filepath.Join(mem, "notes.md"), []byte("---\nname: notes\ndescription: working notes\ntype: project\n---\n\n"+
		"- The staging database is reset every Monday.\n- The staging database is reset every Monday.\n"), 0o644)

	s := settings.DreamDefaults()
	d, err := dream.New(dream.Config{
		MemoryDir: mem,
		StateDir:  filepath.Join(root, "state"),
		Settings:  s,
		Runner:    &runner.Offline{},
		OnDone: func(r dream.Report) {
			fmt.Printf("Improved %d memory: %v\n", len(r.FilesTouched), r.FilesTouched)
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	// A host's idle hook would call d.MaybeStart() after every turn; it
	// returns at once, and dreams in the background once every gate opens.
	if _, err := d.Run(context.Background(), dream.RunOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	status, _ := d.Status(context.Background())
	fmt.Println("next gate:", status.Next)
	// Output:
	// Improved 1 memory: [notes.md]
	// next gate: time
}
