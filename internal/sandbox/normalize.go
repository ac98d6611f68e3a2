package sandbox

import (
	"crypto/x509"
	"encoding/base64"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// joinLines removes every line break with the indentation that follows it
// (and a shell continuation backslash before it), so that a key wrapped over
// two lines, or a PEM body of 64-character lines, becomes one run the rules
// can see. origin maps an offset in the joined text back to the original,
// for line numbers.
func joinLines(s string) (joined string, origin func(int) int) {
	type cut struct{ at, removed int } // joined offset, bytes removed up to it
	var cuts []cut
	var b strings.Builder
	b.Grow(len(s))
	removed := 0
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		end := i + j // the newline
		keep := end
		if keep > i && s[keep-1] == '\r' {
			keep--
		}
		if keep > i && s[keep-1] == '\\' {
			keep--
		}
		b.WriteString(s[i:keep])
		next := end + 1
		for next < len(s) && (s[next] == ' ' || s[next] == '\t') {
			next++
		}
		removed += next - keep
		cuts = append(cuts, cut{at: b.Len(), removed: removed})
		i = next
	}
	joined = b.String()
	origin = func(i int) int {
		// The last cut at or before i says how much was removed before it.
		k := sort.Search(len(cuts), func(k int) bool { return cuts[k].at > i })
		if k == 0 {
			return i
		}
		return min(i+cuts[k-1].removed, len(s))
	}
	return joined, origin
}

// minBase64Run is the shortest run worth decoding: 18 bytes of payload,
// less than any credential the rules know.
const minBase64Run = 24

// base64Runs returns the [start, end) offsets of every maximal run of base64
// characters (either alphabet, '=' padding included) at least minBase64Run
// long that mixes letter cases or holds a digit or symbol, as encoded text
// does and words run together do not. A hand-written scan: a regexp for this
// was the guard's largest cost.
func base64Runs(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); {
		if !isBase64Byte(s[i]) {
			i++
			continue
		}
		j := i
		var lower, upper, other bool
		for j < len(s) && isBase64Byte(s[j]) {
			c := s[j]
			switch {
			case c >= 'a' && c <= 'z':
				lower = true
			case c >= 'A' && c <= 'Z':
				upper = true
			default:
				other = true
			}
			j++
		}
		end := j
		for end < len(s) && end-j < 2 && s[end] == '=' {
			end++
		}
		if j-i >= minBase64Run && (lower && upper || other) {
			out = append(out, [2]int{i, end})
		}
		i = end
		if i == j {
			i++
		}
	}
	return out
}

func isBase64Byte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// decodeBase64 decodes run in whichever alphabet it uses, padded or not,
// and returns nil when it is not base64.
func decodeBase64(run string) []byte {
	run = strings.TrimRight(run, "=")
	if len(run)%4 == 1 {
		run = run[:len(run)-1]
	}
	enc := base64.RawStdEncoding
	if strings.ContainsAny(run, "-_") {
		enc = base64.RawURLEncoding
	}
	dec, err := enc.DecodeString(run)
	if err != nil {
		return nil
	}
	return dec
}

// printable reports whether b is text: valid UTF-8 with at most one control
// character in twenty (tabs and newlines allowed), so that random bytes a
// long word happens to decode to are not scanned as text.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	bad := 0
	for _, r := range string(b) {
		if r != '\n' && r != '\t' && r != '\r' && !unicode.IsPrint(r) {
			bad++
		}
	}
	return bad*20 <= len(b)
}

// isPrivateKeyDER reports whether b is, or begins like, the DER of a private
// key: PKCS#8, PKCS#1 RSA, SEC 1 EC, or an OpenSSH key. A whole key is
// recognised by parsing it; a truncated body by its first bytes, which for
// a private key are SEQUENCE, INTEGER version 0 or 1, then the key material
// (a certificate or public key starts SEQUENCE, SEQUENCE instead).
func isPrivateKeyDER(b []byte) bool {
	if strings.HasPrefix(string(b), "openssh-key-v1\x00") {
		return true
	}
	if len(b) < 32 || b[0] != 0x30 {
		return false
	}
	if _, err := x509.ParsePKCS8PrivateKey(b); err == nil {
		return true
	}
	if _, err := x509.ParsePKCS1PrivateKey(b); err == nil {
		return true
	}
	if _, err := x509.ParseECPrivateKey(b); err == nil {
		return true
	}
	// Skip the outer SEQUENCE's length (short or long form).
	i := 1
	switch l := b[i]; {
	case l < 0x80:
		i++
	case l >= 0x81 && l <= 0x83:
		i += 1 + int(l-0x80)
	default:
		return false
	}
	if i+4 > len(b) || b[i] != 0x02 || b[i+1] != 0x01 {
		return false
	}
	version, next := b[i+2], b[i+3]
	switch version {
	case 0:
		// PKCS#8 v1 (AlgorithmIdentifier), PKCS#1 RSA or DSA (an INTEGER).
		return next == 0x30 || next == 0x02
	case 1:
		// SEC 1 EC (OCTET STRING) or PKCS#8 v2 (AlgorithmIdentifier).
		return next == 0x04 || next == 0x30
	}
	return false
}
