package wire

import (
	"fmt"
	"testing"
)

// BenchmarkScan measures the scanner alone.
func BenchmarkScan(b *testing.B) {
	for _, content := range []string{"escaped", "plain"} {
		msg := bigAnswer(content, 16<<20)
		b.Run(fmt.Sprintf("content=%s/size=16MiB", content), func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				var rec record
				var sc scanner
				sc.init(&rec, 0)
				sc.feed(msg)
				sc.finish()
			}
		})
	}
}
