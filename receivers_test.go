package llm_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// TestEveryMethodOnNilAndClosed calls every exported method of Model and
// Session, found by reflection so that a method added later is covered,
// on a nil receiver and on a closed one, with zero arguments (a live
// context): none may panic; each error, returned or yielded by an
// iterator, must wrap ErrClosed on a nil receiver, and be a documented one
// on a closed receiver (its arguments may be refused first: no tokens, no
// texts, not a reranker).
func TestEveryMethodOnNilAndClosed(t *testing.T) {
	m := load(t, testutil.TempModel(t, testutil.TinyChat()), llm.WithThreads(1), llm.WithLogger(quietLogger()))
	s := session(t, m)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	closedModel := load(t, testutil.TempModel(t, testutil.TinyChat()), llm.WithThreads(1), llm.WithLogger(quietLogger()))
	live := session(t, closedModel)
	if err := closedModel.Close(); err != nil {
		t.Fatal(err)
	}
	for _, recv := range []struct {
		what  string
		v     any
		isNil bool
	}{
		{"nil model", (*llm.Model)(nil), true}, {"nil session", (*llm.Session)(nil), true},
		{"closed session", s, false}, {"session of a closed model", live, false}, {"closed model", closedModel, false},
	} {
		v := reflect.ValueOf(recv.v)
		for i := range v.NumMethod() {
			name := v.Type().Method(i).Name
			if name == "Close" && !recv.isNil {
				continue // closing again is allowed and returns nil: checked in TestMisuse
			}
			for _, err := range callZero(t, recv.what+"."+name, v.Method(i)) {
				if recv.isNil && !errors.Is(err, llm.ErrClosed) {
					t.Errorf("%s.%s: %v, want ErrClosed", recv.what, name, err)
				}
				checkDocumented(t, recv.what+"."+name, err)
			}
		}
	}
}

var (
	contextType = reflect.TypeFor[context.Context]()
	errorType   = reflect.TypeFor[error]()
)

// callZero calls fn with zero arguments (context.Background for a
// context) and returns the errors it returns, and those an iterator it
// returns yields; a panic fails the test.
func callZero(t *testing.T, what string, fn reflect.Value) (errs []error) {
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
		}
	}()
	ft := fn.Type()
	args := make([]reflect.Value, ft.NumIn())
	for i := range args {
		args[i] = reflect.Zero(ft.In(i))
		if ft.In(i) == contextType {
			args[i] = reflect.ValueOf(context.Background())
		}
	}
	var out []reflect.Value
	if ft.IsVariadic() {
		out = fn.CallSlice(args)
	} else {
		out = fn.Call(args)
	}
	for _, o := range out {
		switch {
		case o.Type() == errorType:
			if !o.IsNil() {
				errs = append(errs, o.Interface().(error))
			}
		case o.Kind() == reflect.Func && o.Type().NumIn() == 1 && o.Type().In(0).Kind() == reflect.Func:
			// An iter.Seq2[T, error]: range over it, keeping its errors.
			yield := o.Type().In(0)
			o.Call([]reflect.Value{reflect.MakeFunc(yield, func(in []reflect.Value) []reflect.Value {
				if e := in[len(in)-1]; e.Type() == errorType && !e.IsNil() {
					errs = append(errs, e.Interface().(error))
				}
				return []reflect.Value{reflect.ValueOf(true)}
			})})
		}
	}
	return errs
}
