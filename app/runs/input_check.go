package runs

import (
	"errors"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
)

// checkInput checks what a schedule or an event trigger starts a run
// with against the version's input_schema when the run starts, since the
// definition may have been republished with another schema since the
// schedule was made. Each manifest's schema is compiled once. An input
// that does not fit is Unprocessable, naming where, as the API says it.
func (c *deps) checkInput(v store.DefinitionVersion, input any) error {
	if len(v.Manifest.InputSchema) == 0 {
		return nil
	}
	val, err := c.inputValidator(v)
	if err != nil {
		return err
	}
	var ie *definition.InputError
	if err := val.Validate(input); errors.As(err, &ie) {
		return apperr.New(apperr.Unprocessable, "input does not match the definition's input_schema: %s", ie.Error()).WithDetails(ie.Problems)
	} else if err != nil {
		return err
	}
	return nil
}

func (c *deps) inputValidator(v store.DefinitionVersion) (*definition.InputValidator, error) {
	if val, ok := c.schemas.Load(v.ManifestHash); ok {
		return val.(*definition.InputValidator), nil
	}
	val, err := definition.NewInputValidator(v.Manifest)
	if err != nil {
		return nil, apperr.New(apperr.Unprocessable, "the input_schema of %s v%d does not compile: %v", v.Key, v.Version, err)
	}
	c.schemas.Store(v.ManifestHash, val)
	return val, nil
}
