package nanobot

import "strings"

// The workspace files a dream may write (nanobot's editable_files plus the
// skills dir), relative to the workspace, slash-separated.
const (
	SoulFile   = "SOUL.md"
	UserFile   = "USER.md"
	MemoryFile = "memory/MEMORY.md"
	SkillsDir  = "skills"
)

// ContentFiles are the durable files embedded in the prompt and described
// in commit messages, in nanobot's order (_DREAM_CONTENT_PATHS).
var ContentFiles = []string{SoulFile, UserFile, MemoryFile}

// Writable reports whether a dream may write rel (slash-separated, relative
// to the workspace): the three content files and anything under skills/.
func Writable(rel string) bool {
	switch rel {
	case SoulFile, UserFile, MemoryFile:
		return true
	}
	return strings.HasPrefix(rel, SkillsDir+"/") && len(rel) > len(SkillsDir)+1
}
