package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/lowmem/llm"
)

// loraFlag is one adapter asked for by -lora or -lora-scaled.
type loraFlag struct {
	path  string
	scale float32
}

// LoRAFlags are llama.cpp's adapter flags: -lora FNAME[,FNAME…] (scale 1)
// and -lora-scaled FNAME:SCALE[,…], both repeatable; the older
// two-argument -lora-scaled FNAME SCALE is taken too (LoRAArgs).
type LoRAFlags struct {
	list []loraFlag
}

// Register adds the flags to fs.
func (m *LoRAFlags) Register(fs *flag.FlagSet) {
	fs.Func("lora", "LoRA adapter GGUF file at scale 1 (repeatable; comma-separated files)", func(v string) error {
		for _, p := range strings.Split(v, ",") {
			m.list = append(m.list, loraFlag{p, 1})
		}
		return nil
	})
	fs.Func("lora-scaled", "LoRA adapter with a scale: FNAME:SCALE (repeatable; comma-separated; also FNAME SCALE as two arguments)", func(v string) error {
		for _, item := range strings.Split(v, ",") {
			i := strings.LastIndexByte(item, ':')
			if i < 0 {
				return fmt.Errorf("%q: want FNAME:SCALE", item)
			}
			s, err := strconv.ParseFloat(item[i+1:], 32)
			if err != nil {
				return fmt.Errorf("%q: scale: %w", item, err)
			}
			m.list = append(m.list, loraFlag{item[:i], float32(s)})
		}
		return nil
	})
}

// Options are the adapters' Load options, in the flags' order.
func (m *LoRAFlags) Options() []llm.Option {
	var opts []llm.Option
	for _, l := range m.list {
		opts = append(opts, llm.WithLoRA(l.path, l.scale))
	}
	return opts
}

// LoRAArgs rewrites llama.cpp's older two-argument form, -lora-scaled
// FNAME SCALE, into -lora-scaled=FNAME:SCALE, which the flag package
// parses; the newer one-argument form is left as it is.
func LoRAArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if (a == "-lora-scaled" || a == "--lora-scaled") && i+2 < len(args) {
			if _, err := strconv.ParseFloat(args[i+2], 32); err == nil {
				out = append(out, a+"="+args[i+1]+":"+args[i+2])
				i += 2
				continue
			}
		}
		if a == "--" {
			return append(out, args[i:]...)
		}
		out = append(out, a)
	}
	return out
}
