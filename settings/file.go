package settings

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// maxFileSize bounds a config file. Real ones are a few hundred bytes; the
// bound keeps a mistaken path (a log, a transcript) from being slurped.
const maxFileSize = 1 << 20

// readFile parses a TOML config file into raw values per known key and the
// sorted names of keys it does not know; it also returns the bytes it
// parsed, which the trust check hashes. A missing file returns an error
// satisfying errors.Is(err, fs.ErrNotExist); a malformed one an error naming
// the file and line. Only a regular file is read: a FIFO planted as
// .dream.toml must not block every dream command.
func readFile(path string) (map[string]raw, []string, []map[string]any, []byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("read config file: %w", err)
	}
	if info.IsDir() {
		return nil, nil, nil, nil, fmt.Errorf("read config file %s: is a directory", path)
	}
	if !info.Mode().IsRegular() {
		return nil, nil, nil, nil, fmt.Errorf("read config file %s: not a regular file (%v)", path, info.Mode().Type())
	}
	if info.Size() > maxFileSize {
		return nil, nil, nil, nil, fmt.Errorf("read config file %s: larger than %d bytes", path, maxFileSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("read config file: %w", err)
	}
	values, unknown, jobs, err := parseFile(path, string(data))
	return values, unknown, jobs, data, err
}

// parseFile is readFile after the I/O, separate so that it can be fuzzed.
// The [[job]] tables come back as written, for the job machinery to
// validate (package jobs); a "job" that is not a list of tables is one
// table that says so, so that the error names the job key.
func parseFile(path, data string) (map[string]raw, []string, []map[string]any, error) {
	doc, outOfRange, err := decodeTolerant(data)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return nil, nil, nil, fmt.Errorf("config file %s:%d: %s", path, perr.Position.Line, perr.Message)
		}
		return nil, nil, nil, fmt.Errorf("config file %s: %w", path, err)
	}
	values := make(map[string]raw, len(doc))
	var unknown []string
	var jobs []map[string]any
	for name, v := range doc {
		if name == JobKey {
			jobs = jobTablesOf(v)
			continue
		}
		if _, ok := lookup(name); !ok || strings.Contains(name, "-") {
			unknown = append(unknown, name)
			continue
		}
		r := rawFromTOML(v)
		if outOfRange[name] {
			// Refused by every parser, with the number as written.
			r = raw{text: r.String(), bad: true, note: "the number is out of range"}
		}
		values[name] = r
	}
	sort.Strings(unknown)
	return values, unknown, jobs, nil
}

// maxRangeFixes bounds how many out-of-range numbers decodeTolerant steps
// over in one file; a file with more is refused whole, like any malformed one.
const maxRangeFixes = 64

// decodeTolerant decodes a TOML document in which a number may be out of
// range for 64 bits (1e309, a 25-digit integer). The TOML decoder fails the
// whole document on such a number, which would throw away every other key
// because of one; instead the number is turned into a string at the exact
// bytes the decoder reported, the document decoded again, and the key
// reported in outOfRange so that its parser refuses it and only it.
func decodeTolerant(data string) (doc map[string]any, outOfRange map[string]bool, err error) {
	outOfRange = map[string]bool{}
	for range maxRangeFixes {
		doc = nil
		_, err = toml.Decode(data, &doc)
		var perr toml.ParseError
		if err == nil || !errors.As(err, &perr) || !strings.Contains(perr.Message, " is out of range for ") {
			return doc, outOfRange, err
		}
		start, n := perr.Position.Start, perr.Position.Len
		if start < 0 || n <= 0 || start+n > len(data) || !isNumberText(data[start:start+n]) {
			return nil, nil, err
		}
		key, _, _ := strings.Cut(perr.LastKey, ".")
		outOfRange[key] = true
		data = data[:start] + strconv.Quote(data[start:start+n]) + data[start+n:]
	}
	return nil, nil, err
}

// isNumberText reports whether s is made only of the bytes a TOML number
// token uses, so that quoting it cannot change the document's structure.
func isNumberText(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.' || c == '_' || c == 'e' || c == 'E' ||
			c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == 'x' || c == 'o' || c == 'b') {
			return false
		}
	}
	return s != ""
}

// rawFromTOML turns a decoded TOML value into the text the key parsers read,
// so that a file, the environment and a flag are validated by the same code
// and min_hours = -3 and min_hours = "-3" get the same warning.
func rawFromTOML(v any) raw {
	switch x := v.(type) {
	case string:
		return raw{text: x}
	case int64:
		return raw{text: strconv.FormatInt(x, 10)}
	case float64:
		return raw{text: formatFloat(x)}
	case bool:
		return raw{text: strconv.FormatBool(x)}
	case []any:
		items := make([]string, 0, len(x))
		for _, it := range x {
			s, ok := it.(string)
			if !ok {
				// A list holding a number or a table is not a list of
				// strings; keep its shape visible in the warning.
				return raw{text: fmt.Sprint(v), bad: true}
			}
			items = append(items, s)
		}
		return raw{list: items, isList: true}
	case map[string]any:
		return raw{text: fmt.Sprint(v), bad: true, table: x}
	default:
		// Tables and dates: no key takes them. The text shows what was
		// written; marking it bad makes every parser refuse it.
		return raw{text: fmt.Sprint(v), bad: true}
	}
}
