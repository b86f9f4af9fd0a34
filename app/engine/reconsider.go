package engine

import "github.com/ductor/ductor/app/definition"

// Reconsider asks Decide to apply the join of pending nodes again, as it
// does when an edge into one of them resolves. An upgrade delivers it
// (app/upgrade's Result.Reconsider) for the steps it added, or gave new
// incoming edges, whose predecessors had already finished on the old
// version: no edge into them will resolve again, so without it they would
// stay pending for ever. Each node named that is still pending has the
// edges into it that are not resolved yet, from a node that has ended,
// resolved as that node's end resolved its own (a choice edge from a node
// that succeeded is left alone: which branch it chose is not kept), and
// its join applied: it starts, is skipped, or waits on. A node that is
// not pending is left as it is (a discard says so). With no node named
// it is still an input: the tick decides, and the run settles on the
// manifest it is on now (a run whose last waiting node an upgrade
// cancelled ends).
type Reconsider struct {
	RequestID string   `json:"request_id"`
	Nodes     []string `json:"nodes"`
}

func (Reconsider) inputKind() string { return "reconsider" }

func (d *decider) reconsider(r Reconsider) {
	for _, ref := range r.Nodes {
		n := d.get(ref)
		switch {
		case n == nil || n.Child != nil || d.g.steps[ref] == nil:
			d.discardWith(Discard{Input: describeInput(r), Node: ref, Reason: "unknown node"})
			continue
		case n.State != NodePending:
			d.discardWith(Discard{Input: describeInput(r), Node: ref, Reason: "node is " + string(n.State)})
			continue
		}
		for _, e := range d.g.in[ref] {
			if _, ok := n.Inbound[EdgeID(e)]; ok {
				continue
			}
			src := d.get(e.From)
			if src == nil || !src.State.Terminal() {
				continue
			}
			fire := false
			ran := ranToEnd(src)
			switch {
			case e.On == definition.OutcomeDone:
				fire = ran
			case e.Choice != nil && ran && src.Outcome == definition.OutcomeSuccess:
				continue // the branch it chose is not kept
			case e.Choice != nil:
			default:
				fire = ran && outcomeOf(e) == src.Outcome
			}
			n = d.mut(ref)
			if n.Inbound == nil {
				n.Inbound = map[string]EdgeMark{}
			}
			n.Inbound[EdgeID(e)] = map[bool]EdgeMark{true: EdgeFired, false: EdgeDead}[fire]
		}
		d.consider(ref)
	}
}
