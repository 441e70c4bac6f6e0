package cli

import (
	"flag"
	"fmt"
	"os"

	"github.com/lowmem/llm"
)

// JSONFlags are the flags that ask for JSON output: -json (any object) and
// -json-schema FILE (an object the schema in FILE allows).
type JSONFlags struct {
	JSON       bool
	SchemaFile string
}

// Register adds -json and -json-schema to fs.
func (f *JSONFlags) Register(fs *flag.FlagSet) {
	fs.BoolVar(&f.JSON, "json", false, "answer with one JSON object (llm.WithJSON)")
	fs.StringVar(&f.SchemaFile, "json-schema", "", "a file holding a JSON schema the output must satisfy (llm.WithJSONSchema)")
}

// Options are the generation options the flags ask for: none, WithJSON or
// WithJSONSchema with the file's schema.
func (f *JSONFlags) Options() ([]llm.GenerateOption, error) {
	switch {
	case f.SchemaFile != "":
		schema, err := os.ReadFile(f.SchemaFile)
		if err != nil {
			return nil, fmt.Errorf("-json-schema: %w", err)
		}
		return []llm.GenerateOption{llm.WithJSONSchema(schema)}, nil
	case f.JSON:
		return []llm.GenerateOption{llm.WithJSON()}, nil
	}
	return nil, nil
}
