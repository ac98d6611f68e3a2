package tools

import (
	"crypto/sha256"
	"sync"
)

// readState remembers which memory files the model has seen in this dream and
// what they contained, so that edit can refuse to patch a file blind or one
// that changed under it since (the user, or another agent, editing memory
// while the dream runs). Keys are paths relative to the memory directory.
type readState struct {
	mu    sync.Mutex
	files map[string][sha256.Size]byte
}

func newReadState() *readState {
	return &readState{files: make(map[string][sha256.Size]byte)}
}

// record notes that the model has seen rel with exactly content.
func (s *readState) record(rel string, content []byte) {
	sum := sha256.Sum256(content)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[rel] = sum
}

// check reports whether rel was seen, and if so whether current is still what
// was seen.
func (s *readState) check(rel string, current []byte) (seen, unchanged bool) {
	s.mu.Lock()
	sum, ok := s.files[rel]
	s.mu.Unlock()
	if !ok {
		return false, false
	}
	return true, sum == sha256.Sum256(current)
}
