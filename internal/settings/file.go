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
// sorted names of keys it does not know. A missing file returns an error
// satisfying errors.Is(err, fs.ErrNotExist); a malformed one an error naming
// the file and line.
func readFile(path string) (map[string]raw, []string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read config file: %w", err)
	}
	if info.IsDir() {
		return nil, nil, fmt.Errorf("read config file %s: is a directory", path)
	}
	if info.Size() > maxFileSize {
		return nil, nil, fmt.Errorf("read config file %s: larger than %d bytes", path, maxFileSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read config file: %w", err)
	}
	return parseFile(path, string(data))
}

// parseFile is readFile after the I/O, separate so that it can be fuzzed.
func parseFile(path, data string) (map[string]raw, []string, error) {
	var doc map[string]any
	if _, err := toml.Decode(data, &doc); err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return nil, nil, fmt.Errorf("config file %s:%d: %s", path, perr.Position.Line, perr.Message)
		}
		return nil, nil, fmt.Errorf("config file %s: %w", path, err)
	}
	values := make(map[string]raw, len(doc))
	var unknown []string
	for name, v := range doc {
		if _, ok := lookup(name); !ok || strings.Contains(name, "-") {
			unknown = append(unknown, name)
			continue
		}
		values[name] = rawFromTOML(v)
	}
	sort.Strings(unknown)
	return values, unknown, nil
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
	default:
		// Tables and dates: no key takes them. The text shows what was
		// written; marking it bad makes every parser refuse it.
		return raw{text: fmt.Sprint(v), bad: true}
	}
}
