// Package shortcode makes short link codes.
package shortcode

import "math/rand/v2"

const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// Generate returns a random 7-character base62 code.
func Generate() string {
	b := make([]byte, 7)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}
