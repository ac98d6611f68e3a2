package server

import "net/http"

// Run serves the shop API.
func Run(addr string) error {
	return http.ListenAndServe(addr, routes())
}
