package gatestamp

// The few string functions this package needs, written here because
// package strings imports package unicode, whose tables are initialised
// after everything that sorts before it by import path: importing strings
// would put this package's init behind the SDKs' and half the binary's
// (about 72 initialisers instead of about 25; see the package doc).

func hasPrefix(s, prefix string) bool {
	return len(s) >= len(prefix) && s[:len(prefix)] == prefix
}

// cutPrefix is strings.CutPrefix.
func cutPrefix(s, prefix string) (after string, found bool) {
	if !hasPrefix(s, prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// index is the first index of sep in s, or -1.
func index(s, sep string) int {
	for i := 0; i+len(sep) <= len(s); i++ {
		if s[i:i+len(sep)] == sep {
			return i
		}
	}
	return -1
}

// cut is strings.Cut.
func cut(s, sep string) (before, after string, found bool) {
	if i := index(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// trimSlashes is s without its trailing slashes.
func trimSlashes(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// lastSlash is the index of the last '/' in s, or -1.
func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// lines splits s at each newline (strings.Split(s, "\n")).
func lines(s string) []string {
	var out []string
	for {
		before, after, found := cut(s, "\n")
		out = append(out, before)
		if !found {
			return out
		}
		s = after
	}
}

// isLowerHex reports whether s is lowercase hexadecimal digits only.
func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
