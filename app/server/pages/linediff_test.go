package pages

import (
	"fmt"
	"strings"
	"testing"
)

func TestLineDiff(t *testing.T) {
	t.Parallel()
	rows := lineDiff("a\nb\nc\nd\n", "a\nx\nc\nd\ne\n")
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s %d:%s %d:%s", r.Kind, r.LeftNo, r.Left, r.RightNo, r.Right))
	}
	want := []string{"same 1:a 1:a", "change 2:b 2:x", "same 3:c 3:c", "same 4:d 4:d", "add 0: 5:e"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lineDiff =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if rows := lineDiff("", "a\n"); len(rows) != 1 || rows[0].Kind != "add" {
		t.Errorf("from nothing: %+v", rows)
	}
	if rows := lineDiff("a\nb\n", "b\n"); len(rows) != 2 || rows[0].Kind != "del" || rows[1].Kind != "same" {
		t.Errorf("a removed line: %+v", rows)
	}
}
