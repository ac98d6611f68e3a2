package nanobot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var calibrate = flag.Bool("calibrate", false, "fit the estimator's coefficients on the project's memory files and print them")

// calibrationCorpus is the project's memory files (Markdown), split into
// paragraphs: what the estimator is fitted on.
func calibrationCorpus(t *testing.T) []string {
	var files []string
	for _, pat := range []string{"../../testdata/eval/*/memory/*.md", "../../testdata/eval/*/memory/*/*.md", "../demo/testdata/example/memory/*.md"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range strings.Split(string(data), "\n\n") {
			if strings.TrimSpace(p) != "" {
				out = append(out, p)
			}
		}
	}
	if len(out) < 50 {
		t.Fatalf("calibration corpus too small: %d paragraphs", len(out))
	}
	return out
}

// transcriptCorpus is every transcript the project ships (the eval
// scenarios', the demo's, and this package's nanobot sessions): per line,
// the string values joined by newlines, which is what a message's token
// count covers.
func transcriptCorpus(t *testing.T) []string {
	var files []string
	for _, pat := range []string{"../../testdata/eval/*/sessions/*.jsonl", "../demo/testdata/example/sessions/*.jsonl", "testdata/*.jsonl"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var v any
			if json.Unmarshal(sc.Bytes(), &v) != nil {
				continue
			}
			var parts []string
			collectStrings(v, &parts)
			if s := strings.Join(parts, "\n"); strings.TrimSpace(s) != "" {
				out = append(out, s)
			}
		}
	}
	if len(out) < 30 {
		t.Fatalf("transcript corpus too small: %d messages", len(out))
	}
	return out
}

func collectStrings(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			collectStrings(e, out)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			collectStrings(x[k], out)
		}
	}
}

// TestCalibrateEstimator fits the coefficients by least squares
// (go test -run CalibrateEstimator -calibrate -v ./internal/nanobot/).
func TestCalibrateEstimator(t *testing.T) {
	if !*calibrate {
		t.Skip("run with -calibrate to refit DefaultEstimator")
	}
	tk, err := NewTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	var a [numFeatures][numFeatures]float64
	var b [numFeatures]float64
	for _, s := range calibrationCorpus(t) {
		c := features(s)
		y := float64(tk.Count(s))
		for i := range numFeatures {
			for j := range numFeatures {
				a[i][j] += c[i] * c[j]
			}
			b[i] += c[i] * y
		}
	}
	for i := range numFeatures {
		a[i][i] += 1e-6 // classes absent from the corpus stay solvable
	}
	x := solve(a, b)
	t.Logf("DefaultEstimator = Estimator{Coef: [numFeatures]float64{%.4f, %.4f, %.4f, %.4f, %.4f, %.4f, %.4f}}", x[0], x[1], x[2], x[3], x[4], x[5], x[6])
}

func solve(a [numFeatures][numFeatures]float64, b [numFeatures]float64) [numFeatures]float64 {
	n := numFeatures
	for col := range n {
		p := col
		for r := col + 1; r < n; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[p][col]) {
				p = r
			}
		}
		a[col], a[p] = a[p], a[col]
		b[col], b[p] = b[p], b[col]
		for r := col + 1; r < n; r++ {
			f := a[r][col] / a[col][col]
			for c := col; c < n; c++ {
				a[r][c] -= f * a[col][c]
			}
			b[r] -= f * b[col]
		}
	}
	var x [numFeatures]float64
	for r := n - 1; r >= 0; r-- {
		s := b[r]
		for c := r + 1; c < n; c++ {
			s -= a[r][c] * x[c]
		}
		x[r] = s / a[r][r]
	}
	return x
}

// TestEstimatorErrorOnProjectTranscripts measures the fallback against the
// real tokenizer on transcripts it was not fitted on, and nanobot's own
// byte fallback beside it. The bound catches a regression; the figures are
// in the log (go test -run EstimatorError -v ./internal/nanobot/).
func TestEstimatorErrorOnProjectTranscripts(t *testing.T) {
	tk, err := NewTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	corpus := transcriptCorpus(t)
	type stats struct {
		sumAbs, sumRel, worst float64
		total                 float64
	}
	measure := func(count func(string) int) stats {
		var s stats
		var real, est float64
		var rels []float64
		for _, text := range corpus {
			r, e := float64(tk.Count(text)), float64(count(text))
			real += r
			est += e
			rel := math.Abs(e-r) / r
			rels = append(rels, rel)
			s.sumRel += rel
			s.worst = math.Max(s.worst, rel)
		}
		sort.Float64s(rels)
		s.sumAbs = rels[len(rels)*95/100]
		s.sumRel /= float64(len(corpus))
		s.total = (est - real) / real
		return s
	}
	ours := measure(DefaultEstimator.Count)
	bytesFallback := measure(func(s string) int { return len(s) })
	report := func(name string, s stats) string {
		return fmt.Sprintf("%s: mean |error| %.1f%%, p95 %.1f%%, worst %.1f%%, total %+.1f%%", name, 100*s.sumRel, 100*s.sumAbs, 100*s.worst, 100*s.total)
	}
	t.Logf("%d transcript messages vs tiktoken cl100k_base", len(corpus))
	t.Log(report("calibrated estimator", ours))
	t.Log(report("nanobot's byte fallback", bytesFallback))
	if ours.sumRel > 0.25 || math.Abs(ours.total) > 0.15 {
		t.Errorf("the estimator drifted: %s", report("calibrated estimator", ours))
	}
}

func TestTokenizerKnownCounts(t *testing.T) {
	tk, err := NewTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	// cl100k_base counts, as Python's tiktoken gives them.
	for _, tc := range []struct {
		text string
		want int
	}{{"hello world", 2}, {"", 0}, {"tiktoken is great!", 6}} {
		if got := tk.Count(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}
