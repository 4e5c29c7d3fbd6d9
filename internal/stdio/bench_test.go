package stdio

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// BenchmarkReadLine measures what ReadLine costs a message, screen
// included: a small answer, and a tools/call result of a large text.
func BenchmarkReadLine(b *testing.B) {
	for _, size := range []int{0, 64 << 10, 1 << 20, 4 << 20} {
		for _, content := range []string{"plain", "escaped"} {
			text := strings.Repeat("x", size)
			if content == "escaped" {
				text = strings.Repeat(`a\"\n\u00e9`, size/10)
			}
			line := `{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"` + text + `"}],"isError":false}}` + "\n"
			b.Run(fmt.Sprintf("content=%s/size=%d", content, len(line)), func(b *testing.B) {
				// A server sending the line again and again, over a pipe.
				pr, pw := io.Pipe()
				defer pr.Close()
				data := []byte(line)
				go func() {
					for {
						if _, err := pw.Write(data); err != nil {
							return
						}
					}
				}()
				lines := wire.New(wire.Options{MaxMessageBytes: 16 << 20}).Lines(pr)
				closed := make(chan struct{})
				b.SetBytes(int64(len(line)))
				b.ReportAllocs()
				for b.Loop() {
					msg, err := ReadLine(context.Background(), lines, closed, nil)
					if err != nil || len(msg.(*jsonrpc.Response).Result) < size {
						b.Fatal(msg, err)
					}
				}
			})
			if size == 0 {
				break
			}
		}
	}
}
