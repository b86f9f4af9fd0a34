package expr

import (
	"fmt"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
)

// Variable names every expression may read.
const (
	VarInput = "input"
	VarSteps = "steps"
	VarRun   = "run"
	VarNow   = "now"
	VarItem  = "item"
	VarIndex = "index"
	VarKey   = "key"
	VarEvent = "event"
)

// Default limits; see the Option functions.
const (
	DefaultCostLimit            = 1_000_000
	DefaultMaxLength            = 16 << 10
	DefaultMaxNesting           = 100
	DefaultComprehensionNesting = 3
	DefaultInterruptEvery       = 100
	DefaultTimeLimit            = time.Second
	defaultMaxListRange         = 10_000
)

// Env is the CEL environment every Ductor expression compiles against. It
// is immutable once built and safe for concurrent use.
type Env struct {
	cel    *cel.Env
	conf   config
	guards *guards
}

type config struct {
	costLimit            uint64
	maxLength            int
	maxNesting           int
	comprehensionNesting int
	interruptEvery       uint
	timeLimit            time.Duration
}

// Option tunes an [Env]'s limits.
type Option func(*config)

// WithCostLimit bounds the evaluation cost of one expression: one unit per
// evaluated node (a field access, a call, a literal list or map), one per
// element of every list or map it builds, one per 16 bytes of string
// built, and the whole size of every value read from a variable. The
// default stops a runaway expression within about 100 ms of
// CPU and a few tens of megabytes of allocation; an expression whose
// statically estimated cost is certain to exceed it does not compile.
func WithCostLimit(n uint64) Option { return func(c *config) { c.costLimit = n } }

// WithMaxLength bounds an expression's length in code points.
func WithMaxLength(n int) Option { return func(c *config) { c.maxLength = n } }

// WithMaxNesting bounds the syntactic nesting depth of an expression.
func WithMaxNesting(n int) Option { return func(c *config) { c.maxNesting = n } }

// WithComprehensionNesting bounds how deeply macros like all, exists, map
// and filter may nest.
func WithComprehensionNesting(n int) Option {
	return func(c *config) { c.comprehensionNesting = n }
}

// WithTimeLimit bounds how long one evaluation may run; past it the
// evaluation stops with [ErrTimeLimit]. It is a backstop behind the cost
// limit, which normally stops an expression first, whatever the load.
func WithTimeLimit(d time.Duration) Option { return func(c *config) { c.timeLimit = d } }

// WithInterruptEvery sets how many cost units are spent between checks of
// the evaluation context.
func WithInterruptEvery(n uint) Option { return func(c *config) { c.interruptEvery = n } }

// NewEnv builds the environment. Without options it uses the Default
// limits.
func NewEnv(opts ...Option) (*Env, error) {
	conf := config{
		costLimit:            DefaultCostLimit,
		maxLength:            DefaultMaxLength,
		maxNesting:           DefaultMaxNesting,
		comprehensionNesting: DefaultComprehensionNesting,
		interruptEvery:       DefaultInterruptEvery,
		timeLimit:            DefaultTimeLimit,
	}
	for _, o := range opts {
		o(&conf)
	}
	if err := conf.validate(); err != nil {
		return nil, err
	}
	env, err := cel.NewCustomEnv(envOptions(conf)...)
	if err != nil {
		return nil, fmt.Errorf("expr: build CEL environment: %w", err)
	}
	g, err := newGuards(env)
	if err != nil {
		return nil, err
	}
	return &Env{cel: env, conf: conf, guards: g}, nil
}

func (c config) validate() error {
	if c.costLimit == 0 || c.maxLength <= 0 || c.maxNesting <= 0 ||
		c.comprehensionNesting <= 0 || c.interruptEvery == 0 || c.timeLimit <= 0 {
		return fmt.Errorf("expr: limits must be positive: %+v", c)
	}
	return nil
}

func envOptions(c config) []cel.EnvOption {
	return append(append(append(scopedOptions(), secretOptions()...),
		standardWithoutMixed(),
		cel.Variable(VarInput, cel.DynType),
		cel.Variable(VarSteps, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(VarRun, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(VarNow, cel.TimestampType),
		cel.Variable(VarItem, cel.DynType),
		cel.Variable(VarIndex, cel.IntType),
		cel.Variable(VarKey, cel.StringType),
		cel.Variable(VarEvent, cel.DynType),
		cel.CustomTypeAdapter(jsonAdapter{}),
		cel.CrossTypeNumericComparisons(true),
		cel.DefaultUTCTimeZone(true),
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Math(),
		ext.Lists(ext.ListsMaxRangeSize(defaultMaxListRange)),
		ext.Sets(),
		ext.Encoders(),
		cel.ParserExpressionSizeLimit(c.maxLength),
		cel.ParserRecursionLimit(c.maxNesting),
		cel.ASTValidators(
			cel.ValidateComprehensionNestingLimit(c.comprehensionNesting),
			cel.ValidateDurationLiterals(),
			cel.ValidateTimestampLiterals(),
			cel.ValidateRegexLiterals(),
		),
	), numericOperators()...)
}
