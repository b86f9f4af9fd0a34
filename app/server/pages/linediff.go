package pages

import (
	"strings"

	"github.com/ductor/ductor/views"
)

// maxDiffCells bounds the LCS table; past it the differing middle of the
// two texts is shown as removed then added.
const maxDiffCells = 4_000_000

// lineDiff compares two texts line by line (longest common subsequence
// after trimming the common start and end) into side-by-side rows.
func lineDiff(a, b string) []views.DiffRow {
	x, y := splitLines(a), splitLines(b)
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	var rows []views.DiffRow
	for i := 0; i < pre; i++ {
		rows = append(rows, views.DiffRow{Kind: "same", Left: x[i], Right: y[i], LeftNo: i + 1, RightNo: i + 1})
	}
	rows = append(rows, middleDiff(x[pre:len(x)-suf], y[pre:len(y)-suf], pre)...)
	for i := suf; i > 0; i-- {
		l, r := len(x)-i, len(y)-i
		rows = append(rows, views.DiffRow{Kind: "same", Left: x[l], Right: y[r], LeftNo: l + 1, RightNo: r + 1})
	}
	return rows
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// middleDiff diffs the differing middles; off is their first line's index.
func middleDiff(x, y []string, off int) []views.DiffRow {
	if len(x)*len(y) > maxDiffCells {
		return pairUp(x, y, off, off)
	}
	lcs := make([][]int32, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var rows []views.DiffRow
	i, j, di, dj := 0, 0, 0, 0 // [di:i] and [dj:j] are pending removals and additions
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			rows = append(rows, pairUp(x[di:i], y[dj:j], off+di, off+dj)...)
			rows = append(rows, views.DiffRow{Kind: "same", Left: x[i], Right: y[j], LeftNo: off + i + 1, RightNo: off + j + 1})
			i, j = i+1, j+1
			di, dj = i, j
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			j++
		default:
			i++
		}
	}
	return append(rows, pairUp(x[di:], y[dj:], off+di, off+dj)...)
}

// pairUp shows removed lines beside added ones, as changes.
func pairUp(del, add []string, li, ri int) []views.DiffRow {
	rows := make([]views.DiffRow, 0, max(len(del), len(add)))
	for k := 0; k < max(len(del), len(add)); k++ {
		r := views.DiffRow{Kind: "change"}
		if k < len(del) {
			r.Left, r.LeftNo = del[k], li+k+1
		} else {
			r.Kind = "add"
		}
		if k < len(add) {
			r.Right, r.RightNo = add[k], ri+k+1
		} else {
			r.Kind = "del"
		}
		rows = append(rows, r)
	}
	return rows
}
