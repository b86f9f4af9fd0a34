package definition

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/ductor/ductor/app/expr"
)

// Compiled is a document's manifest with its hash and canonical JSON.
type Compiled struct {
	Manifest *Manifest
	// Hash is the hex SHA-256 of JSON: the version's manifest_hash.
	Hash string
	// JSON is the manifest's RFC 8785 canonical JSON.
	JSON []byte
}

// Compiler compiles documents against a server's maxima. It is safe for
// concurrent use.
type Compiler struct {
	opts Options
	env  *expr.Env
}

// NewCompiler checks opts and builds the expression environment if opts
// has none.
func NewCompiler(opts Options) (*Compiler, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	env := opts.Env
	if env == nil {
		var err error
		if env, err = sharedEnv(); err != nil {
			return nil, err
		}
	}
	return &Compiler{opts: opts, env: env}, nil
}

var sharedEnv = sync.OnceValues(func() (*expr.Env, error) { return expr.NewEnv() })

// defaultCompiler keeps compiled expressions in a shared cache, so a
// document compiled again (an editor recompiling on every change, a
// republish) parses only the expressions that changed.
var defaultCompiler = sync.OnceValues(func() (*Compiler, error) {
	env, err := sharedEnv()
	if err != nil {
		return nil, err
	}
	opts := DefaultOptions()
	opts.Env, opts.Cache = env, expr.NewCache(env, 16384)
	return NewCompiler(opts)
})

// Compile compiles doc with [DefaultOptions]. See [Compiler.Compile].
func Compile(doc []byte, f Format) (*Compiled, error) {
	c, err := defaultCompiler()
	if err != nil {
		return nil, err
	}
	return c.Compile(doc, f)
}

// Compile parses a JSON or YAML document and compiles it. A document over
// [MaxDocumentBytes] fails with [ErrTooLarge]; an invalid one with an
// [*InvalidError] listing every problem found.
func (c *Compiler) Compile(doc []byte, f Format) (*Compiled, error) {
	tree, err := parse(doc, f)
	if err != nil {
		return nil, err
	}
	return c.compileTree(tree)
}

// CompileDefinition compiles a definition built in Go, exactly as its
// JSON would compile.
func (c *Compiler) CompileDefinition(d *Definition) (*Compiled, error) {
	doc, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("definition: marshal: %w", err)
	}
	return c.Compile(doc, FormatJSON)
}

func (c *Compiler) compileTree(tree any) (*Compiled, error) {
	ch := newChecker(c.opts)
	ch.document(tree)
	ch.compileExprs(c.env, c.opts.Cache)
	if err := ch.ps.err(); err != nil {
		return nil, err
	}
	m := ch.manifest()
	canon, err := CanonicalJSON(m)
	if err != nil {
		return nil, err
	}
	return &Compiled{Manifest: m, Hash: hashHex(canon), JSON: canon}, nil
}

// manifest returns the checked manifest with empty lists rather than nil.
func (c *checker) manifest() *Manifest {
	m := c.m
	if m.Edges == nil {
		m.Edges = []Edge{}
	}
	return &m
}

// Hash returns m's manifest hash: the hex SHA-256 of its canonical JSON.
func Hash(m *Manifest) (string, error) {
	canon, err := CanonicalJSON(m)
	if err != nil {
		return "", err
	}
	return hashHex(canon), nil
}

func hashHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
