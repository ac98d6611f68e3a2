package settings

import "fmt"

// FlagValueError is a bad value given on the command line, returned by Load
// under Inputs.StrictFlags. Flag is the flag's name without dashes.
type FlagValueError struct {
	Flag, Value string
	Err         error
}

func (e *FlagValueError) Error() string {
	return fmt.Sprintf("--%s %q: %v", e.Flag, e.Value, e.Err)
}

func (e *FlagValueError) Unwrap() error { return e.Err }

// strictValue checks text as a value of key s the way a layer applies it,
// on a scratch copy of the defaults, so that nothing is set twice.
func strictValue(s spec, text, home string) error {
	var scratch Settings
	err := s.apply(&scratch, raw{text: text}, home)
	if err == nil {
		err = checkRange(s.Name, &scratch)
	}
	if err != nil {
		return &FlagValueError{Flag: FlagName(s.Name), Value: text, Err: err}
	}
	return nil
}
