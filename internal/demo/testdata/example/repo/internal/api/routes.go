// Package api serves the HTTP interface.
package api

import (
	"net/http"

	"example.com/linkr/internal/shortcode"
	"example.com/linkr/internal/store"
)

// Routes returns the route table.
func Routes(s *store.Store) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /links", func(w http.ResponseWriter, r *http.Request) {
		code := shortcode.Generate()
		if err := s.PutLink(code, r.FormValue("url")); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte(code))
	})
	return mux
}
