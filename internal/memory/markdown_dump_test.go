package memory

import (
	"fmt"
	"testing"
)

func TestDumpDoc(t *testing.T) {
	src := []byte("\xef\xbb\xbf---\nname: x\n---\n# H\r\n\r\n- a\r\n  cont\r\n- b\n  ```go\n  x\n  ```\n\n**Production**\n\n1. one\n2. two\n\n> quote yesterday\n> more\n\n```\n# no\n```\n\n    indented\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<!-- pin --> hello\n\ntext `code` [l](x.md) yesterday <!-- pin -->\n")
	d := ParseDoc(src)
	for _, u := range d.Units {
		fmt.Printf("%-10s %v p=%d o=%v n=%v %q\n", u.Kind, u.Path, u.Parent, u.Ordered, u.Nested, d.Text(u))
	}
	for _, p := range d.Prose {
		fmt.Printf("prose %q\n", src[p.Start:p.End])
	}
	fmt.Println(d.Links, d.CodeSpans, d.Comments, d.Pins)
}
