// Command linkr is a tiny URL shortener.
package main

import (
	"log"
	"net/http"

	"example.com/linkr/internal/api"
	"example.com/linkr/internal/store"
)

func main() {
	s, err := store.Open("linkr.db")
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe(":8080", api.Routes(s)))
}
