package server

import "net/http"

func routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/orders", handleOrders)
	return mux
}

func handleOrders(w http.ResponseWriter, r *http.Request) {}
