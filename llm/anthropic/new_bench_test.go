package anthropic

import "testing"

// BenchmarkNew is what building a provider costs a process that may never
// send a request (`dream maybe` with a closed gate and a key set): the SDK
// client is built on first use, not here.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(Options{APIKey: "k", Model: DefaultModel}); err != nil {
			b.Fatal(err)
		}
	}
}
