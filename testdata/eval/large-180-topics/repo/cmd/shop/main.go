package main

import "example.com/shop/internal/server"

func main() { server.Run(":8080") }
