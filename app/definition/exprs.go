package definition

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ductor/ductor/app/expr"
)

// exprJob is one expression found in the document.
type exprJob struct {
	src  string
	kind expr.Kind
	p    path
	step string
	seq  int // problems found before it, to report its own in place
	// scope lists the scoped variables (expr.ProgressVars, LoopVars) the
	// field provides; the others are refused.
	scope []string
	// secrets is whether the field may reference tenant secrets.
	secrets bool
}

type exprKey struct {
	src  string
	kind expr.Kind
}

func (c *checker) queueExpr(src string, kind expr.Kind, p path, step string) {
	c.exprs = append(c.exprs, exprJob{src: src, kind: kind, p: p, step: step, seq: len(c.ps.list)})
}

// minPerWorker keeps small definitions on one goroutine.
const minPerWorker = 32

// compileExprs compiles each distinct expression once, spread over the
// available cores, and slots every failure into the problem list where
// the expression appeared.
func (c *checker) compileExprs(env *expr.Env, cache *expr.Cache) {
	keys, slot := distinct(c.exprs)
	errs := make([]error, len(keys))
	prgs := make([]*expr.Program, len(keys))
	compile := func(i int) {
		if cache != nil {
			prgs[i], errs[i] = cache.Get(keys[i].src, keys[i].kind)
		} else {
			prgs[i], errs[i] = env.Compile(keys[i].src, keys[i].kind)
		}
	}
	parallel(len(keys), compile)
	c.mergeExprProblems(func(j int) error {
		if errs[slot[j]] != nil {
			return errs[slot[j]]
		}
		if err := scopeError(prgs[slot[j]], c.exprs[j].scope); err != nil {
			return err
		}
		return secretError(prgs[slot[j]], c.exprs[j].secrets)
	})
}

func distinct(jobs []exprJob) ([]exprKey, []int) {
	index := make(map[exprKey]int, len(jobs))
	keys := make([]exprKey, 0, len(jobs))
	slot := make([]int, len(jobs))
	for j, job := range jobs {
		k := exprKey{src: job.src, kind: job.kind}
		i, ok := index[k]
		if !ok {
			i = len(keys)
			index[k] = i
			keys = append(keys, k)
		}
		slot[j] = i
	}
	return keys, slot
}

// parallel runs f(0..n-1) on up to GOMAXPROCS goroutines.
func parallel(n int, f func(int)) {
	workers := min(runtime.GOMAXPROCS(0), n/minPerWorker+1)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}

func (c *checker) mergeExprProblems(errOf func(int) error) {
	var merged []Problem
	done := 0
	for j, job := range c.exprs {
		err := errOf(j)
		if err == nil {
			continue
		}
		merged = append(merged, c.ps.list[done:job.seq]...)
		done = job.seq
		merged = append(merged, Problem{Path: string(job.p), Step: job.step, Message: exprMessage(err)})
	}
	if merged != nil {
		c.ps.list = append(merged, c.ps.list[done:]...)
	}
}

func exprMessage(err error) string {
	var e *expr.Error
	if errors.As(err, &e) {
		return "invalid expression: " + e.Message
	}
	return err.Error()
}

// secretError refuses secret() in a field that sends no secret, and a
// reference whose name is not written out or is not a secret's name.
func secretError(p *expr.Program, allowed bool) error {
	if p == nil {
		return nil
	}
	names, problem := p.Secrets()
	switch {
	case len(names) == 0 && problem == "":
		return nil
	case !allowed:
		return errors.New(`secret() is only valid in an http step's url_expr, headers_expr and body_expr: a secret's value never reaches an ordinary value`)
	case problem != "":
		return errors.New(problem)
	}
	return nil
}
